"""torch.histogram's and torch.histogramdd's CPU kernels (HistogramKernel.cpp): bin counts (edges
from the data's min and max per dimension, or ``range``; linearly spaced by linspace) and given
edge tensors.

Elements are binned as upstream bins them: with linear edges, (x - left) * bins / (right - left)
truncated, then corrected by a search among the neighbouring edges; with given edges, a binary
search. NaN and out-of-range elements are skipped, the last bin includes its right edge, counts
accumulate in the input's dtype, and ``density`` divides by the total and by each bin's width.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from .support.common import arr, int_list, wrap

_FLOATS = (D.BY_NAME["float32"], D.BY_NAME["float64"])


def _check_weight(self, weight):
    if weight is None:
        return None
    if tuple(weight.shape) != (self.numel(),) and list(weight.shape) != list(self.shape):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same "
                           "shape as the input tensor excluding its innermost dimension, but got "
                           f"input with shape [{self.numel()}, 1] and weight with shape "
                           f"{int_list(weight.shape)}")
    if weight.dtype != self.dtype:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and "
                           "weight tensor should have the same dtype, but got input(" +
                           f"{self.dtype._cpp_name}), and weight({weight.dtype._cpp_name})")
    return np.asarray(arr(weight)).reshape(-1)


def _outer_edges(self, x, rng):
    lo, hi = 0.0, 1.0
    if rng is not None:
        if len(rng) != 2:
            raise RuntimeError("torch.histogramdd: for a 1-dimensional histogram range should have "
                               f"2 elements, but got {len(rng)}")
        lo, hi = float(rng[0]), float(rng[1])
    elif x.size:
        if self.dtype not in _FLOATS:
            raise NotImplementedError(
                f'"histogramdd" not implemented for \'{self.dtype._cpp_name}\'')
        lo, hi = float(np.min(x)), float(np.max(x))
        if np.isnan(x).any():
            lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_num(lo)}, {_num(hi)}] is "
                           "not finite")
    if lo > hi:
        raise RuntimeError("torch.histogramdd: min should not exceed max, but got min "
                           f"{_num(lo)} max {_num(hi)} for dimension 0")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _num(v: float) -> str:
    return str(int(v)) if math.isfinite(v) and v == int(v) else str(v)


def _count(x, w, edges, linear, density, dt):
    npdt = D.numpy_dtype(dt)
    n_edges = edges.size
    left, right = edges[0], edges[-1]
    keep = (x >= left) & (x <= right)
    xs = x[keep]
    if linear:
        with np.errstate(all="ignore"):
            guess = ((xs - left) * npdt.type(n_edges - 1) / (right - left)).astype(np.int64)
        lo = np.maximum(guess - 1, 0)
        hi = np.minimum(guess + 2, n_edges)
        pos = lo.copy()
        for off in range(3):  # upper_bound over edges[lo:hi], at most three of them
            idx = lo + off
            inside = idx < hi
            pos = np.where(inside & (edges[np.minimum(idx, n_edges - 1)] <= xs), idx + 1, pos)
        pos = pos - 1
    else:
        pos = np.searchsorted(edges, xs, side="right") - 1
    pos = np.where(pos == n_edges - 1, pos - 1, pos)
    hist = np.zeros(n_edges - 1, npdt)
    weights = np.ones(xs.shape, npdt) if w is None else w[keep].astype(npdt)
    np.add.at(hist, pos, weights)
    if density:
        with np.errstate(all="ignore"):
            hist = hist / hist.sum(dtype=npdt)
            hist = hist / np.diff(edges)
    return hist.astype(npdt)


@kernel("histogram.bin_ct")
def histogram_bin_ct(self, bins=100, *, range=None, weight=None, density=False):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    x = np.asarray(arr(self)).reshape(-1)
    lo, hi = _outer_edges(self, x, range)
    edges_t = call("linspace", lo, hi, bins + 1, dtype=self.dtype)
    w = _check_weight(self, weight)
    if self.dtype not in _FLOATS:
        raise NotImplementedError(f'"histogramdd_cpu" not implemented for '
                                  f"'{self.dtype._cpp_name}'")
    hist = _count(x, w, np.asarray(arr(edges_t)), True, density, self.dtype)
    return wrap(hist, self.dtype), edges_t


@kernel("histogram.bins_tensor")
def histogram_bins_tensor(self, bins, *, weight=None, density=False):
    if bins.dim() != 1:
        raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                           f"{bins.dim()} dimensions in the bins tensor for dimension 0")
    if bins.numel() == 0:
        raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but "
                           "got 0 elements in the bins tensor for dimension 0")
    if bins.dtype != self.dtype:
        raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same "
                           f"dtype, but got input {self.dtype._cpp_name} and bins for dimension 0 "
                           f"{bins.dtype._cpp_name}")
    w = _check_weight(self, weight)
    if self.dtype not in _FLOATS:
        raise NotImplementedError(f'"histogramdd_cpu" not implemented for '
                                  f"'{self.dtype._cpp_name}'")
    x = np.asarray(arr(self)).reshape(-1)
    edges = np.asarray(arr(bins)).copy()
    hist = _count(x, w, edges, False, density, self.dtype)
    return wrap(hist, self.dtype), call("clone", bins)


# --- histogramdd: the same per innermost dimension, into an N-dimensional histogram -------------

def _dd_prepare(self, n_bins=None):
    if self.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions, but "
                           f"got {self.dim()}")
    n = self.shape[-1]
    if n_bins is not None and n_bins != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    return np.asarray(arr(self)).reshape(-1, n), n


def _dd_outer(self, x, n, rng):
    lo, hi = [0.0] * n, [1.0] * n
    if rng is not None:
        if len(rng) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should "
                               f"have {2 * n} elements, but got {len(rng)}")
        lo, hi = [float(v) for v in rng[0::2]], [float(v) for v in rng[1::2]]
    elif x.size:
        if self.dtype not in _FLOATS:
            raise NotImplementedError(
                f'"histogramdd" not implemented for \'{self.dtype._cpp_name}\'')
        lo = [float(v) for v in np.min(x, axis=0)]
        hi = [float(v) for v in np.max(x, axis=0)]
    for d in range(n):
        if not (math.isfinite(lo[d]) and math.isfinite(hi[d])):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_num(lo[d])}, "
                               f"{_num(hi[d])}] is not finite")
        if lo[d] > hi[d]:
            raise RuntimeError("torch.histogramdd: min should not exceed max, but got min "
                               f"{_num(lo[d])} max {_num(hi[d])} for dimension {d}")
        if lo[d] == hi[d]:
            lo[d], hi[d] = lo[d] - 0.5, hi[d] + 0.5
    return lo, hi


def _positions(xs, edges, linear, npdt):
    n_edges = edges.size
    left, right = edges[0], edges[-1]
    keep = (xs >= left) & (xs <= right)
    v = np.where(keep, xs, left)
    if linear:
        with np.errstate(all="ignore"):
            guess = ((v - left) * npdt.type(n_edges - 1) / (right - left)).astype(np.int64)
        lo = np.maximum(guess - 1, 0)
        hi = np.minimum(guess + 2, n_edges)
        pos = lo.copy()
        for off in range(3):
            idx = lo + off
            pos = np.where((idx < hi) & (edges[np.minimum(idx, n_edges - 1)] <= v), idx + 1, pos)
        pos = pos - 1
    else:
        pos = np.searchsorted(edges, v, side="right") - 1
    return keep, np.where(pos == n_edges - 1, pos - 1, pos)


def _dd_count(self, x, weight, edges_list, linear, density):
    npdt = D.numpy_dtype(self.dtype)
    shape = [e.size - 1 for e in edges_list]
    keep = np.ones(x.shape[0], bool)
    flat = np.zeros(x.shape[0], np.int64)
    for d, edges in enumerate(edges_list):
        k, pos = _positions(x[:, d], edges, linear, npdt)
        keep &= k
        flat = flat * shape[d] + pos
    if weight is not None:
        if list(weight.shape) != list(self.shape[:-1]):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape as "
                "the input tensor excluding its innermost dimension, but got input with shape "
                f"{int_list(self.shape)} and weight with shape {int_list(weight.shape)}")
        w = np.asarray(arr(weight)).reshape(-1).astype(npdt)[keep]
    else:
        w = np.ones(int(keep.sum()), npdt)
    hist = np.zeros(int(np.prod(shape)), npdt)
    np.add.at(hist, flat[keep], w)
    hist = hist.reshape(shape)
    if density:
        with np.errstate(all="ignore"):
            hist = hist / hist.sum(dtype=npdt)
            for d, edges in enumerate(edges_list):
                view = [1] * len(shape)
                view[d] = -1
                hist = hist / np.diff(edges).reshape(view)
    return wrap(np.ascontiguousarray(hist.astype(npdt)), self.dtype)


def _bin_ct_edges(self, bins, rng):
    x, n = _dd_prepare(self, len(bins))
    for d, b in enumerate(bins):
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for "
                               f"dimension {d}")
    lo, hi = _dd_outer(self, x, n, rng)
    return x, [call("linspace", lo[d], hi[d], bins[d] + 1, dtype=self.dtype) for d in range(n)]


@kernel("_histogramdd_bin_edges")
def _histogramdd_bin_edges(self, bins, *, range=None, weight=None, density=False):
    return _bin_ct_edges(self, list(bins), range)[1]


@kernel("_histogramdd_from_bin_cts")
def _histogramdd_from_bin_cts(self, bins, *, range=None, weight=None, density=False):
    x, edges = _bin_ct_edges(self, list(bins), range)
    if self.dtype not in _FLOATS:
        raise NotImplementedError(f'"histogramdd_cpu" not implemented for '
                                  f"'{self.dtype._cpp_name}'")
    return _dd_count(self, x, weight, [np.asarray(arr(e)) for e in edges], True, density)


@kernel("_histogramdd_from_bin_tensors")
def _histogramdd_from_bin_tensors(self, bins, *, weight=None, density=False):
    x, n = _dd_prepare(self, len(bins))
    for d, b in enumerate(bins):
        if b.dim() != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{b.dim()} dimensions in the bins tensor for dimension {d}")
        if b.dtype != self.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the "
                               f"same dtype, but got input {self.dtype._cpp_name} and bins for "
                               f"dimension {d} {b.dtype._cpp_name}")
    if self.dtype not in _FLOATS:
        raise NotImplementedError(f'"histogramdd_cpu" not implemented for '
                                  f"'{self.dtype._cpp_name}'")
    return _dd_count(self, x, weight, [np.asarray(arr(b)) for b in bins], False, density)


# the CompositeImplicitAutograd entry points torch.histogramdd reaches
@kernel("histogramdd", composite=True)
def histogramdd(self, bins, range=None, weight=None, density=False):
    edges = call("_histogramdd_bin_edges", self, bins, range=range, weight=weight,
                 density=density)
    hist = call("_histogramdd_from_bin_cts", self, bins, range=range, weight=weight,
                density=density)
    return hist, tuple(edges)  # a Tensor[] inside the returned tuple reaches Python as a tuple


@kernel("histogramdd.int_bins", composite=True)
def histogramdd_int_bins(self, bins, range=None, weight=None, density=False):
    return histogramdd(self, [bins] * self.shape[-1], range, weight, density)


@kernel("histogramdd.TensorList_bins", composite=True)
def histogramdd_tensor_bins(self, bins, range=None, weight=None, density=False):
    hist = call("_histogramdd_from_bin_tensors", self, bins, weight=weight, density=density)
    return hist, tuple(bins)
