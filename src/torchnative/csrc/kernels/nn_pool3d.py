"""max_pool3d (Pooling.cpp): the CompositeImplicitAutograd operator is max_pool3d_with_indices'
values, as upstream writes it (so autograd sees max_pool3d_with_indices and its backward), and
that backward (DilatedMaxPool3d.cpp's CPU kernel)."""

from __future__ import annotations

import numpy as np

from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from .support.common import arr, as_compute, wrap


@kernel("max_pool3d", composite=True)
def max_pool3d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return call("max_pool3d_with_indices", self, kernel_size, stride, padding, dilation,
                ceil_mode)[0]


@kernel("max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    """Each output's gradient added at the input position its index names, output by output in
    order per plane, as upstream's CPU kernel; positions no window chose get zero."""
    if self.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    lead = tuple(self.shape[:-3])
    planes = 1
    for n in lead:
        planes *= n
    plane = self.shape[-3] * self.shape[-2] * self.shape[-1]
    dt = grad_output._dtype
    go = as_compute(grad_output, dt).reshape(planes, -1)
    idx = arr(indices).reshape(planes, -1)
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        raise RuntimeError(f"Found an invalid max index: {int(idx.max())} (output volumes are "
                           f"of size {self.shape[-3]}x{self.shape[-2]}x{self.shape[-1]}")
    grad = np.zeros((planes, plane), go.dtype)
    rows = np.broadcast_to(np.arange(planes)[:, None], idx.shape)
    np.add.at(grad, (rows, idx), go)
    return wrap(grad.reshape(tuple(self.shape)), dt)
