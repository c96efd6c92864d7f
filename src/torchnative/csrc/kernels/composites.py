"""Kernels for CompositeImplicitAutograd operators, written as upstream's C++ writes them: in
terms of other operators, each called through the door (so modes and autograd see those)."""

from __future__ import annotations

from ..layouts import contiguous_format
from .registry import kernel
from .views import compute_stride, infer_size


def _call(name, *args, **kwargs):
    from ..manual_bindings import call

    return call(name, *args, **kwargs)


@kernel("reshape", composite=True)
def reshape(self, shape):
    shape = infer_size(shape, self.numel())
    if compute_stride(self._size, self._stride, shape) is not None:
        return _call("view", self, shape)
    return _call("_unsafe_view", _call("clone", self, memory_format=contiguous_format), shape)
