"""Value-selecting reductions: amax/amin, max/min (all and along a dim, with indices),
argmax/argmin, aminmax.

They select, so they are exact: NaN propagates (the first NaN wins, with its index), ties resolve
to the first occurrence as upstream's sequential kernels do (TensorCompareKernel.cpp), and a
result of zero keeps the sign of the zero upstream would have kept.
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import wrap_dim
from .support.common import INT64, arr, as_compute
from .reduction import (ALL_LOWP_BOOL, BOOL, LOWP, check_ndim, dim_list, dispatch, finish,
                        reduce_axes, reduced_shape, reduced_size)
from ..ops.kernel_registry import kernel


def values_of(self) -> np.ndarray:
    """Values in a dtype numpy orders natively (bfloat16/float16 as float32: exact)."""
    check_ndim(self)
    return as_compute(self, self.dtype) if self.dtype in LOWP else arr(self)


def _flatten_axes(a: np.ndarray, axes: tuple) -> np.ndarray:
    """``a`` with ``axes`` merged into one trailing axis (kept dims first, in order)."""
    rest = [i for i in range(a.ndim) if i not in axes]
    moved = a.transpose(rest + list(axes))
    return moved.reshape(moved.shape[:len(rest)] + (-1,))


def zero_numel_check(self, dims, name: str) -> None:
    """ReduceOpsUtils.h zero_numel_check_dims for a list of (unwrapped) dims."""
    if not dims:
        raise RuntimeError(f"{name}: Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        zero_numel_check_dim(self, d, name, d)


def zero_numel_check_dim(self, dim: int, name: str, shown: int | None = None) -> None:
    shown = dim if shown is None else shown
    if self.dim() == 0:
        if dim not in (0, -1):
            raise IndexError(f"{name}: Expected reduction dim -1 or 0 for scalar but got {shown}")
    elif self._size[wrap_dim(dim, self.dim())] == 0:
        raise IndexError(f"{name}: Expected reduction dim {shown} to have non-zero size.")


def _extreme(a: np.ndarray, axes: tuple, keepdim: bool, is_max: bool, last_zero: bool):
    """max/min over ``axes``, NaN propagating; a zero result takes the sign of the first (or, for
    the all-reduce max()/min(), the last) zero upstream meets."""
    ufunc = np.maximum if is_max else np.minimum
    if not axes:
        return a.copy()
    m = ufunc.reduce(a, axis=axes, keepdims=True)
    if a.dtype.kind == "f" and (m == 0).any():
        flat = _flatten_axes(a, axes)
        hit = flat == _flatten_axes(np.broadcast_to(m, a.shape), axes)
        n = flat.shape[-1]
        pos = n - 1 - np.argmax(hit[..., ::-1], -1) if last_zero else np.argmax(hit, -1)
        chosen = np.take_along_axis(flat, pos[..., None], -1)
        m = np.where(m == 0, chosen.reshape(m.shape), m)
    return m if keepdim else m.reshape(reduced_shape(a.shape, axes, False))


def _amaxmin(self, dim, keepdim, is_max):
    name = "amax()" if is_max else "amin()"
    dims = dim_list(dim)
    if self.numel() == 0:
        zero_numel_check(self, dims, name)
    axes = reduce_axes(self, dims)
    if self.numel():  # an empty reduction never reaches the kernel, nor its dtype check
        dispatch("max_values_cpu" if is_max else "min_values_cpu", self.dtype, ALL_LOWP_BOOL)
    return finish(_extreme(values_of(self), axes, keepdim, is_max, False), self.dtype)


@kernel("amax")
def amax(self, dim=(), keepdim=False):
    return _amaxmin(self, dim, keepdim, True)


@kernel("amin")
def amin(self, dim=(), keepdim=False):
    return _amaxmin(self, dim, keepdim, False)


def _all_extreme(self, is_max):
    name = "max" if is_max else "min"
    if self.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    dispatch(f"{name}_all", self.dtype, ALL_LOWP_BOOL)
    a = values_of(self)
    return finish(_extreme(a, tuple(range(a.ndim)), False, is_max, True), self.dtype)


@kernel("max")
def max_all(self):
    return _all_extreme(self, True)


@kernel("min")
def min_all(self):
    return _all_extreme(self, False)


def first_arg(a: np.ndarray, axis: int, is_max: bool) -> np.ndarray:
    """Index of the first max (min) along ``axis``; the first NaN if there is one."""
    return np.argmax(a, axis) if is_max else np.argmin(a, axis)


def _with_indices(self, dim, keepdim, is_max):
    name = "max" if is_max else "min"
    d = wrap_dim(dim, self.dim())
    zero_numel_check_dim(self, d, f"{name}()")
    if self.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    a = arr(self)
    if self.dim() == 0:
        return finish(a.copy(), self.dtype), finish(np.zeros((), np.int64), INT64)
    dispatch(f"{name}_cpu", self.dtype, ALL_LOWP_BOOL)
    idx = first_arg(values_of(self), d, is_max)
    vals = np.take_along_axis(a, np.expand_dims(idx, d), d)
    if keepdim:
        idx = np.expand_dims(idx, d)
    else:
        vals = np.squeeze(vals, d)
    return finish(vals, self.dtype), finish(idx, INT64)


@kernel("max.dim")
def max_dim(self, dim, keepdim=False):
    return _with_indices(self, dim, keepdim, True)


@kernel("min.dim")
def min_dim(self, dim, keepdim=False):
    return _with_indices(self, dim, keepdim, False)


def _arg(self, dim, keepdim, is_max):
    name = "argmax" if is_max else "argmin"
    if self.dtype is BOOL:
        raise RuntimeError(f"{name}(): does not support bool input")
    if self.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is not None:
        d = wrap_dim(dim, self.dim())
        zero_numel_check_dim(self, d, f"{name}()")
        out_size = reduced_size(self, (d,) if self.dim() else (), keepdim)
        if self.dim() == 0 or self._size[d] == 1:
            return finish(np.zeros(out_size, np.int64), INT64)  # upstream fills 0, unchecked
    elif self.numel() == 0:
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                         "== 0.")
    dispatch(f"{name}_cpu", self.dtype, ALL_LOWP_BOOL)
    a = values_of(self)
    if dim is None:
        idx = np.asarray(first_arg(a.reshape(-1), 0, is_max))
        return finish(idx.reshape((1,) * self.dim() if keepdim else ()), INT64)
    idx = first_arg(a, d, is_max)
    return finish(np.expand_dims(idx, d) if keepdim else idx, INT64)


@kernel("argmax")
def argmax(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, True)


@kernel("argmin")
def argmin(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, False)


def _aminmax(self, dim, keepdim):
    if dim is not None:
        d = wrap_dim(dim, self.dim())
        zero_numel_check_dim(self, d, "aminmax")
        check_ndim(self)
        if self.dim() == 0:
            if self.dtype.is_complex:
                raise RuntimeError(f"aminmax not implemented for {self.dtype._cpp_name}")
            v = arr(self).copy()
            return finish(v, self.dtype), finish(v.copy(), self.dtype)
        axes = (d,)
    else:
        if self.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        axes = tuple(range(self.dim()))
    dispatch("aminmax_cpu", self.dtype, ALL_LOWP_BOOL)
    a = values_of(self)
    lo = _extreme(a, axes, keepdim, False, False)
    hi = _extreme(a, axes, keepdim, True, False)
    return finish(lo, self.dtype), finish(hi, self.dtype)


@kernel("aminmax")
def aminmax(self, *, dim=None, keepdim=False):
    return _aminmax(self, dim, keepdim)


@kernel("_aminmax")
def _aminmax_all(self):
    return _aminmax(self, None, False)


@kernel("_aminmax.dim")
def _aminmax_dim(self, dim, keepdim=False):
    return _aminmax(self, dim, keepdim)
