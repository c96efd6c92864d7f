"""trace (ReduceOps.cpp's trace_cpu): the diagonal summed one element after another in the
CPU accumulate type from zero -- float for float16/bfloat16, double for float32 and float64,
complex<double> for both complex types, int64 for every integer type -- then stored in the
result dtype (self's; int64 for integer and bool inputs). The dtype is dispatched before the
dimension is checked; bool and complex32 are refused."""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..ops.kernel_registry import kernel
from .pointwise_base import ALL_H, COMPLEX, I64, INTEGRAL, REDUCED, check
from .support.common import as_compute, wrap

_C32 = D.BY_NAME["complex32"]
_ACC = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


@kernel("trace")
def trace(self):
    dt = self._dtype
    out_dt = I64 if dt in INTEGRAL or dt is D.BY_NAME["bool"] else dt
    check("trace", dt, ALL_H | (COMPLEX - {_C32}))
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    diag = np.diagonal(as_compute(self, dt))   # float16/bfloat16 widened to float
    acc = np.int64 if dt in INTEGRAL else diag.dtype if dt in REDUCED else \
        _ACC.get(diag.dtype, diag.dtype)
    # cumsum adds in order (a reduction would add pairwise), after the zero it starts from
    total = np.cumsum(np.concatenate([np.zeros(1, acc), diag.astype(acc)]))[-1]
    return wrap(np.asarray(total), out_dt)
