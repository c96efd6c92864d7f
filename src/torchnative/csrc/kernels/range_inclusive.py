"""``range`` (torch.range, deprecated upstream): the values from ``start`` to ``end`` inclusive.

RangeFactories.cpp's ``range_out``: the bounds in the accumulate type (int64 for integral types,
float for Half/BFloat16, double for float/double), the size ``(end - start) / step + 1``
truncated, element ``i`` as ``start + i * step`` in that type (two roundings: the file is built
without the kernels' per-capability flags), then stored in the result's type. The result is
resized without arange's warning. ``range`` itself allocates an empty result of the default dtype
(a ``dtype`` of None is not inferred from the bounds, unlike arange).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.cast import cast_array
from ..core.construct import checked_device, empty
from ..ops.kernel_registry import kernel
from .factories import RANGE_TYPES, cpp_number, write_range
from .support.nn_util import not_implemented
from .support.scalar import scalar_to

_INT64 = D.BY_NAME["int64"]
_F32, _F64 = D.BY_NAME["float32"], D.BY_NAME["float64"]


def _acc(dtype):
    if not dtype.is_floating_point:
        return _INT64
    return _F32 if dtype in D.REDUCED_FLOATING else _F64


def _values(result, start, end, step) -> np.ndarray:
    dtype = result.dtype
    if dtype not in RANGE_TYPES:
        raise not_implemented("range_cpu", dtype)
    acc = _acc(dtype)
    xstart, xend, xstep = (scalar_to(v, acc) for v in (start, end, step))
    if not (xstep > 0 or xstep < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(float(xstart)) and math.isfinite(float(xend))):
        # (only floating bounds can fail this: integral ones are int64 already)
        raise RuntimeError(f"unsupported range: {cpp_number(float(xstart))} -> "
                           f"{cpp_number(float(xend))}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if acc is _INT64:  # C++'s integer division truncates towards zero
        q = int(xend) - int(xstart)
        size = abs(q) // abs(int(xstep)) * (1 if (q >= 0) == (int(xstep) > 0) else -1) + 1
        i = np.arange(size, dtype=np.int64)
        return i * np.int64(xstep) + np.int64(xstart), size
    a = xstart.dtype.type
    size = int((xend - xstart) / xstep + a(1))
    i = np.arange(size, dtype=a)
    with np.errstate(over="ignore"):
        return np.add(np.multiply(i, xstep), xstart), size


def range_into(result, start, end, step):
    """range_out: ``result`` resized to the range's size and filled."""
    values, size = _values(result, start, end, step)
    if result.numel() != size:
        from ..dispatch.call import call

        call("resize_", result, [size])
    if result._np is not None and size:
        write_range(result, cast_array(values, _acc(result.dtype), result.dtype))
    return result


@kernel("range.step")
def range_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype if dtype is not None else D.get_default_dtype()
    return range_into(empty((0,), dt, checked_device(device)), start, end, step)


@kernel("range")
def range_start_end(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return range_step(start, end, 1, dtype=dtype, layout=layout, device=device,
                      pin_memory=pin_memory)


@kernel("range.out")
def range_out(start, end, step=1, *, out):
    return range_into(out, start, end, step)


@kernel("range.out_")
def range_out_(start, end, *, out):
    return range_into(out, start, end, 1)
