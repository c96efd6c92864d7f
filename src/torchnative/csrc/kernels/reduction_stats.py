"""Moments and norms: var/std (and var_mean/std_mean) with a correction, linalg_vector_norm and
the norm overloads that call it.

Upstream computes var/std with Welford in double, one sequential pass per output in the input's
memory order (or, for a whole-tensor float/double var/std, a mean in the input's dtype and a
sequential double sum of squared deviations). Both are replayed as they run: float64 results
carry their rounding to the last bit, and float32/float16 ones round from the same doubles.
Norms follow upstream's norm loops and order (support/norm_order.py).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.promotion import promote_types
from .support.common import as_compute
from .reduction import dim_list, finish, iterated, reduce_axes, reduced_shape, widened
from ..platform.torch_warn import torch_warn
from .support.norm_order import (VEC_BYTES, generic_accumulate, lastdim_sumsq, magnitudes,
                                 project, rows_in_order)
from .support.parallel import get_num_threads
from ..ops.kernel_registry import kernel


_F64 = D.BY_NAME["float64"]


def _memory_order(t, x: np.ndarray, axes) -> np.ndarray:
    """``x`` as (outputs, reduced) with the reduced elements in the input's memory order, the
    order TensorIterator visits them in (kept dims first, in order)."""
    kept = [i for i in range(x.ndim) if i not in axes]
    red = sorted(axes, key=lambda i: -abs(t._stride[i]))  # stable: equal strides keep order
    moved = x.transpose(kept + red)
    return moved.reshape(math.prod([x.shape[i] for i in kept]), -1)


def _welford(rows: np.ndarray, correction: float):
    """SharedReduceOps.h WelfordOps in double, one sequential pass per output (what upstream's
    binary_kernel_reduce runs below GRAIN_SIZE elements per output): (var, mean)."""
    mean = np.zeros(rows.shape[0])
    m2 = np.zeros(rows.shape[0])
    for k in range(rows.shape[1]):
        v = rows[:, k]
        delta = v - mean
        mean = mean + delta / float(k + 1)
        m2 = m2 + delta * (v - mean)
    n = rows.shape[1]
    return m2 / (n - correction if n > correction else 0.0), mean


def _all_reduce(rows: np.ndarray, correction: float, mean: float):
    """ReduceOps.cpp std_var_all_cpu: the given mean, then the squared deviations summed in
    double, sequentially in memory order."""
    dev = rows.reshape(-1) - mean
    m2 = np.add.accumulate(dev * dev)[-1] if dev.size else 0.0
    return m2 / max(0.0, rows.size - correction)


def _two_pass(x: np.ndarray, axes, correction: float):
    n = math.prod([x.shape[a] for a in axes])
    mean = np.add.reduce(x, axis=axes, keepdims=True) / n
    dev = x - mean
    return np.add.reduce(dev * dev, axis=axes) / max(0.0, n - correction), mean


def _var(self, x: np.ndarray, axes, keepdim, correction: float, with_mean: bool):
    """(var, mean) of real ``x`` (``self``'s values in float64), as upstream computes them."""
    out_shape = reduced_shape(x.shape, axes, keepdim)
    with np.errstate(all="ignore"):
        if x.size == 0 or 0 in [x.shape[a] for a in axes]:
            nan = np.full(out_shape, np.nan)
            return nan, nan
        if self.dtype.to_real() is not _F64:
            # the double result is rounded to float32 or narrower: any accurate double
            # computation rounds to the same value, so take the vectorized two-pass one
            var, mean = _two_pass(x, axes, correction)
        else:
            rows = _memory_order(self, x, axes)
            if rows.shape[0] == 1 and not with_mean:
                # upstream's whole-tensor var/std: self.mean(), then the squared deviations
                var, mean = _all_reduce(rows, correction, float(x.mean())), None
                return np.full(out_shape, var), None
            var, mean = _welford(rows, correction)
    return var.reshape(out_shape), mean.reshape(out_shape)


def _std_var(fname, self, dim, correction, keepdim, take_sqrt, with_mean):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"{fname} only support floating point and complex dtypes" if with_mean
                           else "std and var only support floating point and complex dtypes")
    axes = reduce_axes(self, dim)
    c = 1.0 if correction is None else float(correction)
    out_n = 1
    for i, s in enumerate(self._size):
        if i not in axes:
            out_n *= s
    per_out = self.numel() // out_n if out_n else 0
    if per_out - c <= 0:
        torch_warn(f"{fname}(): degrees of freedom is <= 0. Correction should be strictly "
                   "less than the reduction factor (input numel divided by output numel).")
    x = widened(as_compute(self, self.dtype))
    if x.dtype.kind == "c":  # var of the real part plus var of the imaginary part
        vr, mr = _var(self, np.ascontiguousarray(x.real), axes, keepdim, c, with_mean)
        vi, mi = _var(self, np.ascontiguousarray(x.imag), axes, keepdim, c, with_mean)
        var, mean = vr + vi, (mr + 1j * mi if with_mean else None)
    else:
        var, mean = _var(self, x, axes, keepdim, c, with_mean)
    out = np.sqrt(var) if take_sqrt else var
    if with_mean:
        return finish(out, self.dtype.to_real()), finish(mean, self.dtype)
    return finish(out, self.dtype.to_real())


