"""adaptive_max_pool3d and its backward (AdaptiveMaxPooling3d.cpp, AdaptiveMaxPoolKernel.cpp).

Output (t, h, w) pools the input window [start, end) per dimension, start = floor(o * in /
out), end = ceil((o + 1) * in / out); the kernel scans the window in (depth, row, column) order
and takes a value when it is greater than the running maximum or NaN — so the first maximum and
the last NaN win. The index is the position in the (T, H, W) plane. Both results are contiguous.
The backward adds each output's gradient at its index, outputs in order per plane."""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.cast import cast_array
from ..ops.kernel_registry import kernel
from .nn_pool import (_FLOATS, _INT64, _check_sizes, _values, adaptive_max_checks,
                      adaptive_window_max)
from .support.common import arr, as_compute, wrap
from .support.nn_util import not_implemented

_F32 = D.BY_NAME["float32"]


@kernel("adaptive_max_pool3d")
def adaptive_max_pool3d(self, output_size):
    adaptive_max_checks("adaptive_max_pool3d", self, output_size, 3)
    ot, oh, ow = (int(s) for s in output_size)
    dt = self._dtype
    out_shape = tuple(self.shape[:-3]) + (ot, oh, ow)
    _check_sizes(out_shape)
    if dt not in _FLOATS:
        raise not_implemented("adaptive_max_pool3d_cpu", dt)
    vals, idx = adaptive_window_max(_values(self), (ot, oh, ow))
    return wrap(vals, dt), wrap(idx, _INT64)


@kernel("adaptive_max_pool3d_backward")
def adaptive_max_pool3d_backward(grad_output, self, indices):
    lead = tuple(self.shape[:-3])
    planes = int(np.prod(lead)) if lead else 1
    plane = self.shape[-3] * self.shape[-2] * self.shape[-1]
    dt = grad_output._dtype
    go = as_compute(grad_output, dt).reshape(planes, -1)
    idx = arr(indices).reshape(planes, -1)
    grad = np.zeros((planes, plane), go.dtype)
    if go.dtype == D.numpy_dtype(dt):
        rows = np.broadcast_to(np.arange(planes)[:, None], idx.shape)
        np.add.at(grad, (rows, idx), go)
    else:  # float16/bfloat16: every += rounds to the dtype, in output order
        rows = np.arange(planes)
        for o in range(idx.shape[1]):
            acc = grad[rows, idx[:, o]] + go[:, o]
            grad[rows, idx[:, o]] = cast_array(cast_array(acc, _F32, dt), dt, _F32)
    return wrap(grad.reshape(tuple(self.shape)), dt)
