"""Which code path upstream's MKL (its LAPACK: getrf) takes on this machine: with or without
fused multiply-adds.

MKL picks its kernels from the CPU when it loads, independently of ATen's capability, and its
``MKL_CBWR`` switch (conditional numerical reproducibility) pins a branch. The branches round
differently: LU's trailing update ``a - l * u`` is one fused multiply-add in the AVX2 and AVX-512
branches and a product then a difference in the others, so an exactly singular float32 matrix
has an exact zero pivot on one path and a residue of 6e-10 on the other. Measured with
upstream's ``torch.linalg.lu_factor_ex`` (tests/differential/test_lu_factor_rounding.py):

* ``MKL_CBWR`` = COMPATIBLE, SSE4_2 or AVX: no fused update (on an Intel Xeon with AVX-512);
  AVX2, AVX512 or AUTO there: fused;
* unset, an Intel Xeon with AVX-512 (and FMA): fused; an AMD EPYC with AVX-512: not fused;
* an AMD EPYC with AVX2 and FMA (no AVX-512): not fused, unset and under every ``MKL_CBWR``
  (COMPATIBLE, SSE4_2, AVX, AVX2, AVX2,STRICT, AVX512, AUTO) and ``MKL_ENABLE_INSTRUCTIONS``
  (SSE4_2, AVX, AVX2, AVX512) value: MKL's fused branches are its own vendor's, and a pin does
  not take them on another's CPU.

``MKL_ENABLE_INSTRUCTIONS`` caps the branch as ``MKL_CBWR`` pins it. Decided once per process.
"""

from __future__ import annotations

import os

from .cpu_capability import FLAGS, cpuinfo

# MKL_CBWR's branch names whose kernels fuse a * b + c (the AVX2 and AVX-512 families)
_FUSED_BRANCHES = ("AVX2", "AVX512")
_UNFUSED_BRANCHES = ("COMPATIBLE", "SSE2", "SSE3", "SSSE3", "SSE4_1", "SSE4_2", "AVX")


def _branch(value: str | None) -> bool | None:
    """True/False for a branch name that fixes the answer, None for AUTO, unset or unknown."""
    name = (value or "").split(",")[0].strip().upper()
    if name.startswith(_FUSED_BRANCHES):
        return True
    if name in _UNFUSED_BRANCHES:
        return False
    return None


def compute(cbwr: str | None, enable: str | None, vendor: str, flags: frozenset) -> bool:
    """Whether MKL's getrf fuses its update, given ``MKL_CBWR``, ``MKL_ENABLE_INSTRUCTIONS``,
    the CPU's vendor and flags."""
    if not {"avx2", "fma"} <= flags:
        return False          # no fused multiply-add instruction to take
    if vendor != "GenuineIntel":
        return False          # no pin reaches the fused branches on another vendor's CPU
    if _branch(enable) is False:
        return False
    pinned = _branch(cbwr)
    return True if pinned is None else pinned


def on_this_cpu(cbwr: str | None, enable: str | None) -> bool:
    """``compute`` for this machine's CPU, under these two switches' values."""
    return compute(cbwr, enable, cpuinfo("vendor_id") or "", FLAGS)


FUSED = on_this_cpu(os.environ.get("MKL_CBWR"), os.environ.get("MKL_ENABLE_INSTRUCTIONS"))
