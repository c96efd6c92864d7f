"""logspace and logspace.out as upstream's logspace_out computes them: the bounds in the result's
dtype, the step in double, each half of the exponents from its own end (plain multiply and add:
RangeFactories.cpp is not built per CPU capability), ``pow`` in double, the
power converted to the result's dtype. The functional allocates the inferred dtype and fills it
the same way (upstream's Python decomposition rounds differently)."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.construct import checked_device, empty
from ..platform import libm_arrays as C
from .factories import _spaced_dtype, resize_range_out, tensor_bounds
from ..ops.kernel_registry import kernel


@kernel("logspace", meta=True)
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             pin_memory=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    t = empty((steps,), _spaced_dtype(start, end, dtype, "torch.logspace()"), checked_device(device))
    return _fill(t, start, end, steps, base)


@kernel("logspace.out", meta=True)
def logspace_out(start, end, steps, base=10.0, *, out):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    resize_range_out(out, steps)
    if out._np is None or not steps:
        return out
    if out.is_contiguous():
        return _fill(out, start, end, steps, base)
    from .copy import copy_into

    copy_into(out, _fill(empty((steps,), out.dtype, out.device), start, end, steps, base))
    return out


@kernel("logspace.Tensor_Tensor", "logspace.Tensor_Scalar", "logspace.Scalar_Tensor", meta=True)
def logspace_tensor(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
                    pin_memory=None):
    start, end = tensor_bounds("logspace", start, end)
    return logspace(start, end, steps, base, dtype=dtype, device=device)


@kernel("logspace.Tensor_Tensor_out", "logspace.Tensor_Scalar_out", "logspace.Scalar_Tensor_out",
        meta=True)
def logspace_tensor_out(start, end, steps, base=10.0, *, out):
    start, end = tensor_bounds("logspace", start, end)
    return logspace_out(start, end, steps, base, out=out)


def _fill(t, start, end, steps: int, base: float):
    if t._np is None or not steps:
        return t
    dt = t.dtype
    flat = t._np.reshape(-1)
    with np.errstate(all="ignore"):
        if dt.is_complex:
            flat[...] = _complex_powers(start, end, steps, base).astype(flat.dtype)
        elif steps == 1:  # fill_(pow(base, start)) with the bound as given
            flat[...] = _converted(_checked(C.power(np.float64(base), np.float64(start)), dt), dt)
        else:
            flat[...] = _converted(_real_powers(start, end, steps, base, dt), dt)
    return t


def _bound(x, dt):
    """Scalar.to<scalar_t>(), as a double: integral types truncate, floating ones round."""
    if not dt.is_floating_point:
        return float(math.trunc(x))
    return float(np.asarray(x, np.float64).astype(D.numpy_dtype(dt)))


def _real_powers(start, end, steps: int, base: float, dt) -> np.ndarray:
    s, e = _bound(start, dt), _bound(end, dt)
    if dt.is_floating_point:  # scalar_end - scalar_start is computed in the dtype itself
        np_dt = D.numpy_dtype(dt)
        diff = float((np.asarray(e, np.float32 if dt.itemsize < 4 else np_dt)
                      - np.asarray(s, np.float32 if dt.itemsize < 4 else np_dt)).astype(np_dt))
        b = np.float64(base)
    else:  # integral: exact difference; the base is a float first
        diff = e - s
        b = np.float64(np.float32(base))
    step = np.float64(diff / (steps - 1))
    idx = np.arange(steps, dtype=np.int64)
    lo = idx < steps // 2
    k = np.where(lo, idx, steps - idx - 1).astype(np.float64)
    # RangeFactories.cpp is built for the baseline ISA: no contraction, two roundings
    exps = np.where(lo, s + step * k, e - step * k)
    return C.power(b, exps)  # std::pow, whichever loop numpy picked for this CPU


def _complex_powers(start, end, steps: int, base: float) -> np.ndarray:
    s, e = complex(start), complex(end)
    if steps == 1:
        return np.power(complex(base), np.asarray([s]))
    step = (e - s) / (steps - 1)
    idx = np.arange(steps)
    lo = idx < steps // 2
    exps = np.where(lo, s + step * idx, e - step * (steps - idx - 1))
    return np.power(complex(base), exps)


def _converted(values, dt) -> np.ndarray:
    """double -> the result's dtype as x86 converts it: integral types through a truncating
    conversion to 32 (or 64) bits, then wrapped to their width."""
    values = np.asarray(values, np.float64)
    np_dt = D.numpy_dtype(dt)
    if dt.is_floating_point:  # Half and BFloat16 are made from a float
        return (values.astype(np.float32) if dt.itemsize < 4 else values).astype(np_dt)
    if dt._name == "bool":
        return values != 0
    wide = np.int64 if dt.itemsize == 8 else np.int32
    limit = float(np.iinfo(wide).max)
    bad = ~np.isfinite(values) | (np.abs(values) >= limit)  # cvttsd2si's indefinite integer
    ints = np.where(bad, 0, np.trunc(np.where(bad, 0, values))).astype(wide)
    ints = np.where(bad, np.iinfo(wide).min, ints)
    return ints.astype(np_dt)


# c10's Scalar accessors name the C++ type they convert to
_CPP_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
              "int64": "int64_t"}


def _checked(value, dt):
    """fill_'s Scalar conversion: a value outside an integral type's range is refused."""
    if dt._name in _CPP_NAMES:
        info = np.iinfo(D.numpy_dtype(dt))
        if not info.min <= value <= info.max:  # NaN too
            raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[dt._name]} without overflow")
    return value
