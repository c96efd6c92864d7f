"""``sum(dim)`` of a dense float32/float64 tensor over its leading dims (a bias gradient: the
columns of (N, C) summed), planned once per (shape, dtype, dim, keepdim).

It computes what ``reduction.sum_dim`` computes on that path -- SumKernel.cpp's contiguous outer
loop (``cascade_sum._loop2d``): blocks of four vectors of columns through ``multi_row_sum``, the
columns left over one at a time through ``row_sum``, then ``+ 0`` -- without working out the dims,
the geometry, the store offsets and their sort on every call. Every other sum (a dtype argument,
strides, other dims, intra-op threads that would split the columns) keeps the general path.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .reduction_dims import reduce_axes, reduced_shape
from .support.cascade_rows import ILP, multi_row_plan
from .support.cascade_sum import GRAIN_SIZE, VEC_BYTES, geometry

_NATIVE = frozenset((D.BY_NAME["float32"], D.BY_NAME["float64"]))

# (shape, dtype, dim, keepdim) -> plan, or False where the general path is taken
COL_PLANS: dict = {}


def col_plan(t, dim, keepdim):
    """The plan for ``t.sum(dim, keepdim)`` (``t`` C-contiguous, no dtype argument), or None.
    A plan is a function of ``t``'s array and whether it may run (the thread count allows it)."""
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
    vs = VEC_BYTES // itemsize
    # _loop2d's outer loop: blocks of 4 vectors when the columns hold a vector, else of 4 columns
    nb = C // (4 * vs) * (4 * vs) if C >= vs else C // 4 * 4
    q = R // ILP
    rest = C - nb
    out_shape = reduced_shape(shape, axes, keepdim)
    zero = t._np.dtype.type(0)
    split = R * C >= GRAIN_SIZE          # threads would split the columns: the general path
    add, accumulate = np.add, np.add.accumulate
    # the cascades without their empty levels: the +0 added last makes any zero's sign +
    blocks = multi_row_plan(R, False) if nb else None
    parts = multi_row_plan(q, False) if rest and q else None
    left = R - q * ILP                   # rows row_sum adds after its first partial sum

    def run(x):
        X = x.reshape(R, C)
        if not rest:
            out = blocks(X[None])[0]
        else:
            out = np.empty(C, x.dtype)
            if nb:
                out[:nb] = blocks(X[None, :, :nb])[0]
            # row_sum: four interleaved cascades, the rows left over added into the first,
            # then the four joined left to right
            T = X[:, nb:] if nb else X
            if parts is None:      # fewer rows than ILP: the four partial sums are zeros
                z = np.zeros((1, rest), x.dtype)
                terms = np.concatenate((z, T, z, z, z))
            else:
                p = parts(T[:q * ILP].reshape(1, q, ILP * rest)).reshape(ILP, rest)
                terms = np.concatenate((p[:1], T[q * ILP:], p[1:])) if left else p
            out[nb:] = accumulate(terms, axis=0)[-1]
        add(out, zero, out=out)
        return out.reshape(out_shape)

    return run, split

