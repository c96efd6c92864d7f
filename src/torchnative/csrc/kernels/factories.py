"""Tensor factories: empty, empty_strided, full, zeros, ones, arange, linspace, eye, scalar_tensor
and the ``*_like`` family. Factories honour ``dtype``/``device``; only cpu and meta allocate."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.construct import checked_device, contiguous_strides_of, empty, from_result
from ..core.device import CPU
from ..core.determinism import fill_deterministic_, fills_uninitialized_memory
from ..core.layouts import preserve_format
from .pointwise_math import fma
from .support.common import INT64, arr, opmath, wrap
from .copy import _empty_like, fill_scalar
from .support.scalar import plain_float, scalar_to
from .support.nn_util import not_implemented
from ..ops.kernel_registry import kernel
from ..platform.torch_warn import torch_warn


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


# The factories' out= overloads resize ``out`` (no warning) and fill it in its own dtype: the
# dtype a functional call would choose plays no part.
@kernel("empty.out", meta=True)
def empty_out(size, *, memory_format=None, out):
    if memory_format is not None:
        raise RuntimeError("'memory_format' argument is incompatible with 'out' tensor argument")
    empty(tuple(size), out.dtype, "meta")  # check_size_nonnegative's message
    _resize(out, size)
    if out.dtype.is_floating_point or out.dtype.is_complex:
        _filled(out)
    return out


@kernel("ones.out", meta=True)
def ones_out(size, *, out):
    return _fill_out(out, size, 1)


@kernel("zeros.out", meta=True)
def zeros_out(size, *, out):
    return _fill_out(out, size, 0)


@kernel("full.out", meta=True)
def full_out(size, fill_value, *, out):
    return _fill_out(out, size, fill_value)


def _resize(out, size) -> None:
    from ..dispatch.call import call

    call("resize_", out, list(size))


def _fill_out(out, size, value):
    from ..dispatch.call import call

    _resize(out, size)
    return call("fill_.Scalar", out, value)


@kernel("empty_strided", meta=True)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _filled(empty(tuple(size), _dtype(dtype), checked_device(device),
                         stride=tuple(stride)))


@kernel("empty_permuted", meta=True)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   pin_memory=None):
    """Strides such that dims in ``physical_layout`` order are contiguous in memory."""
    size = tuple(size)
    n = len(size)
    if len(physical_layout) != n:
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout; "
                           f"i.e. len(size) = {n} is not equal to len(physical_layout) = {len(physical_layout)}")
    seen = set()
    for i, d in enumerate(physical_layout):  # TensorFactories.cpp checks each dim in turn
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, but got {d} "
                               f"at index {i}).  NB: negative dims not currently supported; file an issue "
                               "if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
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
    return fill_scalar(empty(tuple(size), dtype, checked_device(device)), fill_value)


@kernel("zeros", meta=True)
def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    dev = checked_device(device)
    if dev.type != "meta" and any(type(s) is int and s < 0 for s in size):
        # the CPU kernel's own check, before the allocator's
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    t = empty(tuple(size), _dtype(dtype), dev)
    if t._np is not None:
        t._np[...] = 0
    return t


@kernel("ones", meta=True)
def ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    dt = _dtype(dtype)
    t = empty(tuple(size), dt, checked_device(device))
    if t._np is not None:
        t._np[...] = _one(dt)
    return t


def _new_empty(self, size, dtype, device):
    """Tensor.new_empty: ``self``'s dtype and device unless given (TensorOptions.merge_in)."""
    return empty(tuple(size), dtype or self._dtype,
                 checked_device(device) if device is not None else self.device)


