"""unique: _unique, _unique2, unique_consecutive, unique_dim, unique_dim_consecutive.

Upstream's CPU unique always sorts (Unique.cpp: sorting beats hashing), whatever ``sorted`` says,
and never merges NaNs (NaN != NaN). Outputs not asked for are empty int64 tensors, except along a
dim, where inverse and counts are always returned.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..random import stdalgo
from ..core.tensor import wrap_dim
from .support.common import INT64, arr, wrap
from .reduction import ALL_LOWP_BOOL, dispatch, finish
from .reduction_minmax import values_of
from ..ops.kernel_registry import kernel

_UNIQUE = ALL_LOWP_BOOL | D.BAREBONES_UNSIGNED - {D.BY_NAME[f"uint{b}"] for b in range(1, 8)}
_EMPTY = np.zeros(0, np.int64)


def _nan_last_less(x, y):
    return (x[0] == x[0] and y[0] != y[0]) or x[0] < y[0]


def _sorted_order(keys: np.ndarray) -> np.ndarray:
    """The order upstream's unstable sort (KeyValueCompAsc) leaves ``keys`` in. It only shows
    where NaNs (each its own unique value) meet, so it is replayed only then."""
    if keys.dtype.kind == "f" and np.count_nonzero(np.isnan(keys)) > 1:
        a = list(zip(keys.tolist(), range(keys.size)))
        stdalgo.sort(a, 0, len(a), _nan_last_less)
        return np.array([i for _, i in a], np.int64)
    return np.argsort(keys, kind="stable")


def _groups(keys: np.ndarray, sort: bool):
    """(order, starts, group id per sorted position) of 1-D ``keys``; NaNs never group."""
    order = _sorted_order(keys) if sort else np.arange(keys.size)
    s = keys[order]
    new = np.ones(s.size, bool)
    if s.size > 1:
        new[1:] = s[1:] != s[:-1]
    return order, np.flatnonzero(new), np.cumsum(new) - 1


def _flat_unique(self, sort, return_inverse, return_counts):
    dispatch("unique", self.dtype, _UNIQUE)
    a = arr(self).reshape(-1)
    order, starts, gid = _groups(values_of(self).reshape(-1), sort)
    values = a[order[starts]]
    inverse = _EMPTY
    if return_inverse:
        inverse = np.empty(a.size, np.int64)
        inverse[order] = gid
        inverse = inverse.reshape(self._size)
    counts = np.diff(np.append(starts, a.size)) if return_counts else _EMPTY
    return finish(values, self.dtype), finish(inverse, INT64), finish(counts, INT64)


@kernel("_unique2")
def _unique2(self, sorted=True, return_inverse=False, return_counts=False):
    return _flat_unique(self, True, return_inverse, return_counts)


@kernel("_unique")
def _unique(self, sorted=True, return_inverse=False):
    return _flat_unique(self, True, return_inverse, False)[:2]


def _dim_unique(self, dim, consecutive, return_inverse, return_counts):
    if self.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, self.dim())
    dispatch("unique_dim", self.dtype, _UNIQUE)
    a = arr(self)
    if self._size[d] == 0:
        if sum(1 for s in self._size if s == 0) != 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot "
                               "be applied ")
        return finish(a.copy(), self.dtype), finish(_EMPTY, INT64), finish(_EMPTY, INT64)
    if 0 in self._size:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    rows = np.moveaxis(values_of(self), d, 0).reshape(self._size[d], -1)
    order = np.arange(rows.shape[0]) if consecutive else \
        np.lexsort(rows.T[::-1], axis=-1) if rows.shape[1] else np.arange(rows.shape[0])
    s = rows[order]
    new = np.ones(s.shape[0], bool)
    new[1:] = ~np.all(s[1:] == s[:-1], axis=1)
    starts, gid = np.flatnonzero(new), np.cumsum(new) - 1
    # gathered along the dim moved first, contiguous, then moved back (Unique.cpp)
    values = np.moveaxis(np.ascontiguousarray(np.moveaxis(a, d, 0)[order[starts]]), 0, d)
    inverse = np.empty(rows.shape[0], np.int64)
    inverse[order] = gid
    counts = np.diff(np.append(starts, rows.shape[0]))
    return wrap(values, self.dtype), finish(inverse, INT64), finish(counts, INT64)


@kernel("unique_dim")
def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    return _dim_unique(self, dim, False, return_inverse, return_counts)


@kernel("unique_dim_consecutive")
def unique_dim_consecutive(self, dim, return_inverse=False, return_counts=False):
    return _dim_unique(self, dim, True, return_inverse, return_counts)


@kernel("unique_consecutive")
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        return _dim_unique(self, dim, True, return_inverse, return_counts)
    return _flat_unique(self, False, return_inverse, return_counts)
