"""``mean(dim)`` of a dense float32/float64 tensor over its trailing dims, planned once per
(shape, dtype, dim, keepdim): what ``reduction.mean_dim`` computes on that path (the cascade's
contiguous-rows loop, ``+ 0``, the division by the count in the sum's dtype), without working
out the dims, the iteration geometry and the loop choice on every call. Every other mean (a
dtype argument, strides, other dims, threads that would split one row) keeps the general path.
"""

from __future__ import annotations

import numpy as np

from .reduction_dims import reduced_shape
from .reduction_rows import row_plan
from .reduction_sum_rows import trailing_rows

# (shape, dtype, dim, keepdim) -> plan, or False where the general path is taken
MEAN_PLANS: dict = {}


def mean_plan(t, dim, keepdim):
    """The plan for ``t.mean(dim, keepdim)`` (``t`` C-contiguous), or None."""
    if len(MEAN_PLANS) > 256:
        MEAN_PLANS.clear()
    found = trailing_rows(t, dim)
    if found is None:
        return None
    R, n, vs, axes = found
    shape = t._size
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
