"""CPUID words for the feature bits Linux's flags don't name.

Upstream's cpuinfo executes CPUID itself; ours reads ``/proc/cpuinfo``'s flags. The kernel
names most bits, but not all: leaf 7 sub-leaf 1's EDX holds AVX10 (bit 19), AVX-VNNI-INT8 (4),
AVX-NE-CONVERT (5) and AVX-VNNI-INT16 (10), which kernels print late or never (a 6.18 kernel on
an AVX10 Xeon prints none of them). glibc executes CPUID at start-up and hands the words out
through ``__x86_get_cpuid_feature_leaf`` (``<sys/platform/x86.h>``, public since 2.33), so they
are read from there. Without that function (another C library, an older glibc) there is no word
to read and the caller falls back to the flags.
"""

from __future__ import annotations

import ctypes

# <bits/platform/x86.h>'s leaf indices (a stable ABI: new leaves are appended)
CPUID_INDEX_7_ECX_1 = 6
EAX, EBX, ECX, EDX = range(4)


def _read(index: int) -> tuple | None:
    try:
        leaf = ctypes.CDLL(None).__x86_get_cpuid_feature_leaf
    except (AttributeError, OSError):
        return None
    # struct cpuid_feature: the CPUID words, then glibc's "active" (usable) words
    leaf.restype, leaf.argtypes = ctypes.POINTER(ctypes.c_uint32 * 8), [ctypes.c_uint]
    return tuple(leaf(index).contents[:4])


def word(index: int, register: int) -> int | None:
    """``register`` of glibc's CPUID leaf ``index``, None where glibc doesn't hand them out."""
    words = _WORDS.get(index)
    if words is None and index not in _WORDS:
        words = _WORDS[index] = _read(index)
    return None if words is None else words[register]


_WORDS: dict = {}
