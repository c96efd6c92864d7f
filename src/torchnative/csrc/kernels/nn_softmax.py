"""Softmax family (SoftMax.cpp): _softmax, _log_softmax, _safe_softmax, and the
CompositeImplicitAutograd softmax.int / log_softmax.int that reach them.

Upstream's CPU kernels reduce along the dim in opmath (float for float16/bfloat16): subtract the
row max, exponentiate, sum, then multiply by the reciprocal of the sum (softmax) or subtract its
log (log_softmax). The output is always contiguous (LEGACY_CONTIGUOUS_MEMORY_FORMAT).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty, from_result
from ..core.device import CPU
from ..core.tensor import wrap_dim
from .support.common import arr, as_compute, wrap
from ..dispatch.call import call
from .support.nn_util import not_implemented
from ..ops.kernel_registry import kernel

_OK = frozenset(D.BY_NAME[n] for n in ("float32", "float64", "float16", "bfloat16"))


def _prepare(input, dim, half_to_float, name):
    d = wrap_dim(dim, input.dim())
    if half_to_float:
        raise RuntimeError(f"{name} with half to float conversion is not supported on CPU")
    dt = input._dtype
    if input.numel() == 0:
        return None, d, dt
    last = d == max(input.dim(), 1) - 1
    if dt not in _OK:
        raise not_implemented(f"{'log_' if name == 'log_softmax' else ''}softmax"
                              f"{'_lastdim' if last else ''}_kernel_impl", dt)
    x = as_compute(input, dt) if dt.itemsize < 4 else arr(input)
    x = np.ascontiguousarray(x).reshape(input._size or (1,))
    return x, d, dt


_max, _sum = np.maximum.reduce, np.add.reduce
_sub, _exp, _rec, _mul, _log = np.subtract, np.exp, np.reciprocal, np.multiply, np.log


def softmax_array(x: np.ndarray, axis: int) -> np.ndarray:
    """exp(x - max) * (1 / sum), in x's dtype, into a new contiguous array (the ufuncs called
    positionally: keyword parsing is a sizeable part of a small softmax). A row holding inf gives
    NaN (inf - inf), without a warning in the door's quiet float state, as in C++."""
    m = _max(x, axis, None, None, True)
    e = _sub(x, m)
    _exp(e, e)
    s = _sum(e, axis, None, None, True)
    _rec(s, s)
    _mul(e, s, e)
    return e


def log_softmax_array(x: np.ndarray, axis: int) -> np.ndarray:
    """(x - max) - log(sum(exp(x - max))), positionally as softmax_array."""
    m = _max(x, axis, None, None, True)
    shifted = _sub(x, m)
    s = _sum(_exp(shifted), axis, None, None, True)
    _log(s, s)
    _sub(shifted, s, shifted)
    return shifted


_NATIVE = frozenset(D.BY_NAME[n] for n in ("float32", "float64"))


@kernel("_softmax")
def _softmax(self, dim, half_to_float):
    x = self._np
    if self._dtype in _NATIVE and x is not None and x.size and x.ndim and not half_to_float and \
            x.flags.c_contiguous:
        # the common case: a dense float32/float64 input computes in place of its own dtype
        return from_result(softmax_array(x, wrap_dim(dim, x.ndim)), self._dtype)
    x, d, dt = _prepare(self, dim, half_to_float, "softmax")
    if x is None:
        return empty(self._size, dt, CPU)
    return wrap(softmax_array(x, d).reshape(self._size), dt)


@kernel("_log_softmax")
def _log_softmax(self, dim, half_to_float):
    x = self._np
    if self._dtype in _NATIVE and x is not None and x.size and x.ndim and not half_to_float and \
            x.flags.c_contiguous:
        return from_result(log_softmax_array(x, wrap_dim(dim, x.ndim)), self._dtype)
    x, d, dt = _prepare(self, dim, half_to_float, "log_softmax")
    if x is None:
        return empty(self._size, dt, CPU)
    return wrap(log_softmax_array(x, d).reshape(self._size), dt)


@kernel("_safe_softmax")
def _safe_softmax(self, dim, dtype=None):
    """softmax, with rows that are entirely -inf giving 0 instead of NaN (what the math SDPA
    path uses for fully masked rows)."""
    src = self if dtype is None or dtype == self._dtype else \
        call("_to_copy", self, dtype=dtype)
    out = _softmax(src, dim, False)
    if out.numel():
        d = wrap_dim(dim, self.dim())
        vals = arr(self).reshape(self._size or (1,))
        rows = np.all(np.isneginf(vals) if vals.dtype.kind == "f" else
                      np.isneginf(vals.astype(np.float32)), axis=d, keepdims=True)
        if rows.any():
            o = arr(out).reshape(self._size or (1,))
            np.copyto(o, np.zeros((), o.dtype), where=np.broadcast_to(rows, o.shape))
    return out


def _converted(input, dtype):
    """Tensor::toType(dtype): a copy only when the dtype changes (what upstream dispatches)."""
    if dtype is None or dtype == input._dtype:
        return input
    return call("_to_copy", input, dtype=dtype)


@kernel("softmax.int", composite=True)
def softmax_int(self, dim, dtype=None):
    return call("_softmax", _converted(self, dtype), dim, False)


@kernel("log_softmax.int", composite=True)
def log_softmax_int(self, dim, dtype=None):
    return call("_log_softmax", _converted(self, dtype), dim, False)


@kernel("softmax.int", fast=True)
def softmax_int_fast(self, dim, dtype=None):
    """softmax.int straight to the _softmax kernel when nobody observes the composite (a meta
    tensor has no values for it: the composite's operators reach the meta functions)."""
    x = self._np
    if dtype is None and x is not None and self._dtype in _NATIVE and x.flags.c_contiguous and \
            x.size and type(dim) is int and -x.ndim <= dim < x.ndim:
        # _softmax's dense case without its frame (an in-range int dim needs no wrap_dim)
        return from_result(softmax_array(x, dim % x.ndim), self._dtype)
    if (dtype is not None and dtype != self._dtype) or x is None:
        return softmax_int(self, dim, dtype)
    return _softmax(self, dim, False)


@kernel("log_softmax.int", fast=True)
def log_softmax_int_fast(self, dim, dtype=None):
    if (dtype is not None and dtype != self._dtype) or self._np is None:
        return log_softmax_int(self, dim, dtype)
    return _log_softmax(self, dim, False)


def _softmax_out(name, self, dim, dtype, out):
    """softmax_out / log_softmax_out (CompositeExplicitAutograd): the converted input through the
    structured out= kernel; a non-contiguous out receives a contiguous result's copy."""
    converted = _converted(self, dtype)
    if out.is_contiguous():
        return call(f"{name}.out", converted, dim, False, out=out)
    tmp = call(name, converted, dim, False)
    from ..dispatch.structured import resize_out

    resize_out(out, tmp._size)
    call("copy_", out, tmp)
    return out


@kernel("softmax.int_out")
def softmax_int_out(self, dim, dtype=None, *, out):
    return _softmax_out("_softmax", self, dim, dtype, out)


@kernel("log_softmax.int_out")
def log_softmax_int_out(self, dim, dtype=None, *, out):
    return _softmax_out("_log_softmax", self, dim, dtype, out)
