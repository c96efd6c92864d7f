"""max_pool3d (Pooling.cpp): the CompositeImplicitAutograd operator is max_pool3d_with_indices'
values, as upstream writes it (so autograd sees max_pool3d_with_indices and its backward)."""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import kernel


@kernel("max_pool3d", composite=True)
def max_pool3d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return call("max_pool3d_with_indices", self, kernel_size, stride, padding, dilation,
                ceil_mode)[0]
