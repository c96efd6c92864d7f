"""The ``*_copy`` variants of views that no other kernel or upstream decomposition serves (the
functionalization pass emits them when views are not reapplied). Upstream generates each as
the view followed by a contiguous clone (CompositeExplicitAutogradNonFunctional)."""

from __future__ import annotations

from ..core.layouts import contiguous_format
from ..dispatch.call import call
from ..dispatch.structured import _check_exact as check_exact_dtype, resize_out, write_into
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


# The list out= overloads upstream writes by hand (TensorShape.cpp): the parts' count is checked
# with the kernel's own name; split_copy then copy_()s each part (broadcasting and casting, out
# never resized), the other two resize each out and require the part's dtype exactly.
def _check_count(name: str, out, parts) -> None:
    if len(out) != len(parts):
        raise RuntimeError(f"{name} expected an out= argument of size {len(parts)}, got size {len(out)}")


def _resize_and_write(out, parts) -> None:
    for dest, part in zip(out, parts):
        resize_out(dest, part._size)
        check_exact_dtype(part.dtype, dest)
        write_into(dest, part)


@kernel("split_copy.Tensor_out")
def split_copy_out(self, split_size, dim=0, *, out):
    parts = call("split.Tensor", self, split_size, dim)
    _check_count("split_copy_Tensor_out()", out, parts)
    for dest, part in zip(out, parts):
        call("copy_", dest, part)


@kernel("split_with_sizes_copy.out")
def split_with_sizes_copy_out(self, split_sizes, dim=0, *, out):
    parts = call("split_with_sizes", self, split_sizes, dim)
    _check_count("split_with_sizes_copy_out", out, parts)
    _resize_and_write(out, parts)


@kernel("unbind_copy.int_out")
def unbind_copy_out(self, dim=0, *, out):
    parts = call("unbind.int", self, dim)
    _check_count("unbind_copy_int_out", out, parts)
    _resize_and_write(out, parts)
