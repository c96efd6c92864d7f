"""as_strided_scatter (TensorShape.cpp): a clone of self (its strides kept, as clone keeps a
dense layout) with src written through the as_strided view of the clone."""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import kernel


def _sizes(s) -> str:
    return "[" + ", ".join(str(int(n)) for n in s) + "]"


@kernel("as_strided_scatter")
def as_strided_scatter(self, src, size, stride, storage_offset=None):
    if self.requires_grad and not self.is_contiguous():
        raise RuntimeError("as_strided_scatter is currently only supported for contiguous inputs")
    output = call("clone", self)
    view = call("as_strided", output, size, stride, storage_offset)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_sizes(src.shape)}, slice size = {_sizes(view.shape)}")
    call("copy_", view, src)
    return output
