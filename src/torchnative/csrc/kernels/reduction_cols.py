"""``sum(dim)`` of a dense float32/float64 tensor over its leading dims (a bias gradient: the
columns of (N, C) summed), planned once per (shape, dtype, dim, keepdim).

It computes what ``reduction.sum_dim`` computes on that path -- SumKernel.cpp's contiguous outer
loop (``cascade_sum._loop2d``): blocks of four vectors of columns through ``multi_row_sum``, the
columns left over one at a time through ``row_sum``, then ``+ 0`` -- without working out the dims,
the geometry, the store offsets and their sort on every call; with intra-op threads, per range of
columns as ``_split_dim`` splits them. Every other sum (a dtype argument, strides, other dims)
keeps the general path.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .reduction_dims import reduce_axes, reduced_shape
from .support.cascade_rows import ILP, multi_row_plan
from .support.cascade_sum import GRAIN_SIZE, VEC_BYTES, column_ranges, geometry
from .support.parallel import get_num_threads

_NATIVE = frozenset((D.BY_NAME["float32"], D.BY_NAME["float64"]))

# (shape, dtype, dim, keepdim) -> plan, or False where the general path is taken
COL_PLANS: dict = {}


def col_plan(t, dim, keepdim):
    """The plan for ``t.sum(dim, keepdim)`` (``t`` C-contiguous, no dtype argument), or None:
    a function of ``t``'s array. From ``GRAIN_SIZE`` elements on, intra-op threads split the
    columns (parallel_dim_reduction): each range of columns is summed as a block of its own, so
    the loop each column takes follows its range's width (``column_ranges``)."""
    shape = t._size
    if t._dtype not in _NATIVE or not shape or 0 in shape or dim is None:
        return None
    if len(COL_PLANS) > 256:
        COL_PLANS.clear()
    try:
        axes = reduce_axes(t, dim)
    except (RuntimeError, IndexError, TypeError):
        return None          # the general path raises upstream's error
    g = geometry(shape, t._stride, axes)
    if not (g.ndim == 2 and g.outs == [0, 1] and g.ins[1] == 1 and g.ins[0] == g.sizes[1]):
        return None
    R, C = g.sizes
    if R == 1 or C == 1:
        return None
    itemsize = t._np.itemsize
    out_shape = reduced_shape(shape, axes, keepdim)
    zero = t._np.dtype.type(0)
    whole = _columns(R, C, itemsize)
    if R * C < GRAIN_SIZE:
        def run(x):
            out = whole(x.reshape(R, C))
            np.add(out, zero, out=out)
            return out.reshape(out_shape)
        return run

    per = 128 // itemsize
    by_threads = {1: [(0, C, whole)]}

    def run_split(x):
        threads = get_num_threads()
        ranges = by_threads.get(threads)
        if ranges is None:
            ranges = by_threads[threads] = [
                (b, e, whole if (b, e) == (0, C) else _columns(R, e - b, itemsize))
                for b, e in column_ranges(C, threads, per)]
        X = x.reshape(R, C)
        if len(ranges) == 1:
            out = ranges[0][2](X)
        else:
            out = np.empty(C, x.dtype)
            for b, e, cols in ranges:
                out[b:e] = cols(X[:, b:e])
        np.add(out, zero, out=out)
        return out.reshape(out_shape)

    return run_split


def _columns(R: int, C: int, itemsize: int):
    """The column sums of an (R, C) block (rows may be wider apart: a range of a wider array),
    as _loop2d's contiguous outer loop stores them, before the final ``+ 0``."""
    vs = VEC_BYTES // itemsize
    # _loop2d's outer loop: blocks of 4 vectors when the columns hold a vector, else of 4 columns
    nb = C // (4 * vs) * (4 * vs) if C >= vs else C // 4 * 4
    q = R // ILP
    rest = C - nb
    # the cascades without their empty levels: the +0 added last makes any zero's sign +
    blocks = multi_row_plan(R, False) if nb else None
    parts = multi_row_plan(q, False) if rest and q else None
    left = R - q * ILP                   # rows row_sum adds after its first partial sum
    accumulate = np.add.accumulate

    def run(X):
        if not rest:
            return blocks(X[None])[0]
        out = np.empty(C, X.dtype)
        if nb:
            out[:nb] = blocks(X[None, :, :nb])[0]
        # row_sum: four interleaved cascades, the rows left over added into the first,
        # then the four joined left to right
        T = X[:, nb:] if nb else X
        if parts is None:      # fewer rows than ILP: the four partial sums are zeros
            z = np.zeros((1, rest), X.dtype)
            terms = np.concatenate((z, T, z, z, z))
        else:
            p = parts(T[:q * ILP].reshape(1, q, ILP * rest)).reshape(ILP, rest)
            terms = np.concatenate((p[:1], T[q * ILP:], p[1:])) if left else p
        out[nb:] = accumulate(terms, axis=0)[-1]
        return out

    return run
