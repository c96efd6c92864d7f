"""Tensor factories: empty, empty_strided, full, zeros, ones, arange, linspace, eye, scalar_tensor
and the ``*_like`` family. Factories honour ``dtype``/``device``; only cpu and meta allocate."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.construct import checked_device, empty
from ..core.determinism import fill_deterministic_, fills_uninitialized_memory
from ..core.layouts import preserve_format
from .pointwise_math import fma
from .support.common import INT64, arr, opmath, wrap
from .copy import _empty_like, _scalar_in
from .support.nn_util import not_implemented
from ..ops.kernel_registry import kernel


def _dtype(dtype):
    return dtype if dtype is not None else D.get_default_dtype()


def _filled(t):
    """Deterministic algorithms with fill_uninitialized_memory: never hand out stale memory."""
    return fill_deterministic_(t) if fills_uninitialized_memory() else t


@kernel("empty.memory_format", meta=True)
def empty_memory_format(size, *, dtype=None, layout=None, device=None, pin_memory=None,
                        memory_format=None):
    t = empty(tuple(size), _dtype(dtype), checked_device(device))
    if memory_format is not None and memory_format is not preserve_format:
        from .copy import strides_for

        t = empty(t._size, t.dtype, t.device, stride=strides_for(t, memory_format))
    return _filled(t)


@kernel("empty_strided", meta=True)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _filled(empty(tuple(size), _dtype(dtype), checked_device(device),
                         stride=tuple(stride)))


@kernel("empty_permuted", meta=True)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   pin_memory=None):
    """Strides such that dims in ``physical_layout`` order are contiguous in memory."""
    size = tuple(size)
    if sorted(physical_layout) != list(range(len(size))):
        raise RuntimeError("Dimension order is not a permutation of the tensor's dimensions")
    stride = [0] * len(size)
    acc = 1
    for d in reversed(physical_layout):
        stride[d] = acc
        acc *= max(size[d], 1)
    return _filled(empty(size, _dtype(dtype), checked_device(device), stride=tuple(stride)))


@kernel("full", meta=True)
def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        dtype = D.PYTHON_TYPE_DTYPE[type(fill_value) if type(fill_value) in (bool, int, complex)
                                  else float]
        if dtype.is_floating_point:
            dtype = D.get_default_dtype()
        elif dtype.is_complex:
            dtype = D.get_default_complex_dtype()
    t = empty(tuple(size), dtype, checked_device(device))
    if t._np is not None:
        t._np[...] = _scalar_in(fill_value, dtype)
    return t


@kernel("zeros", meta=True)
def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    t = empty(tuple(size), _dtype(dtype), checked_device(device))
    if t._np is not None:
        t._np[...] = 0
    return t


@kernel("ones", meta=True)
def ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    t = empty(tuple(size), _dtype(dtype), checked_device(device))
    if t._np is not None:
        t._np[...] = 1
    return t


def _like(self, dtype, device, memory_format):
    dt = dtype or self.dtype
    dev = checked_device(device) if device is not None else self.device
    return _empty_like(self, dt, dev, memory_format)


@kernel("empty_like", meta=True)
def empty_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    return _filled(_like(self, dtype, device, memory_format))


@kernel("zeros_like", meta=True)
def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    t = _like(self, dtype, device, memory_format)
    if t._np is not None:
        t._np[...] = 0
    return t


@kernel("ones_like", meta=True)
def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    t = _like(self, dtype, device, memory_format)
    if t._np is not None:
        t._np[...] = 1
    return t


@kernel("full_like", meta=True)
def full_like(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    t = _like(self, dtype, device, memory_format)
    if t._np is not None:
        t._np[...] = _scalar_in(fill_value, t.dtype)
    return t


@kernel("scalar_tensor", meta=True)
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return full((), s, dtype=_dtype(dtype), device=device)


# arange_out's AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16): no bool, complex or uint16+
_ARANGE_TYPES = frozenset(D.BY_NAME[n] for n in (
    "uint8", "int8", "int16", "int32", "int64", "float32", "float64", "float16", "bfloat16"))


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


@kernel("arange.start_step", meta=True)
def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None,
                      pin_memory=None):
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = INT64 if all(_is_int(x) for x in (start, end, step)) else D.get_default_dtype()
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype.is_floating_point or dtype.is_complex or not all(_is_int(x) for x in (start, end, step)):
        n = math.ceil((float(end) - float(start)) / float(step))
    else:
        n = -((start - end) // step) if step > 0 else -((end - start) // -step)
    n = max(int(n), 0)
    t = empty((n,), dtype, checked_device(device))
    if t.device.type == "cpu" and dtype not in _ARANGE_TYPES:
        raise not_implemented("arange_cpu", dtype)
    if t._np is not None and n:
        if dtype.is_floating_point and dtype.itemsize >= 4:
            # upstream: value = start + step * i, computed in the accumulate type
            acc = np.float64 if dtype.itemsize == 8 else np.float64
            vals = np.asarray(start, dtype=acc) + np.asarray(step, dtype=acc) * \
                np.arange(n, dtype=acc)
            t._np[...] = vals.astype(t._np.dtype)
        else:
            vals = start + step * np.arange(n, dtype=np.float64 if not dtype.is_complex and
                                            (dtype.is_floating_point or not _is_int(step))
                                            else np.int64)
            t._np[...] = vals.astype(opmath(dtype)).astype(t._np.dtype) \
                if dtype.is_floating_point else vals.astype(t._np.dtype)
    return t


@kernel("arange.start", meta=True)
def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(start, end, 1, dtype=dtype, device=device)


@kernel("arange", meta=True)
def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(0, end, 1, dtype=dtype, device=device)


@kernel("linspace", meta=True)
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _spaced_dtype(start, end, dtype, "torch.linspace()")
    t = empty((steps,), dt, checked_device(device))
    if t._np is not None and steps:
        if dt._name in ("float32", "float64") and not isinstance(start, complex) and \
                not isinstance(end, complex):
            t._np[...] = _linspace_float(start, end, steps, t._np.dtype.type)
            return t
        # upstream fills the first half forwards from start and the second half backwards from
        # end, so both endpoints are exact
        step = (end - start) / (steps - 1) if steps > 1 else 0.0
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        vals = np.where(i < half, start + step * i, end - step * (steps - 1 - i)) \
            if steps > 1 else np.full(1, start)  # linspace_out fills start
        t._np[...] = vals.astype(opmath(dt)).astype(t._np.dtype) if dt.is_floating_point \
            else vals.astype(t._np.dtype)
    return t


@kernel("linspace.out", "linspace.Tensor_Tensor_out", "linspace.Tensor_Scalar_out",
        "linspace.Scalar_Tensor_out", meta=True)
def linspace_out(start, end, steps, *, out):
    """linspace_out computes in out's dtype (the functional's default dtype would round first);
    a tensor bound is its value (the Tensor overloads check it is 0-dimensional first)."""
    from ..dispatch.structured import resize_out
    from .copy import copy_into

    if hasattr(start, "dim") or hasattr(end, "dim"):
        from .windows import _linspace_tensors

        result = _linspace_tensors(start, end, steps, out.dtype, None, out.device, None)
    else:
        result = linspace(start, end, steps, dtype=out.dtype, device=out.device)
    resize_out(out, result._size)
    copy_into(out, result)
    return out


def _spaced_dtype(start, end, dtype, fn_name: str):
    """linspace_logspace_infer_options: complex bounds make the default complex dtype, and
    refuse a real one asked for."""
    if isinstance(start, complex) or isinstance(end, complex):
        want = D.get_default_complex_dtype()
        if dtype is None:
            return want
        if not dtype.is_complex:
            from .support.nn_util import typemeta

            raise RuntimeError(f"{fn_name}: inferred dtype {typemeta(want)} can't be safely cast "
                               f"to passed dtype {dtype._cpp_name}")
        return dtype
    return _dtype(dtype)


def _linspace_float(start, end, steps: int, T) -> np.ndarray:
    """linspace_kernel for float/double as upstream's scalar loop computes it: the step in the
    dtype, then start + step * idx before halfway and end - step * (steps - idx - 1) from there
    (both endpoints exact), each ``a * b + c`` rounded as upstream's build contracts it
    (pointwise_math.fma)."""
    start, end = T(start), T(end)
    if steps == 1:  # linspace_out fills start
        return np.full(1, start, T)
    with np.errstate(all="ignore"):
        step = (end - start) / T(steps - 1)
    idx = np.arange(steps, dtype=np.int64)
    lo = idx < steps // 2
    k = np.where(lo, idx, steps - idx - 1).astype(T)
    return fma(np.where(lo, step, -step).astype(T), k, np.where(lo, start, end).astype(T))


@kernel("eye", meta=True)
def eye(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m(n, n, dtype=dtype, device=device)


@kernel("eye.m", meta=True)
def eye_m(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    t = empty((n, m), _dtype(dtype), checked_device(device))
    if t._np is not None:
        t._np[...] = 0
        k = min(n, m)
        t._np[np.arange(k), np.arange(k)] = 1
    return t


del arr, wrap
