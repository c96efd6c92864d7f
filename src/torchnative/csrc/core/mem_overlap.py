"""Memory overlap as ATen's MemoryOverlap.cpp judges it, and its refusals.

A written tensor may not have two elements at one address (internal overlap: a stride of 0
over more than one element), and an input may not share only some of the written tensor's
elements (partial overlap: two non-overlapping dense tensors on one storage whose byte ranges
meet without coinciding, or coincide with other strides). Upstream checks both before writing
(every TensorIterator operation that writes in place or into ``out=``, copy_, the index and
scatter families), so a written result never depends on the order elements were visited in.
"""

from __future__ import annotations

NO, YES, TOO_HARD = 0, 1, 2  # at::MemOverlap


def internal_overlap(t) -> int:
    """at::has_internal_overlap: NO for a non-overlapping dense tensor, YES when a dimension of
    more than one element has stride 0, TOO_HARD otherwise."""
    if t._non_overlapping_and_dense():
        return NO
    if any(st == 0 and sz > 1 for sz, st in zip(t._size, t._stride)):
        return YES
    return TOO_HARD


def assert_no_internal_overlap(t) -> None:
    if 0 in t._stride and internal_overlap(t) == YES:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor "
                           "refers to a single memory location. Please clone() the tensor before "
                           "performing the operation.")


def overlap_status(a, b) -> str:
    """at::get_overlap_status: "full", "partial" or "" (none, or too hard to tell; an absent
    optional tensor, None, overlaps nothing)."""
    if a is None or b is None:
        return ""
    if a is b:
        return "full"
    st = a._st  # a storage object is made once and never shared by accident: identity is aliasing
    if st is None or st is not b._st:
        return ""
    na, nb = a.numel(), b.numel()
    if na == 0 or nb == 0:
        return ""
    if not (a._non_overlapping_and_dense() and b._non_overlapping_and_dense()):
        return ""
    ia, ib = a._dtype.itemsize, b._dtype.itemsize
    a0, b0 = a._offset * ia, b._offset * ib
    a1, b1 = a0 + na * ia, b0 + nb * ib
    if a0 == b0 and a1 == b1:
        return "full" if tuple(a._stride) == tuple(b._stride) else "partial"
    return "partial" if a0 < b1 and b0 < a1 else ""


def _overlap_error():
    raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                       "written-to tensor refer to a single memory location. Please clone() "
                       "the tensor before performing the operation.")


def assert_no_partial_overlap(a, b) -> None:
    """at::assert_no_partial_overlap: the very same elements (an in-place operand that is self,
    an out= that is the input) pass."""
    if overlap_status(a, b) == "partial":
        _overlap_error()


def assert_no_overlap(a, b) -> None:
    """at::assert_no_overlap: any shared element refuses."""
    if overlap_status(a, b):
        _overlap_error()


def check_written(out, inputs) -> None:
    """TensorIterator's compute_mem_overlaps for one written tensor and its inputs (tensors and
    anything else, which is skipped)."""
    assert_no_internal_overlap(out)
    st = out._st
    if st is None:
        return  # a fresh result's storage is its own: no input can share it
    for t in inputs:
        if getattr(t, "_st", None) is st and t is not out:
            assert_no_partial_overlap(out, t)
