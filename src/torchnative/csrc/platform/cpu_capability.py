"""ATen's CPU capability: which build of upstream's vectorized kernels a process runs.

Upstream compiles each kernel under ``aten/src/ATen/native/cpu`` once per capability (DEFAULT,
AVX2, AVX512 on x86-64; DEFAULT, SVE256 on arm64) and picks one per process
(``compute_cpu_capability`` in DispatchStub.cpp). The choice changes results in the last bits:
vector width (what is summed in which order, which elements take the scalar tail), SLEEF versus
libm transcendentals, and whether ``a * b + c`` is contracted into a fused multiply-add (the
DEFAULT build targets baseline x86-64, which has no FMA instruction). Kernels that reproduce
upstream bit for bit therefore ask this module which capability to reproduce, chosen the way
upstream chooses it:

* ``ATEN_CPU_CAPABILITY`` set to ``avx512``, ``avx2`` or ``default`` (x86-64; ``sve256`` and
  ``default`` on arm64) wins, without checking the CPU (as upstream; there the wrong choice
  crashes, here it only selects numerics). Any other value warns and is ignored.
* otherwise x86-64: AVX512 with avx512vl, avx512bw, avx512dq and fma; AVX2 with avx2 and fma;
  arm64: SVE256 with 256-bit SVE vectors and bf16; else DEFAULT.

Decided once per process, like upstream's function-local static.
"""

from __future__ import annotations

import os
import platform

from .torch_warn import torch_warn

DEFAULT, AVX2, AVX512, SVE256 = "DEFAULT", "AVX2", "AVX512", "SVE256"

_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
_ARM = platform.machine().lower() in ("aarch64", "arm64")
_BY_ENV = {"avx512": AVX512, "avx2": AVX2, "default": DEFAULT} if _X86 else \
    {"sve256": SVE256, "default": DEFAULT} if _ARM else {"default": DEFAULT}


def cpuinfo(*keys: str) -> str | None:
    """The first of ``keys``' values in /proc/cpuinfo (the first CPU's), None when absent."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in keys:
                    return value.strip()
    except OSError:
        pass
    return None


def cpu_flags() -> frozenset:
    """The CPU's feature flags as the kernel reports them (x86 "flags", arm "Features")."""
    return frozenset((cpuinfo("flags", "Features") or "").split())


def _sve_bits() -> int:
    try:
        with open("/proc/sys/abi/sve_default_vector_length") as f:
            return 8 * int(f.read().strip())
    except (OSError, ValueError):
        return 0


def detect(flags: frozenset) -> str:
    """What upstream picks on a CPU with these flags when nothing overrides it."""
    if _X86:
        if {"avx512vl", "avx512bw", "avx512dq", "fma"} <= flags:
            return AVX512
        if {"avx2", "fma"} <= flags:
            return AVX2
    if _ARM and "sve" in flags and "bf16" in flags and _sve_bits() == 256:
        return SVE256
    return DEFAULT


def compute(env: str | None, flags: frozenset) -> str:
    if env is not None:
        if env in _BY_ENV:
            return _BY_ENV[env]
        torch_warn(f"ignoring invalid value for ATEN_CPU_CAPABILITY: {env}")
    return detect(flags)


FLAGS = cpu_flags()
CAPABILITY = compute(os.environ.get("ATEN_CPU_CAPABILITY"), FLAGS)

# Width of upstream's Vectorized<T> in bytes: 64 with AVX512, 32 otherwise (the DEFAULT build's
# generic Vectorized is an array of the same 32 bytes, computed element by element).
VEC_BYTES = 64 if CAPABILITY == AVX512 else 32
# Whether upstream's kernels contract a * b + c into one rounding. The DEFAULT build is compiled
# for baseline x86-64 (no FMA instruction); arm64 always has fused multiply-add and GCC contracts.
CONTRACTS_FMA = CAPABILITY != DEFAULT or _ARM
# Whether the vectorized kernels use SLEEF and ATen's polynomial approximations (AVX2, AVX512,
# SVE) or the generic Vectorized's element-wise libm calls (DEFAULT).
SIMD_MATH = CAPABILITY != DEFAULT
# oneDNN picks its own ISA from the CPU (not ATen's capability), capped by its own switch
# ONEDNN_MAX_CPU_ISA: its AVX512 gelu for float32, and bfloat16/float16 eltwise work only where
# the CPU computes them natively.
_ONEDNN_CAP = {"SSE41": 0, "AVX": 1, "AVX2": 2, "AVX2_VNNI": 2, "AVX2_VNNI_2": 2}
_onednn_max = _ONEDNN_CAP.get(os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper(), 3)
ONEDNN_AVX512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= FLAGS and _onednn_max >= 3
ONEDNN_AVX2 = {"avx2", "fma"} <= FLAGS and _onednn_max >= 2
ONEDNN_SSE41 = "sse4_1" in FLAGS
ONEDNN_BF16 = ONEDNN_AVX512
ONEDNN_FP16 = bool({"avx512_fp16", "amx_fp16"} & FLAGS) and _onednn_max >= 3

