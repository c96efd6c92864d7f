"""adaptive_max_pool3d (AdaptiveMaxPooling3d.cpp, AdaptiveMaxPoolKernel.cpp).

Output (t, h, w) pools the input window [start, end) per dimension, start = floor(o * in /
out), end = ceil((o + 1) * in / out); the kernel scans the window in (depth, row, column) order
and takes a value when it is greater than the running maximum or NaN — so the first maximum and
the last NaN win. The index is the position in the (T, H, W) plane. Both results are contiguous.
The backward is nn_adaptive_max_backward's."""

from __future__ import annotations

from ..ops.kernel_registry import kernel
from .nn_pool import (_FLOATS, _INT64, _check_sizes, _values, adaptive_max_checks,
                      adaptive_window_max)
from .support.common import wrap
from .support.nn_util import not_implemented


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
