"""The C library's math functions over numpy arrays, with the C library's bits on every CPU.

numpy picks each ufunc's loop for the CPU when it is imported. Its baseline loops call the C
library; its X86_V4 loops (a CPU with AVX-512) compute float64 exp, log, acos, pow, tan, ... with
SIMD approximations that differ from glibc's in the last bit on up to a tenth of the inputs, and
its X86_V3 loops (AVX2) do so for float32 exp/log/sin/cos and float64 tanh. Upstream's scalar
kernels (Math.h's Bessel functions, the Chebyshev closed forms, Cephes' zeta ...) call the C
library, and near a zero or in ``cos(n * acos(x))`` one ulp of difference becomes many: where ours
reproduces those kernels it calls these functions, which run numpy's loop when the loop in force
is its baseline and the C function element by element otherwise.

Each function takes arrays or scalars of float32 or float64 (float32 only when every operand is)
and returns what numpy's ufunc would: the result dtype, broadcast shape, a numpy scalar for
scalar operands, and C's values (inf, NaN) where Python's ``math`` would raise.
"""

from __future__ import annotations

import math

import numpy as np

from . import libm

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_BASELINE: dict = {}


def numpy_calls_libm(ufunc: str, dtype: np.dtype) -> bool:
    """Whether numpy's loop in force for ``ufunc`` on ``dtype`` is its baseline (the C library)."""
    key = (ufunc, dtype.char)
    if key not in _BASELINE:
        try:
            from numpy.lib.introspect import opt_func_info
        except ImportError:  # numpy < 2 cannot say which loop runs: assume it is not libm's
            _BASELINE[key] = False
        else:
            loops = opt_func_info(func_name=f"^{ufunc}$").get(ufunc, {})
            nin = getattr(np, ufunc).nin
            loop = loops.get(dtype.char * (nin + 1))
            _BASELINE[key] = bool(loop) and loop["current"].startswith("baseline")
    return _BASELINE[key]


def each(fn, arrays, dtype: np.dtype) -> np.ndarray:
    """``fn`` applied to the elements of ``arrays`` (broadcast), one call per element."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype) for a in arrays))
    out = np.empty(arrays[0].shape, dtype)
    if out.size:
        out.ravel()[:] = list(map(fn, *(a.ravel().tolist() for a in arrays)))
    return out


def c_like(py, ufunc):
    """Python's ``py`` (a direct call of C's double function) with C's values where it raises
    instead (log(0) = -inf, exp(1000) = inf, acos(2) = NaN), taken from numpy's ``ufunc``."""
    def call(*xs):
        try:
            return py(*xs)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(ufunc(*(np.float64(x) for x in xs)))
    return call


class CFunction:
    """C's ``name`` (``name`` + "f" for float32) as a numpy-like function; ``ufunc`` is numpy's
    counterpart, ``py`` Python's (a direct call of C's double function)."""

    def __init__(self, name: str, ufunc: str, py):
        self.name, self.ufunc = name, ufunc
        self._np = getattr(np, ufunc)
        self._py = py
        self._double = c_like(py, self._np)

    def __call__(self, *args):
        if all(type(a) is float for a in args):  # the scalar kernels' per-element calls
            return np.float64(self._double(*args))
        arrays = [np.asarray(a) for a in args]
        dtype = _F32 if all(a.dtype == _F32 for a in arrays) else _F64
        if numpy_calls_libm(self.ufunc, dtype):
            return self._np(*(a.astype(dtype, copy=False) for a in arrays))
        if dtype == _F32:
            out = each(libm.function(self.name + "f", single=True, nargs=len(arrays)), arrays,
                       dtype)
        else:
            try:  # Python's function itself where it does not raise: no wrapper per element
                out = each(self._py, arrays, dtype)
            except (ValueError, OverflowError):
                out = each(self._double, arrays, dtype)
        return out[()] if all(a.ndim == 0 for a in arrays) else out


exp = CFunction("exp", "exp", math.exp)
expm1 = CFunction("expm1", "expm1", math.expm1)
log = CFunction("log", "log", math.log)
log1p = CFunction("log1p", "log1p", math.log1p)
sin = CFunction("sin", "sin", math.sin)
cos = CFunction("cos", "cos", math.cos)
tan = CFunction("tan", "tan", math.tan)
arccos = CFunction("acos", "arccos", math.acos)
power = CFunction("pow", "power", math.pow)