@kernel("new_empty", meta=True)
def new_empty(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _filled(_new_empty(self, size, dtype, device))


@kernel("new_zeros", meta=True)
def new_zeros(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    t = _new_empty(self, size, dtype, device)  # upstream: new_empty, then zero_
    if t._np is not None:
        t._np[...] = 0
    return t


@kernel("new_ones", meta=True)
def new_ones(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    t = _new_empty(self, size, dtype, device)  # upstream: new_empty, then fill_(1)
    if t._np is not None:
        t._np[...] = _one(t._dtype)
    return t


@kernel("new_full", meta=True)
def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return fill_scalar(_new_empty(self, size, dtype, device), fill_value)


def _one(dt):
    """1 as the storage holds it (bit-stored dtypes do not take a Python 1)."""
    return scalar_to(1, dt) if dt in D.BIT_STORED else 1


def _like(self, dtype, device, memory_format):
    dt = dtype or self.dtype
    dev = checked_device(device) if device is not None else self.device
    return _empty_like(self, dt, dev, memory_format)


@kernel("empty_like", meta=True)
def empty_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    return _filled(_like(self, dtype, device, memory_format))


def _same_contiguous(self, dtype, device, memory_format) -> bool:
    """A ``*_like`` call that keeps the dtype (not one stored as bits), device and layout of a
    CPU tensor with C-contiguous strides (a backward's seed, a zero gradient): ``_like`` would
    make a tensor of those strides and dtype, which a fresh numpy array is. (An empty tensor or
    a size-1 dimension may have other strides, which preserve_format keeps.)"""
    return dtype is None and device is None and \
        (memory_format is None or memory_format is preserve_format) and \
        self._np is not None and self._dtype not in D.BIT_STORED and \
        self._stride == contiguous_strides_of(self._size)


@kernel("zeros_like", meta=True)
def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    if _same_contiguous(self, dtype, device, memory_format):
        return from_result(np.zeros(self._size, self._np.dtype), self._dtype)
    t = _like(self, dtype, device, memory_format)
    if t._np is not None:
        t._np[...] = 0
    return t


@kernel("ones_like", meta=True)
def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    if _same_contiguous(self, dtype, device, memory_format):
        return from_result(np.ones(self._size, self._np.dtype), self._dtype)
    t = _like(self, dtype, device, memory_format)
    if t._np is not None:
        t._np[...] = _one(t.dtype)
    return t


@kernel("full_like", meta=True)
def full_like(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    return fill_scalar(_like(self, dtype, device, memory_format), fill_value)


@kernel("scalar_tensor", meta=True)
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    dt = _dtype(dtype)
    if type(s) is float and (device is None or device is CPU):
        # a Python float into float32/float64 (where's scalar, a mask's -inf) on the short
        # path; a finite value beyond the type's range takes the general one, which raises
        v = plain_float(s, dt)
        if v is not None:
            return from_result(np.array(v), dt)
    return full((), s, dtype=dt, device=device)


# arange_out's and range_out's AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16): no bool, complex or
# uint16+
RANGE_TYPES = frozenset(D.BY_NAME[n] for n in (
    "uint8", "int8", "int16", "int32", "int64", "float32", "float64", "float16", "bfloat16"))


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


@kernel("arange.start_step", meta=True)
def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None,
                      pin_memory=None):
    """arange allocates an empty result (int64 when every bound is integral and no dtype is
    given) and fills it as arange_out does; the result is made at its size at once (the resize
    of a fresh empty tensor inside the kernel is nothing anything above it sees)."""
    if dtype is None:
        dtype = INT64 if all(_is_int(x) for x in (start, end, step)) else D.get_default_dtype()
    dev = checked_device(device)
    size, xstart, xstep = _arange_bounds(dtype, dev, start, end, step)
    if dev.type == "cpu" and size:
        return from_result(_arange_values(xstart, xstep, size, dtype, not dtype.is_floating_point),
                           dtype)
    return empty((size,), dtype, dev)


@kernel("arange.start", meta=True)
def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(start, end, 1, dtype=dtype, device=device)


@kernel("arange", meta=True)
def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return arange_start_step(0, end, 1, dtype=dtype, device=device)


@kernel("arange.start_out", meta=True)
def arange_start_out(start, end, step=1, *, out):
    return arange_into(out, start, end, step)


@kernel("arange.out", meta=True)
def arange_out(end, *, out):
    return arange_into(out, 0, end, 1)


def _arange_bounds(dtype, dev, start, end, step):
    """arange_out's checks and its size, and the bounds in the accumulate type of ``dtype``
    (int64 for integral types, so float bounds truncate; double for float/double; float for
    Half/BFloat16): (size, start, step)."""
    if dev.type == "cpu" and dtype not in RANGE_TYPES:
        raise not_implemented("arange_cpu", dtype)
    integral = not dtype.is_floating_point
    # the checks see the bounds as doubles, whatever the dtype
    dstart, dend, dstep = float(start), float(end), float(step)
    if dstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(dstart) and math.isfinite(dend)):
        raise RuntimeError(f"unsupported range: {cpp_number(dstart)} -> {cpp_number(dend)}")
    if not ((dstep > 0 and dend >= dstart) or (dstep < 0 and dend <= dstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if integral:
        xstart, xstep = math.trunc(start), math.trunc(step)
    else:
        xstart, xstep = dstart, dstep
        if dtype in D.REDUCED_FLOATING:
            xstart, xstep = float(np.float32(xstart)), float(np.float32(xstep))
    if dtype == INT64:  # the size exact in int64 (C++ division truncates towards zero)
        if xstep == 0:
            raise ValueError("step must be nonzero")
        num = math.trunc(end) - xstart + xstep - (1 if xstep > 0 else -1)
        size = abs(num) // abs(xstep) * (1 if (num >= 0) == (xstep > 0) else -1)
    else:  # in double, the same on every device
        size = math.ceil((dend - dstart) / dstep)
    if not 0 <= size <= 2 ** 63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    return size, xstart, xstep


def arange_into(result, start, end, step):
    """arange_out: ``result`` resized to the size of the range (with upstream's warning when
    it had another non-zero count) and filled."""
    dtype = result.dtype
    size, xstart, xstep = _arange_bounds(dtype, result.device, start, end, step)
    if result.numel() != size:
        if result.numel() > 0:
            torch_warn(
                f"The number of elements in the out tensor of shape {list(result._size)} is "
                f"{result.numel()} which does not match the computed number of elements {size}. "
                "Note that this may occur as a result of rounding error. The out tensor will be "
                f"resized to a tensor of shape ({size},).")
        from ..dispatch.call import call

        call("resize_", result, [size])
    if result._np is not None and size:
        write_range(result, _arange_values(xstart, xstep, size, dtype,
                                           not dtype.is_floating_point))
    return result


def write_range(result, values: np.ndarray) -> None:
    """A range's values (in ``result``'s dtype, C order) stored into ``result``, contiguous or
    not (the out= forms' ``result.copy_(r)``)."""
    if result.is_contiguous():
        result._np.reshape(-1)[...] = values
    else:
        result._np[...] = values.reshape(result._np.shape)


_INT64_NP = np.dtype(np.int64)


# arange's vectors are 32 bytes under every capability: upstream's AVX512 build runs its AVX2
# kernel (an AVX-512 EPYC gives AVX2's bits under ATEN_CPU_CAPABILITY=avx512, measured)
_ARANGE_VEC_BYTES = 32


def _arange_values(start, step, n: int, dtype, integral: bool) -> np.ndarray:
    """arange_kernel: start + step * i in the accumulate type. Floating types follow its SIMD
    loop too: in each pair of vectors the lanes are base + k * step from a base rounded to the
    dtype (``Vectorized::arange``), the tail the scalar formula."""
    np_dt = D.numpy_dtype(dtype)
    idx = np.arange(n, dtype=np.int64)
    if integral:  # exact in int64, wrapped to the width (in place: the same int64 arithmetic)
        if step != 1:
            np.multiply(idx, np.int64(step), out=idx)
        if start != 0:
            np.add(idx, np.int64(start), out=idx)
        return idx if np_dt == _INT64_NP else idx.astype(np_dt)
    acc = np.float32 if dtype in D.REDUCED_FLOATING else np.float64
    a_start, a_step = acc(start), acc(step)
    # whole numbers whose every product and sum the accumulate type holds exactly: a fused
    # multiply-add rounds nothing there, so plain arithmetic gives its bits (the common range)
    plain = float(start).is_integer() and float(step).is_integer() and \
        abs(start) + abs(step) * n < (2 ** 24 if acc is np.float32 else 2 ** 53)
    fused = _plain_fma if plain else fma
    scalar = fused(np.full(n, a_step), idx.astype(acc), a_start)
    lanes = _ARANGE_VEC_BYTES // np_dt.itemsize
    cut = n // (2 * lanes) * (2 * lanes)
    if not cut:
        return scalar.astype(np_dt)
    base_idx = idx[:cut] // lanes * lanes
    base = scalar[base_idx].astype(np_dt).astype(acc)
    k = (idx[:cut] - base_idx).astype(acc)
    if dtype._name == "bfloat16":  # its lanes round k * step, then the sum (measured)
        with np.errstate(all="ignore"):
            vec = base + k * a_step
    else:
        vec = fused(k, np.full(cut, a_step), base)
    return np.concatenate([vec, scalar[cut:]]).astype(np_dt)


def _plain_fma(a, b, c):
    return a * b + c


def cpp_number(x: float) -> str:
    """A double as C++'s ostream prints it in upstream's messages."""
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf") if math.isinf(x) else f"{x:g}"


@kernel("linspace", meta=True)
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _spaced_dtype(start, end, dtype, "torch.linspace()")
    t = empty((steps,), dt, checked_device(device))
    if t._np is not None and steps:
        real = not isinstance(start, complex) and not isinstance(end, complex)
        if dt._name in ("float32", "float64") and real:
            t._np[...] = _linspace_float(start, end, steps, t._np.dtype.type)
            return t
        if real and dt in D.REDUCED_FLOATING:
            t._np[...] = _linspace_reduced(start, end, steps, t._np.dtype.type)
            return t
        if real and not dt.is_floating_point and not dt.is_complex and dt._name != "bool":
            t._np[...] = _linspace_integral(start, end, steps).astype(t._np.dtype)
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
    from .copy import copy_into

    start, end = tensor_bounds("linspace", start, end)
    result = linspace(start, end, steps, dtype=out.dtype, device=out.device)
    resize_range_out(out, steps)
    if out._np is not None and tuple(out._size) != (steps,):  # same count, its own shape
        shaped = empty(tuple(out._size), result.dtype, out.device)
        shaped._np[...] = result._np.reshape(out._size)
        result = shaped
    copy_into(out, result)
    return out


def resize_range_out(out, n: int) -> None:
    """linspace_out/logspace_out resize ``out`` only when its element count differs (no warning;
    an out of the right count keeps its shape)."""
    if out.numel() != n:
        from ..dispatch.call import call

        call("resize_", out, [n])


def tensor_bounds(fn_name: str, start, end):
    """The values of linspace/logspace's tensor bounds, which must be 0-dimensional (the message
    names the bounds the overload takes as tensors)."""
    dims = [(name, b.dim()) for name, b in (("start", start), ("end", end)) if hasattr(b, "dim")]
    if any(d for _, d in dims):
        got = " and ".join(f"{name} with {d} dimension(s)" for name, d in dims)
        raise RuntimeError(f"{fn_name} only supports 0-dimensional start and end tensors, but got "
                           f"{got}.")
    return tuple(b.item() if hasattr(b, "item") else b for b in (start, end))


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


def _linspace_integral(start, end, steps: int) -> np.ndarray:
    """linspace_kernel for integral types: the bounds converted to the type first (truncated),
    the step in double, each half from its own end as a contracted multiply-add, truncated."""
    s, e = float(math.trunc(start)), float(math.trunc(end))
    if steps == 1:
        return np.full(1, s).astype(np.int64)
    step = np.float64((e - s) / (steps - 1))
    idx = np.arange(steps, dtype=np.int64)
    lo = idx < steps // 2
    k = np.where(lo, idx, steps - idx - 1).astype(np.float64)
    vals = fma(np.where(lo, step, -step), k, np.where(lo, s, e))
    return np.trunc(vals).astype(np.int64)


def _linspace_reduced(start, end, steps: int, T) -> np.ndarray:
    """linspace_kernel for float16/bfloat16: the step and every product and sum are Half (or
    BFloat16) operations, each computed in float and rounded back to the type."""
    def r(x):
        return np.asarray(x, np.float32).astype(T).astype(np.float32)

    s, e = r(np.float32(start)), r(np.float32(end))
    if steps == 1:
        return np.full(1, s).astype(T)
    step = r(r(e - s) / r(steps - 1))
    idx = np.arange(steps, dtype=np.int64)
    lo = idx < steps // 2
    k = r(np.where(lo, idx, steps - idx - 1))
    with np.errstate(all="ignore"):
        prod = r(step * k)
        return np.where(lo, r(s + prod), r(e - prod)).astype(T)


@kernel("eye", meta=True)
def eye(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m(n, n, dtype=dtype, device=device)


@kernel("eye.m", meta=True)
def eye_m(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m_out(n, m, out=empty((0,), _dtype(dtype), checked_device(device)))


@kernel("eye.out", meta=True)
def eye_out(n, *, out):
    return eye_m_out(n, n, out=out)


@kernel("eye.m_out", meta=True)
def eye_m_out(n, m, *, out):
    """eye_out_cpu: out resized (no warning) and filled in its own dtype."""
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    _resize(out, (n, m))
    if out._np is not None:
        out._np[...] = 0
        k = min(n, m)
        out._np[np.arange(k), np.arange(k)] = _one(out.dtype)
    return out


del arr, wrap
