"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode.

Order: NaN sorts as the largest value (upstream's KeyValueCompAsc/Desc, numpy compatible). sort
is always computed stably, which is one of the orders upstream's unstable ``std::sort`` may give
(the documentation promises no particular one). Where upstream's answer among ties is worth
reproducing, the algorithm it ran is replayed on just the rows that have ties:
  topk      libstdc++ partial_sort / nth_element + sort (TopKImpl.h), via random/stdalgo.py;
  kthvalue  the Sedgewick quickselect of Sorting.cpp;
  mode      libstdc++ sort of (value, index) pairs by value (TensorCompareKernel.cpp);
median's index is deterministic (its comparator breaks ties by index) and needs no replay.
"""

from __future__ import annotations

import numpy as np

from ..core.construct import empty
from ..random import stdalgo
from ..core.tensor import TensorBase, contiguous_strides, wrap_dim
from .support.common import INT64, arr
from .support.iteration import infer_dense_strides
from .reduction import ALL_LOWP, ALL_LOWP_BOOL, BOOL, dispatch, finish
from .reduction_minmax import values_of, zero_numel_check_dim
from ..ops.kernel_registry import kernel


def stable_order(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Indices sorting ``a`` along ``axis`` stably, NaN as the largest value."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    # stable descending = the reversed stable ascending order of the reversed input
    o = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return (a.shape[axis] - 1) - np.flip(o, axis)


def _strided(values: np.ndarray, dt, stride) -> TensorBase:
    if tuple(stride) == contiguous_strides(values.shape):
        return finish(values, dt)
    out = empty(values.shape, dt, stride=stride)
    np.copyto(out._np, values)
    return out


# ---- sort ---------------------------------------------------------------------------------------

@kernel("sort.stable")
def sort_stable(self, *, stable=None, dim=-1, descending=False):
    d = wrap_dim(dim, self.dim())
    if self.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    a = arr(self)
    if self.dim() == 0:
        return finish(a.copy(), self.dtype), finish(np.zeros((), np.int64), INT64)
    # the meta function keeps the input's strides when they are dense (issue 65863)
    stride = self._stride if self._non_overlapping_and_dense() else \
        infer_dense_strides(self._size, self._stride)
    idx = stable_order(values_of(self), d, descending) if a.size else \
        np.zeros(a.shape, np.int64)
    return (_strided(np.take_along_axis(a, idx, d), self.dtype, stride),
            _strided(idx.astype(np.int64, copy=False), INT64, stride))


@kernel("sort")
def sort(self, dim=-1, descending=False):
    return sort_stable(self, stable=False, dim=dim, descending=descending)


def _call(name, *args, **kwargs):
    from ..dispatch.call import call

    return call(name, *args, **kwargs)


# CompositeImplicitAutograd upstream, without a Python decomposition: written as Sorting.cpp
@kernel("argsort", composite=True)
def argsort(self, dim=-1, descending=False):
    return _call("sort", self, dim, descending)[1]


@kernel("argsort.stable", composite=True)
def argsort_stable(self, *, stable, dim=-1, descending=False):
    return _call("sort.stable", self, stable=stable, dim=dim, descending=descending)[1]


@kernel("argsort.stable_out", composite=True)
def argsort_stable_out(self, *, stable, dim=-1, descending=False, out):
    values = _call("empty.memory_format", [0], dtype=self.dtype, device=self.device)
    _call("sort.values_stable", self, stable=stable, dim=dim, descending=descending,
          values=values, indices=out)
    return out


@kernel("msort", composite=True)
def msort(self):
    return _call("sort", self, 0, False)[0]


@kernel("msort.out", composite=True)
def msort_out(self, *, out):
    indices = _call("empty.memory_format", [0], dtype=INT64, device=self.device)
    _call("sort.values", self, 0, False, values=out, indices=indices)
    return out


# ---- topk ---------------------------------------------------------------------------------------

def _rows(a: np.ndarray, d: int) -> np.ndarray:
    """``a`` as (rows, n) with ``d`` last."""
    moved = np.moveaxis(a, d, -1)
    return moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, a.shape[d])


def _unrows(r: np.ndarray, shape, d: int) -> np.ndarray:
    moved = list(shape[:d]) + list(shape[d + 1:]) + [r.shape[-1]]
    return np.moveaxis(r.reshape(moved), -1, d)


def _ties(s: np.ndarray) -> np.ndarray:
    """Rows of sorted keys ``s`` with two equal neighbours (NaN equal to NaN)."""
    if s.shape[-1] < 2:
        return np.zeros(s.shape[0], bool)
    eq = s[:, 1:] == s[:, :-1]
    if s.dtype.kind == "f":
        eq |= np.isnan(s[:, 1:]) & np.isnan(s[:, :-1])
    return eq.any(-1)


def _greater_nan_first(x, y):
    return (x[0] != x[0] and y[0] == y[0]) or x[0] > y[0]


def _less_nan_last(x, y):
    return (x[0] == x[0] and y[0] != y[0]) or x[0] < y[0]


def topk_replay(keys: list, k: int, largest: bool, sorted_: bool) -> list:
    """TopKImpl.h topk_impl_loop on one row: the indices upstream returns."""
    a = list(zip(keys, range(len(keys))))
    comp = _greater_nan_first if largest else _less_nan_last
    n = len(a)
    if k * 64 <= n:
        stdalgo.partial_sort(a, 0, k, n, comp)
    else:
        stdalgo.nth_element(a, 0, k - 1, n, comp)
        if sorted_:
            stdalgo.sort(a, 0, k - 1, comp)
    return [i for _, i in a[:k]]


def _rank_keys(x: np.ndarray, largest: bool) -> np.ndarray:
    """Keys whose ascending order is the selection order (NaN tied with the extreme infinity,
    which the tie check then sends to the replay)."""
    if x.dtype.kind == "f":
        k = -x if largest else x
        return np.where(np.isnan(x), -np.inf if largest else np.inf, k)
    return ~x if largest else x


@kernel("topk")
def topk(self, k, dim=-1, largest=True, sorted=True):
    d = wrap_dim(dim, self.dim())
    n = self._size[d] if self.dim() else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if self.dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if self.dtype is BOOL:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    a = arr(self)
    if self.dim() == 0:
        return finish(a.copy(), self.dtype), finish(np.zeros((), np.int64), INT64)
    dispatch("topk_cpu", self.dtype, ALL_LOWP)
    out_shape = list(self._size)
    out_shape[d] = k
    if k == 0 or a.size == 0:
        return (finish(np.zeros(out_shape, a.dtype), self.dtype),
                finish(np.zeros(out_shape, np.int64), INT64))
    x = _rows(values_of(self), d)
    r = _rank_keys(x, largest)
    m = min(k + 1, n)
    cand = np.argpartition(r, m - 1, axis=-1)[:, :m] if m < n else \
        np.broadcast_to(np.arange(n), r.shape)
    cr = np.take_along_axis(r, cand, -1)
    o = np.argsort(cr, axis=-1, kind="stable")
    idx = np.take_along_axis(cand, o, -1)[:, :k].copy()
    replay = _ties(np.take_along_axis(cr, o, -1))
    if not sorted and k * 64 > n and k > 1:
        replay[:] = True  # nth_element leaves an order of its own
    for row in np.flatnonzero(replay):
        idx[row] = topk_replay(x[row].tolist(), k, largest, sorted)
    idx = _unrows(idx, self._size, d)
    return finish(np.take_along_axis(a, idx, d), self.dtype), finish(idx, INT64)


# ---- kthvalue -----------------------------------------------------------------------------------

def _gt_or_nan(x, y):
    return (x != x and y == y) or x > y


def quick_select_index(vals: list, k: int) -> int:
    """Sorting.cpp quick_select_template: the original index left at position ``k``."""
    a = list(zip(vals, range(len(vals))))
    lo, hi = 0, len(a) - 1
    while hi > lo:
        if hi == lo + 1:
            if _gt_or_nan(a[lo][0], a[hi][0]):
                a[lo], a[hi] = a[hi], a[lo]
            break
        p = (lo + hi) >> 1  # median of three for the pivot
        a[p], a[lo + 1] = a[lo + 1], a[p]
        if _gt_or_nan(a[lo + 1][0], a[hi][0]):
            a[lo + 1], a[hi] = a[hi], a[lo + 1]
        if _gt_or_nan(a[lo][0], a[hi][0]):
            a[lo], a[hi] = a[hi], a[lo]
        if _gt_or_nan(a[lo + 1][0], a[lo][0]):
            a[lo + 1], a[lo] = a[lo], a[lo + 1]
        i, j, piv = lo + 1, hi, a[lo][0]
        while True:
            i += 1
            while _gt_or_nan(piv, a[i][0]):
                i += 1
            j -= 1
            while _gt_or_nan(a[j][0], piv):
                j -= 1
            if j < i:
                break
            a[i], a[j] = a[j], a[i]
        a[lo], a[j] = a[j], a[lo]
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return a[k][1]


def _equal_count(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    eq = x == v[:, None]
    if x.dtype.kind == "f":
        eq |= np.isnan(x) & np.isnan(v)[:, None]
    return eq.sum(-1)


def _reduced(idx: np.ndarray, self, d: int, keepdim: bool, a: np.ndarray):
    """(values, indices) from one chosen index per row (rows as _rows made them)."""
    shape = list(self._size)
    shape[d] = 1
    idx = np.moveaxis(idx.reshape(shape[:d] + shape[d + 1:] + [1]), -1, d)
    vals = np.take_along_axis(a, idx, d)
    if not keepdim:
        vals, idx = np.squeeze(vals, d), np.squeeze(idx, d)
    return finish(vals, self.dtype), finish(idx, INT64)


@kernel("kthvalue")
def kthvalue(self, k, dim=-1, keepdim=False):
    d = wrap_dim(dim, self.dim())
    zero_numel_check_dim(self, d, "kthvalue()")
    n = self._size[d] if self.dim() else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    a = arr(self)
    if self.dim() == 0:
        return finish(a.copy(), self.dtype), finish(np.zeros((), np.int64), INT64)
    dispatch("kthvalue_cpu", self.dtype, ALL_LOWP)
    x = _rows(values_of(self), d)
    idx = stable_order(x, -1, False)[:, k - 1].copy()
    tied = _equal_count(x, np.take_along_axis(x, idx[:, None], -1)[:, 0]) > 1
    for row in np.flatnonzero(tied):
        idx[row] = quick_select_index(x[row].tolist(), k - 1)
    return _reduced(idx, self, d, keepdim, a)


# ---- median, nanmedian --------------------------------------------------------------------------

def _median_all(self, ignore_nan):
    dispatch("median_cpu", self.dtype, ALL_LOWP)
    a = values_of(self).reshape(-1)
    if a.size == 0:
        return finish(np.full((), np.nan), self.dtype)
    nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
    if nan.any() and not ignore_nan:
        return finish(np.full((), np.nan), self.dtype)
    kept = a[~nan] if ignore_nan else a
    if kept.size == 0:
        return finish(np.full((), np.nan), self.dtype)
    v = np.partition(kept, (kept.size - 1) // 2)[(kept.size - 1) // 2]
    return finish(np.asarray(v), self.dtype)


@kernel("median")
def median_all(self):
    return _median_all(self, False)


@kernel("nanmedian")
def nanmedian_all(self):
    return _median_all(self, True)


def _never(i, j):
    return False


def _median_dim(self, dim, keepdim, ignore_nan):
    d = wrap_dim(dim, self.dim())
    zero_numel_check_dim(self, d, "median()")
    dispatch("median_out", self.dtype, ALL_LOWP)
    a = arr(self)
    if self.dim() == 0:
        return finish(a.copy(), self.dtype), finish(np.zeros((), np.int64), INT64)
    x = _rows(values_of(self), d)
    n = x.shape[-1]
    order = stable_order(x, -1, False)  # by (value, index), NaN last: the comparator's order
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    n_nan = nan.sum(-1)
    if ignore_nan:
        rank = np.maximum(n - n_nan - 1, 0) // 2
        idx = np.take_along_axis(order, rank[:, None], -1)[:, 0]
        for row in np.flatnonzero(n_nan == n):  # all NaN: whatever nth_element leaves first
            perm = list(range(n))
            stdalgo.nth_element(perm, 0, 0, n, _never)
            idx[row] = perm[0]
    else:
        idx = np.take_along_axis(order, np.full((x.shape[0], 1), (n - 1) // 2), -1)[:, 0]
        idx = np.where(n_nan > 0, np.argmax(nan, -1), idx)  # the first NaN, if any
    return _reduced(idx, self, d, keepdim, a)


@kernel("median.dim")
def median_dim(self, dim, keepdim=False):
    return _median_dim(self, dim, keepdim, False)


@kernel("nanmedian.dim")
def nanmedian_dim(self, dim, keepdim=False):
    return _median_dim(self, dim, keepdim, True)


# ---- mode ---------------------------------------------------------------------------------------

def _first_less(x, y):
    return x[0] < y[0]


def mode_row(vals: list) -> tuple:
    """TensorCompareKernel.cpp mode: std::sort pairs by value, take the first longest run's last."""
    a = list(zip(vals, range(len(vals))))
    stdalgo.sort(a, 0, len(a), _first_less)
    best, best_i, best_f, run = 0, 0, 0, 0
    for i in range(len(a)):
        run += 1
        if i == len(a) - 1 or a[i][0] != a[i + 1][0]:
            if run > best_f:
                best, best_i, best_f = a[i][0], a[i][1], run
            run = 0
    return best, best_i


@kernel("mode")
def mode(self, dim=-1, keepdim=False):
    d = wrap_dim(dim, self.dim())
    zero_numel_check_dim(self, d, "mode()")
    a = arr(self)
    if self.dim() == 0:
        return finish(a.copy(), self.dtype), finish(np.zeros((), np.int64), INT64)
    if a.size == 0:  # nothing reaches the kernel, nor its dtype check
        shape = [s for i, s in enumerate(self._size) if i != d or keepdim]
        if keepdim:
            shape[d] = 1
        return (finish(np.zeros(shape, a.dtype), self.dtype),
                finish(np.zeros(shape, np.int64), INT64))
    dispatch("mode_cpu", self.dtype, ALL_LOWP_BOOL)
    x = _rows(values_of(self), d)
    idx = np.array([mode_row(row)[1] for row in x.tolist()], np.int64)
    return _reduced(idx, self, d, keepdim, a)

