"""``mean(dim)`` of a dense float32/float64 tensor over its trailing or its leading dims, planned
once per (shape, dtype, dim, keepdim): what ``reduction.mean_dim`` computes on those paths (the
sum plan's cascade, ``+ 0``, the division by the count in the sum's dtype), without working out
the dims, the iteration geometry and the loop choice on every call. Every other mean (a dtype
argument, strides, other dims, threads that would split one row) keeps the general path.
"""

from __future__ import annotations

import numpy as np

from .reduction_cols import col_plan
from .reduction_dims import reduce_axes, reduced_numel
from .reduction_sum_rows import row_sum

# (shape, dtype, dim, keepdim) -> plan, or False where the general path is taken
MEAN_PLANS: dict = {}


def mean_plan(t, dim, keepdim):
    """The plan for ``t.mean(dim, keepdim)`` (``t`` C-contiguous), or None: the row-sum or the
    column-sum plan's sum, divided by the count in place."""
    if len(MEAN_PLANS) > 256:
        MEAN_PLANS.clear()
    found = row_sum(t, dim, keepdim)
    if found is not None:
        total, n = found
    else:
        total = col_plan(t, dim, keepdim)
        if total is None:
            return None
        n = reduced_numel(t, reduce_axes(t, dim))
    count = t._np.dtype.type(n)
    divide = np.divide

    def run(x):
        s = total(x)
        divide(s, count, out=s)
        return s

    return run
