"""Floating-point helpers that make numpy round exactly as upstream's compiled kernels do.

Upstream's CPU kernels are built with FMA contraction on (the AVX2/AVX512 builds fuse
``a * b + c``), call glibc's double-precision libm (log, log1p, sincos, tan, exp), and convert
double -> Half/BFloat16 through float. numpy offers none of these directly:

* ``fma32``/``fma64`` emulate a fused multiply-add with one rounding. float32: the product is
  exact in float64, the sum is rounded to odd in float64, then to float32 (round-to-odd at
  53 >= 24 + 2 bits makes the second rounding correct). float64: Boldo & Melquiond's
  emulation (exact product by Dekker splitting, TwoSum, round-to-odd, final add).
* ``libm`` applies a ``math`` function element by element: CPython's ``math`` calls the very
  glibc routines upstream calls, whereas numpy may use its own SIMD versions (not bit-equal).
"""

from __future__ import annotations

import numpy as np

from ..platform import cpu_capability

F32, F64 = np.float32, np.float64


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_to_odd(s, err):
    """``s`` rounded to odd given the exact residual ``err``: nudge an even ``s`` one ulp towards it."""
    bits = s.view(np.int64)
    nudge = (err != 0) & ((bits & 1) == 0)
    if not nudge.any():
        return s
    step = np.where(np.signbit(err) == np.signbit(s), 1, -1).astype(np.int64)
    return np.where(nudge, bits + step, bits).view(F64)


def fma32(a, b, c) -> np.ndarray:
    """float32 ``a * b + c`` rounded once (like vfmadd*ps)."""
    p = np.asarray(a, F32).astype(F64) * np.asarray(b, F32).astype(F64)  # exact: 48 bits
    s, err = _two_sum(p, np.broadcast_to(np.asarray(c, F32).astype(F64), p.shape))
    return _round_to_odd(np.atleast_1d(s), np.atleast_1d(err)).astype(F32).reshape(np.shape(s))


def _split(x):
    t = 134217729.0 * x  # 2**27 + 1
    hi = t - (t - x)
    return hi, x - hi


def fma64(a, b, c) -> np.ndarray:
    """float64 ``a * b + c`` rounded once (like vfmadd*sd), for finite, non-extreme operands."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F64), np.asarray(b, F64), np.asarray(c, F64))
    a, b, c = np.atleast_1d(a), np.atleast_1d(b), np.atleast_1d(c)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # a*b == p + e exactly
    th, tl = _two_sum(c, p)
    v, verr = _two_sum(tl, e)
    out = th + _round_to_odd(v, verr)
    naive = p + c
    return np.where(np.isfinite(out), out, naive)


def contracted32(a, b, c) -> np.ndarray:
    """float32 ``a * b + c`` as upstream's build compiles it: one rounding where the compiler
    contracts it (AVX2/AVX512 builds), two in the DEFAULT build (no FMA instruction)."""
    if cpu_capability.CONTRACTS_FMA:
        return fma32(a, b, c)
    return np.asarray(np.asarray(a, F32) * np.asarray(b, F32) + np.asarray(c, F32), F32)


def contracted64(a, b, c) -> np.ndarray:
    """float64 ``a * b + c`` as upstream's build compiles it (see ``contracted32``)."""
    if cpu_capability.CONTRACTS_FMA:
        return fma64(a, b, c)
    return np.asarray(np.asarray(a, F64) * np.asarray(b, F64) + np.asarray(c, F64), F64)


def libm(fn, x: np.ndarray) -> np.ndarray:
    """Apply glibc's ``fn`` (a ``math`` function) to every element of a float64 array."""
    x = np.asarray(x, F64)
    return np.fromiter(map(fn, x.ravel().tolist()), F64, x.size).reshape(x.shape)


_LIBM = None


def libmf(name: str, x: np.ndarray) -> np.ndarray:
    """Apply glibc's float function ``name`` (``logf``, ``cosf``, ...) to every element of a
    float32 array, through ctypes: the scalar kernels of upstream's DEFAULT build call these, and
    neither numpy nor ``math`` (double precision) reproduces their last bit."""
    global _LIBM
    if _LIBM is None:
        import ctypes
        import ctypes.util

        _LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        for fn in ("logf", "cosf", "sinf"):
            getattr(_LIBM, fn).restype = ctypes.c_float
            getattr(_LIBM, fn).argtypes = [ctypes.c_float]
    f = getattr(_LIBM, name)
    x = np.asarray(x, F32)
    return np.fromiter(map(f, x.ravel().tolist()), F32, x.size).reshape(x.shape)


def safe_libm(fn, x: np.ndarray) -> np.ndarray:
    """``libm`` that returns C's answers where Python's ``math`` raises (log(0) = -inf, ...)."""
    def c_like(v, fn=fn):
        try:
            return fn(v)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(getattr(np, fn.__name__)(np.float64(v)))
    x = np.asarray(x, F64)
    return np.fromiter(map(c_like, x.ravel().tolist()), F64, x.size).reshape(x.shape)


def f32_from_bits(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(F32)[0]

