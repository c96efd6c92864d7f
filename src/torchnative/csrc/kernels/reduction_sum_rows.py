"""``sum(dim)`` of a dense float32/float64 tensor over its trailing dims (log_softmax's backward
sums each row of the gradient) or over all of them (``dim`` None: one row, a loss's ``sum()``),
planned once per (shape, dtype, dim, keepdim).

It computes what ``reduction.sum_dim`` computes on that path -- the cascade's contiguous-rows
loop (``cascade_rows.row_sums`` through ``reduction_rows.row_plan``), then ``+ 0`` -- without
working out the dims, the geometry and the loop choice on every call. Every other sum (a dtype
argument, strides, other dims, rows shorter than a vector) keeps the general path.

Rows of fewer than ``ILP`` vectors (``q == 0``: a class dimension of 10) are summed directly:
``row_sums`` starts the lanes from zero partial sums, and ``0 + v`` differs from ``v`` only in
the sign of a zero; a zero's sign reaches the row's sum only as the sign of a zero sum, which
the final ``+ 0`` makes +0 on both paths (NaN and infinities pass through unchanged).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .reduction_dims import reduce_axes, reduced_shape
from .reduction_rows import row_plan
from .support.cascade_rows import ILP
from .support.cascade_sum import GRAIN_SIZE, VEC_BYTES, geometry

_NATIVE = frozenset((D.BY_NAME["float32"], D.BY_NAME["float64"]))

# (shape, dtype, dim, keepdim) -> plan, or False where the general path is taken
ROW_SUM_PLANS: dict = {}


def trailing_rows(t, dim):
    """``t`` (C-contiguous, float32/float64) reduced over trailing dims ``dim`` as the cascade's
    contiguous-rows loop reduces it, whatever the thread count: (rows R, row length n, lanes
    vs, axes), or None where the general path decides (errors included)."""
    shape = t._size
    if t._dtype not in _NATIVE or not shape or 0 in shape:
        return None
    try:
        axes = reduce_axes(t, dim)
    except (RuntimeError, IndexError, TypeError):
        return None          # the general path raises upstream's error
    nd = len(shape)
    if not axes or axes != tuple(range(axes[0], nd)):
        return None
    n = R = 1
    for s in shape[axes[0]:]:
        n *= s
    for s in shape[:axes[0]]:
        R *= s
    vs = VEC_BYTES // t._np.itemsize
    g = geometry(shape, t._stride, axes)
    # CascadeSum.run's rows loop, taken whatever the thread count
    if not (g.rows and g.sizes[0] == n and g.sizes[1] == R and n >= vs and
            (R > 1 or R * n < GRAIN_SIZE)):
        return None
    return R, n, vs, axes


def sum_rows_plan(t, dim, keepdim):
    """The plan for ``t.sum(dim, keepdim)`` (``t`` C-contiguous, no dtype argument): a function
    of ``t``'s array, or None."""
    if len(ROW_SUM_PLANS) > 256:
        ROW_SUM_PLANS.clear()
    found = row_sum(t, dim, keepdim)
    return None if found is None else found[0]


def row_sum(t, dim, keepdim):
    """(the row-sum function of ``t``'s array, the count of each row), or None: the sum plan,
    and the mean plan's sum before its division."""
    found = trailing_rows(t, dim)
    if found is None:
        return None
    R, n, vs, axes = found
    rows = short_rows(n, vs) if n // vs < ILP else row_plan(R, n, vs)
    out_shape = reduced_shape(t._size, axes, keepdim)
    zero = t._np.dtype.type(0)
    add = np.add

    def run(x):
        return add(rows(x.reshape(R, n)), zero).reshape(out_shape)

    return run, n


def short_rows(n: int, vs: int):
    """``row_sums(X, vs)`` up to the sign of a zero, for rows of nv < ILP vectors: the vectors
    added left to right into the lanes, then the scalar tail and the lanes left to right."""
    nv = n // vs
    tail = n - nv * vs
    accumulate, concatenate, add = np.add.accumulate, np.concatenate, np.add

    def run(X):
        lanes = X[:, :vs]
        if nv > 1:
            lanes = add(lanes, X[:, vs:2 * vs])
            for j in range(2, nv):
                add(lanes, X[:, j * vs:(j + 1) * vs], out=lanes)
        if tail:
            lanes = concatenate((X[:, nv * vs:], lanes), axis=1)
        return accumulate(lanes, axis=1)[:, -1]

    return run
