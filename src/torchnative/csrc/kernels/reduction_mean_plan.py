"""``mean(dim)`` of a dense float32/float64 tensor over its trailing dims, planned once per
(shape, dtype, dim, keepdim): what ``reduction.mean_dim`` computes on that path (the cascade's
contiguous-rows loop, ``+ 0``, the division by the count in the sum's dtype), without working
out the dims, the iteration geometry and the loop choice on every call. Every other mean (a
dtype argument, strides, other dims, threads that would split one row) keeps the general path.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .reduction_dims import reduce_axes, reduced_shape
from .reduction_rows import row_plan
from .support.cascade_sum import GRAIN_SIZE, VEC_BYTES, geometry

_NATIVE = frozenset((D.BY_NAME["float32"], D.BY_NAME["float64"]))

# (shape, dtype, dim, keepdim) -> plan, or False where the general path is taken
MEAN_PLANS: dict = {}


def mean_plan(t, dim, keepdim):
    """The plan for ``t.mean(dim, keepdim)`` (``t`` C-contiguous), or None."""
    shape = t._size
    if t._dtype not in _NATIVE or not shape or 0 in shape or dim is None:
        return None
    if len(MEAN_PLANS) > 256:
        MEAN_PLANS.clear()
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
    itemsize = t._np.itemsize
    vs = VEC_BYTES // itemsize
    g = geometry(shape, t._stride, axes)
    # CascadeSum.run's rows loop, taken whatever the thread count
    if not (g.rows and g.sizes[0] == n and g.sizes[1] == R and n >= vs and
            (R > 1 or R * n < GRAIN_SIZE)):
        return None
    rows = row_plan(R, n, vs)
    out_shape = reduced_shape(shape, axes, keepdim)
    zero = t._np.dtype.type(0)
    count = t._np.dtype.type(n)
    add, divide = np.add, np.divide

    def run(x):
        s = add(rows(x.reshape(R, n)), zero)
        divide(s, count, out=s)
        return s.reshape(out_shape)

    return run