@kernel("var.correction")
def var(self, dim=None, *, correction=None, keepdim=False):
    return _std_var("var", self, dim, correction, keepdim, False, False)


@kernel("std.correction")
def std(self, dim=None, *, correction=None, keepdim=False):
    return _std_var("std", self, dim, correction, keepdim, True, False)


@kernel("var_mean.correction")
def var_mean(self, dim=None, *, correction=None, keepdim=False):
    return _std_var("var_mean", self, dim, correction, keepdim, False, True)


@kernel("std_mean.correction")
def std_mean(self, dim=None, *, correction=None, keepdim=False):
    return _std_var("std_mean", self, dim, correction, keepdim, True, True)


# ---- norms --------------------------------------------------------------------------------------

def _scalar_str(v) -> str:
    """c10::Scalar as upstream's messages print it (ostream of a double, or an integer)."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    return format(float(v), "g")


def _check_norm_dtype(dtype, self_dt, name="linalg.vector_norm"):
    if dtype is None:
        return
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{dtype._cpp_name}")
    if self_dt.is_complex != dtype.is_complex:
        kind = "complex" if self_dt.is_complex else "real"
        raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got "
                           f"{dtype._cpp_name}")
    if promote_types(self_dt, dtype) is not dtype:
        raise RuntimeError(f"{name}: the dtype of the input ({self_dt._cpp_name}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({dtype._cpp_name})")


@kernel("linalg_vector_norm")
def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {self.dtype._cpp_name}")
    p = float(ord)
    dims = dim_list(dim)
    if self.numel() == 0 and (p < 0 or p == math.inf):
        if not dims:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_scalar_str(ord)} norm on "
                               "an empty tensor because the operation does not have an identity")
        for d in dims:
            if self.size(d) == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_scalar_str(ord)} "
                                   f"norm on the dimension {d}because this dimension is empty and "
                                   "the operation does not have an identity")
    _check_norm_dtype(dtype, self.dtype)
    axes = reduce_axes(self, dims)
    in_dt = dtype if dtype is not None else self.dtype
    out_dt = in_dt.to_real()
    with np.errstate(all="ignore"):
        if all(self._size[a] == 1 for a in axes):  # upstream: abs(x) (or x != 0), nothing summed
            x = as_compute(self, in_dt)
            r = (x != 0) if p == 0 else np.abs(x)
            return finish(r.reshape(reduced_shape(x.shape, axes, keepdim)), out_dt)
        return finish(_norm_values(self, in_dt, p, axes, keepdim), out_dt)


def _norm_values(self, in_dt, p: float, axes, keepdim, powsum=False) -> np.ndarray:
    """norm_stub (or, with ``powsum``, powsum_stub: no root) on TensorIterator's reduction of
    ``self.to(in_dt)``: upstream's loops and order (support/norm_order.py), in the
    accumulation dtype."""
    x, strides = iterated(self, in_dt)
    shape = reduced_shape(x.shape, axes, keepdim)
    if x.size == 0:
        return np.full(shape, np.inf if p < 0 and not powsum else 0, x.real.dtype)
    X, lastdim = rows_in_order(x, strides, axes)
    if p == 2 and lastdim and in_dt in _LASTDIM_DTYPES:
        acc = lastdim_sumsq(X, VEC_BYTES // in_dt.itemsize)
    else:
        acc = generic_accumulate(magnitudes(X), p, get_num_threads(), powsum)
    return (acc if powsum else project(acc, p)).reshape(shape)


@kernel("linalg__powsum")
def linalg_powsum(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    """sum(|x| ** ord) over ``dim`` in upstream's norm loops, without the root."""
    in_dt = dtype if dtype is not None else self.dtype
    if not (in_dt.is_floating_point or in_dt.is_complex):
        raise NotImplementedError(f'"powsum_cpu" not implemented for \'{in_dt._cpp_name}\'')
    if self.dtype.is_complex and not in_dt.is_complex:
        in_dt = in_dt.to_complex()
    axes = reduce_axes(self, dim_list(dim))
    with np.errstate(all="ignore"):
        return finish(_norm_values(self, in_dt, float(ord), axes, keepdim, powsum=True),
                      in_dt.to_real())


_LASTDIM_DTYPES = frozenset(D.BY_NAME[n] for n in ("float32", "float64", "bfloat16"))


def _norm_check(self, dtype):
    if dtype is None:
        if not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                               f"Got {self.dtype._cpp_name} instead.")
    elif not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("norm(): the desired output dtype should be either floating point or "
                           f"complex. Got {dtype._cpp_name} instead.")


@kernel("norm.ScalarOpt_dim")
def norm_dim(self, p, dim, keepdim=False):
    _norm_check(self, None)
    return linalg_vector_norm(self, 2.0 if p is None else p, dim, keepdim)


@kernel("norm.ScalarOpt_dim_dtype")
def norm_dim_dtype(self, p, dim, keepdim, *, dtype):
    _norm_check(self, dtype)
    return linalg_vector_norm(self, 2.0 if p is None else p, dim, keepdim, dtype=dtype)


@kernel("norm.Scalar")
def norm_scalar(self, p=2):
    return norm_dim(self, p, [], False)


@kernel("norm.ScalarOpt_dtype")
def norm_dtype(self, p, *, dtype):
    return norm_dim_dtype(self, p, [], False, dtype=dtype)

