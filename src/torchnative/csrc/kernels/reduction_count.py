"""Counting: argwhere and nonzero_numpy (over nonzero, which kernels/indexing.py owns), bincount,
histc."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from .support.common import INT64, FLOAT32, FLOAT64, arr, as_compute
from .reduction import FLOAT_LOWP, dispatch, finish, not_implemented
from ..ops.kernel_registry import kernel


def _call(name, *args, **kwargs):
    from ..dispatch.call import call

    return call(name, *args, **kwargs)


# CompositeImplicitAutograd upstream, without a Python decomposition (TensorAdvancedIndexing.cpp)
@kernel("argwhere", composite=True)
def argwhere(self):
    return _call("nonzero", self)


@kernel("nonzero_numpy", composite=True)
def nonzero_numpy(self):
    if self.dim() == 0:  # numpy treats a scalar as a 1-element vector here
        return list(_call("unbind.int", _call("nonzero", _call("unsqueeze", self, 0)), 1))
    return list(_call("unbind.int", _call("nonzero", self), 1))


# ---- bincount -----------------------------------------------------------------------------------

_BINCOUNT = frozenset(D.BY_NAME[n] for n in "uint8 int8 int16 int32 int64".split())


@kernel("bincount")
def bincount(self, weights=None, minlength=0):
    dispatch("bincount_cpu", self.dtype, _BINCOUNT)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    x = arr(self)
    if self.dim() == 1 and x.size == 0:
        return finish(np.zeros(minlength, np.int64), INT64)
    if self.dim() != 1 or x.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights._size[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    nbins = max(int(x.max()) + 1, minlength)
    if weights is None:
        return finish(np.bincount(x, minlength=nbins), INT64)
    # weights accumulate in order, in float32 for float32 weights and in float64 otherwise
    wdt = FLOAT32 if weights.dtype is FLOAT32 else FLOAT64
    out = np.zeros(nbins, D.numpy_dtype(wdt))
    np.add.at(out, x, as_compute(weights, wdt))
    return finish(out, wdt)


# ---- histc --------------------------------------------------------------------------------------

def _edge_str(v: float) -> str:
    # upstream's NaN here comes out of its vectorized aminmax with the sign bit set
    return "-nan" if math.isnan(v) else format(v, "g")


@kernel("histc")
def histc(self, bins=100, min=0, max=0):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and self.numel() > 0:
        from .reduction_minmax import aminmax

        mn, mx = aminmax(self)
        lo, hi = float(arr(mn)), float(arr(mx))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if math.isinf(lo) or math.isinf(hi) or math.isnan(lo) or math.isnan(hi):
        raise RuntimeError(f"torch.histc: range of [{_edge_str(lo)}, {_edge_str(hi)}] is not "
                           "finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if self.dtype is D.BY_NAME["bool"]:
        not_implemented("linspace_cpu", self.dtype)
    dispatch("histogram_cpu", self.dtype, FLOAT_LOWP)
    # HistogramKernel.cpp, linear interpolation: pos = (x - left) * bins / (right - left), in the
    # input's dtype (float16/bfloat16 rounding after each operation), the last edge inclusive
    x = as_compute(self, self.dtype).reshape(-1)
    rnd = (lambda v: v) if self.dtype in (FLOAT32, FLOAT64) else \
        (lambda v: as_compute(finish(v, self.dtype), self.dtype))
    npdt = x.dtype.type
    left, right = rnd(np.asarray(lo, npdt)), rnd(np.asarray(hi, npdt))
    keep = (x >= left) & (x <= right)
    xs = x[keep]
    with np.errstate(all="ignore"):
        pos = rnd(rnd(rnd(xs - left) * rnd(np.asarray(bins, npdt))) / rnd(right - left))
    pos = pos.astype(np.int64)
    pos[pos == bins] = bins - 1
    return finish(np.bincount(pos, minlength=bins)[:bins].astype(np.float64), self.dtype)
