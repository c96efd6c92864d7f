"""The ``*_copy`` variants of views that no other kernel or upstream decomposition serves (the
functionalization pass emits them when views are not reapplied). Upstream generates each as
the view followed by a contiguous clone (CompositeExplicitAutogradNonFunctional)."""

from __future__ import annotations

from ..core.layouts import contiguous_format
from ..dispatch.call import call
from ..ops.kernel_registry import kernel


@kernel("select_copy.int", meta=True)
def select_copy(self, dim, index):
    return call("clone", call("select.int", self, dim, index), memory_format=contiguous_format)


@kernel("slice_copy.Tensor", meta=True)
def slice_copy(self, dim=0, start=None, end=None, step=1):
    return call("clone", call("slice.Tensor", self, dim, start, end, step),
                memory_format=contiguous_format)


@kernel("split_copy.Tensor", meta=True)
def split_copy(self, split_size, dim=0):
    return [call("clone", t, memory_format=contiguous_format)
            for t in call("split.Tensor", self, split_size, dim)]
