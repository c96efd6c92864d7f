"""Scans: cumsum, cumprod, cummax, cummin, logcumsumexp.

Upstream's CPU scans are sequential along the dim with an accumulator of ``acc_type`` (double for
float32, float for float16/bfloat16, complex<double> for complex64, int64 for integers), rounding
each output once (ReduceOpsKernel.cpp cpu_cum_base_kernel). numpy's accumulate is sequential too,
so computing in the same accumulator dtype reproduces upstream's bits.
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import wrap_dim
from .support.common import INT64, arr, as_compute
from .reduction import (ALL_LOWP, ALL_LOWP_BOOL, COMPLEX_T, FLOAT_LOWP, LOWP, dispatch,
                        finish, is_integral)
from ..ops.kernel_registry import kernel

def _acc(a: np.ndarray) -> np.ndarray:
    """``a`` (float32 / complex64 / integers) in upstream's CPU accumulator type."""
    if a.dtype == np.float32:
        return a.astype(np.float64)
    if a.dtype == np.complex64:
        return a.astype(np.complex128)
    return a


def _cum(self, dim, dtype, ufunc, name):
    d = wrap_dim(dim, self.dim())
    out_dt = dtype if dtype is not None else (INT64 if is_integral(self.dtype) else self.dtype)
    if self.dim() == 0:
        return finish(as_compute(self, out_dt).copy(), out_dt)
    if self.numel() == 0:
        return finish(np.zeros(self._size, as_compute(self, out_dt).dtype), out_dt)
    dispatch(name, out_dt, ALL_LOWP | COMPLEX_T)
    a = as_compute(self, out_dt)
    acc = a if out_dt in LOWP else _acc(a)  # float16/bfloat16 accumulate in float32
    with np.errstate(all="ignore"):
        return finish(ufunc.accumulate(acc, axis=d, dtype=acc.dtype), out_dt)


@kernel("cumsum")
def cumsum(self, dim, *, dtype=None):
    return _cum(self, dim, dtype, np.add, "cumsum_out_cpu")


@kernel("cumprod")
def cumprod(self, dim, *, dtype=None):
    return _cum(self, dim, dtype, np.multiply, "cumprod_out_cpu")


def _cumext(self, dim, is_max):
    name = "cummax" if is_max else "cummin"
    d = wrap_dim(dim, self.dim())
    if self.dim() == 0:
        return finish(arr(self).copy(), self.dtype), finish(np.zeros((), np.int64), INT64)
    if self.numel() == 0:
        return finish(arr(self).copy(), self.dtype), finish(np.zeros(self._size, np.int64), INT64)
    dispatch(f"{name}_cpu", self.dtype, ALL_LOWP_BOOL)
    a = as_compute(self, self.dtype) if self.dtype in LOWP else arr(self)
    running = (np.maximum if is_max else np.minimum).accumulate(a, axis=d)
    # upstream takes element i when it is NaN, or compares >= (<=) the running value: ties and
    # every later NaN take over the index; the index is the last such "record" so far
    record = a == running
    if a.dtype.kind == "f":
        record |= np.isnan(a)
    shape = [1] * a.ndim
    shape[d] = a.shape[d]
    pos = np.where(record, np.arange(a.shape[d]).reshape(shape), 0)
    idx = np.maximum.accumulate(pos, axis=d)
    values = np.take_along_axis(arr(self), idx, d)  # the recorded element itself (its zero sign)
    return finish(values, self.dtype), finish(idx, INT64)


@kernel("cummax")
def cummax(self, dim):
    return _cumext(self, dim, True)


@kernel("cummin")
def cummin(self, dim):
    return _cumext(self, dim, False)


def _log_add_exp_complex(x, y):
    """LogAddExp.h _log_add_exp_helper for complex128 arrays (element-wise)."""
    xn = np.isnan(x.real) | np.isnan(x.imag)
    yn = np.isnan(y.real) | np.isnan(y.imag)
    x_lt = x.real < y.real
    mn = np.where(yn, y, np.where(xn, x, np.where(x_lt, x, y)))
    mx = np.where(yn, y, np.where(xn, x, np.where(x_lt, y, x)))
    with np.errstate(all="ignore"):
        out = np.log1p(np.exp(mn - mx)) + mx
        nan = np.isnan(mn.real) | np.isnan(mn.imag)
        inf_same = ~np.isfinite(mn.real) & (mn.real == mx.real) & ~nan
        # both real parts -inf: the minimum; both +inf: log1p(exp(min) + exp(max) - 1)
        both_pos = np.log1p(np.exp(mn) + np.exp(mx) - 1)
        out = np.where(inf_same, np.where(mn.real < 0, mn, both_pos), out)
        out = np.where(nan, complex(np.nan, np.nan), out)
    return out


@kernel("_logcumsumexp")
def _logcumsumexp(self, dim):
    d = wrap_dim(dim, self.dim())
    dispatch("logcumsumexp_out_cpu", self.dtype, FLOAT_LOWP | COMPLEX_T)
    if self.dim() == 0 or self.numel() == 0:
        return finish(arr(self).copy(), self.dtype)
    a = as_compute(self, self.dtype)
    a = a if self.dtype in LOWP else _acc(a)
    with np.errstate(all="ignore"):
        if a.dtype.kind == "f":
            out = np.logaddexp.accumulate(a, axis=d)
        else:  # complex: sequential along the dim, vectorized across the rest
            moved = np.moveaxis(a, d, 0)
            out = np.empty_like(moved)
            cum = np.full(moved.shape[1:], complex(-np.inf, 0.0))
            for i in range(moved.shape[0]):
                cum = _log_add_exp_complex(moved[i], cum)
                out[i] = cum
            out = np.moveaxis(out, 0, d)
    return finish(out, self.dtype)


@kernel("logcumsumexp")
def logcumsumexp(self, dim):
    return _logcumsumexp(self, dim)

