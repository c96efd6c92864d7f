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
from .nn_pool import (_FLOATS, _INT64, _check_sizes, _end, _start, _values,
                      adaptive_max_checks, window_max)
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
    x = _values(self)
    t, h, w = x.shape[-3:]
    vals = np.empty(out_shape, x.dtype)
    idx = np.empty(out_shape, np.int64)
    for a in range(ot):
        t0, t1 = _start(a, ot, t), _end(a, ot, t)
        for b in range(oh):
            h0, h1 = _start(b, oh, h), _end(b, oh, h)
            for c in range(ow):
                w0, w1 = _start(c, ow, w), _end(c, ow, w)
                win = x[..., t0:t1, h0:h1, w0:w1].reshape(out_shape[:-3] + (-1,))
                pick = window_max(win)
                vals[..., a, b, c] = np.take_along_axis(win, pick[..., None], -1)[..., 0]
                kt, rest = np.divmod(pick, (h1 - h0) * (w1 - w0))
                kh, kw = np.divmod(rest, w1 - w0)
                idx[..., a, b, c] = ((t0 + kt) * h + (h0 + kh)) * w + (w0 + kw)
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
