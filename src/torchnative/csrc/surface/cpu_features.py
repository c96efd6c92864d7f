"""The CPU description upstream reads from the cpuinfo library (``torch._C._cpu._get_cpu_capability``,
behind ``torch.cpu.get_capabilities()``), read here from what Linux reports.

Only x86-64 Linux is described: the feature flags come from ``/proc/cpuinfo``, the cache sizes
from ``/sys/devices/system/cpu/cpu0/cache``. Elsewhere the function refuses by name rather than
answer with a guess (upstream's arm64 build reports another set of keys).
"""

from __future__ import annotations

import os
import re

from ..core.refuse import TorchnativeNotImplementedError
from ..platform import cpu_capability, cpuid_leaves

# cpuinfo's key -> the Linux flag that says the same (cpuinfo checks CPUID; the kernel names the
# bit). The keys of CPUID leaf 7 sub-leaf 1's EDX are read from that word where the C library
# hands it out (``_LEAF_7_1``); the flag names stand in for them elsewhere.
_FLAGS = {
    "clflush": "clflush", "sha": "sha_ni", "aes": "aes", "lzcnt": "abm", "bmi2": "bmi2",
    "bmi": "bmi1", "fma3": "fma", "amx_fp16": "amx_fp16", "amx_tile": "amx_tile",
    "avx_vnni_int16": "avx_vnni_int16", "clflushopt": "clflushopt",
    "avx_vnni_int8": "avx_vnni_int8", "fma4": "fma4", "avx10_2": "avx10_2",
    "avx512_4vnniw": "avx512_4vnniw", "avx512_vp2intersect": "avx512_vp2intersect",
    "avx512_fp16": "avx512_fp16", "avx10_1": "avx10_1", "sse4_2": "sse4_2",
    "avx512_4fmaps": "avx512_4fmaps", "sse": "sse", "avx_ne_convert": "avx_ne_convert",
    "amx_int8": "amx_int8", "amx_bf16": "amx_bf16", "avx512_bw": "avx512bw", "sse2": "sse2",
    "f16c": "f16c", "sse3": "pni", "avx2": "avx2", "avx512_bf16": "avx512_bf16",
    "sse4_1": "sse4_1", "clwb": "clwb", "avx512_cd": "avx512cd", "sse4a": "sse4a",
    "popcnt": "popcnt", "avx_vnni": "avx_vnni", "avx": "avx", "avx512_vl": "avx512vl",
    "ssse3": "ssse3", "avx512_f": "avx512f", "avx512_dq": "avx512dq",
    "avx512_vbmi": "avx512vbmi", "avx512_ifma": "avx512ifma",
    "avx512_vpopcntdq": "avx512_vpopcntdq", "avx512_vbmi2": "avx512_vbmi2",
    "avx512_bitalg": "avx512_bitalg", "avx512_vnni": "avx512_vnni",
}

# cpuinfo's key -> (its EDX bit, the flag standing for the registers it needs the OS to save)
_LEAF_7_1 = {"avx10_1": (19, "avx512f"), "avx_vnni_int8": (4, "avx"),
             "avx_ne_convert": (5, "avx"), "avx_vnni_int16": (10, "avx")}

_CACHE = "/sys/devices/system/cpu/cpu0/cache"


def _processors() -> list[dict]:
    out, cur = [], {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                if cur:
                    out.append(cur)
                cur = {}
                continue
            key, _, value = line.partition(":")
            cur[key.strip()] = value.strip()
    if cur:
        out.append(cur)
    return out


def _cache_size(level: int, kinds: tuple) -> int:
    """Bytes of cpu0's cache at ``level`` whose type is one of ``kinds`` (0 if none)."""
    try:
        entries = sorted(os.listdir(_CACHE))
    except OSError:
        return 0
    for entry in entries:
        if not entry.startswith("index"):
            continue
        base = os.path.join(_CACHE, entry)
        try:
            with open(os.path.join(base, "level")) as f:
                lvl = int(f.read())
            with open(os.path.join(base, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(base, "size")) as f:
                size = f.read().strip()
        except (OSError, ValueError):
            continue
        if lvl == level and kind in kinds:
            m = re.fullmatch(r"(\d+)([KMG]?)", size)
            if m:
                return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]
    return 0


def _name(model: str) -> str:
    """The model name without trademarks, "CPU", frequency and core-count suffixes, as cpuinfo
    shortens it."""
    name = re.sub(r"\((R|TM|tm|r)\)", "", model)
    name = re.sub(r"@.*$", "", name)
    name = re.sub(r"\b\d+-Core Processor\b", "", name)
    name = re.sub(r"\b(CPU|Processor)\b", "", name)
    return " ".join(name.split())


_QUALNAME = "torch._C._cpu._get_cpu_capability"


def get_cpu_capability() -> dict:
    if not cpu_capability._X86:
        raise TorchnativeNotImplementedError(_QUALNAME, "described on x86-64 Linux only")
    try:
        procs = _processors()
    except OSError:
        raise TorchnativeNotImplementedError(_QUALNAME, "no /proc/cpuinfo to read") from None
    flags = cpu_capability.FLAGS
    out: dict = {key: flag in flags for key, flag in _FLAGS.items()}
    edx = cpuid_leaves.word(cpuid_leaves.CPUID_INDEX_7_ECX_1, cpuid_leaves.EDX)
    if edx is not None:
        out.update({key: regs in flags and bool(edx >> bit & 1)
                    for key, (bit, regs) in _LEAF_7_1.items()})
    sockets = {p.get("physical id", "0") for p in procs}
    cores = {(p.get("physical id", "0"), p.get("core id", str(i))) for i, p in enumerate(procs)}
    out.update({
        "l1d_cache_size": _cache_size(1, ("Data", "Unified")),
        "l2_cache_size": _cache_size(2, ("Unified", "Data")),
        "num_logical_cores": len(procs),
        "num_sockets": len(sockets),
        "num_physical_cores": len(cores),
        "cpu_name": _name(procs[0].get("model name", "")) if procs else "",
        "architecture": "x86_64",
    })
    return out


TORCH_C = {
    _QUALNAME: get_cpu_capability,
}
