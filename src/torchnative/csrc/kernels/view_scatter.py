"""Writes through a view of a new tensor (TensorShape.cpp, UnfoldBackward.cpp): the backward of
the views ``slice``, ``select``, ``diagonal`` and ``unfold`` (zeros of the input's sizes with the
gradient written through the view) and the ``*_scatter`` operators, ``as_strided``'s with them
(a copy of ``self`` that keeps its strides and storage offset, ``src`` written through the
view). Each is upstream's own composition of the view kernels and ``copy_``'s write, called
directly: the Python decompositions they replace ran a dozen dispatched calls each (a sliced
tensor's gradient took 44x upstream's time: bench/decomposed_ops.py)."""

from __future__ import annotations

import numpy as np

from ..core.conj_neg_bits import apply_bits
from ..core.mem_overlap import YES, internal_overlap
from ..core.tensor import make
from ..ops.kernel_registry import kernel
from .copy import _clone, copy_into
from .factories import zeros
from .support.broadcast import infer_size
from .views import as_strided, diagonal, select, slice_, unfold
from .support.common import int_list


def _zeros_of(grad, sizes):
    """at::zeros(input_sizes, grad.options())."""
    return zeros(sizes, dtype=grad._dtype, device=grad.device)


@kernel("slice_backward")
def slice_backward(grad_output, input_sizes, dim, start, end, step):
    out = _zeros_of(grad_output, input_sizes)
    copy_into(slice_(out, dim, start, end, step), grad_output)
    return out


@kernel("select_backward")
def select_backward(grad_output, input_sizes, dim, index):
    out = _zeros_of(grad_output, input_sizes)
    copy_into(select(out, dim, index), grad_output)
    return out


@kernel("diagonal_backward")
def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    out = _zeros_of(grad_output, input_sizes)
    copy_into(diagonal(out, offset, dim1, dim2), grad_output)
    return out


@kernel("unfold_backward")
def unfold_backward(grad_in, input_sizes, dim, size, step):
    if step <= 0:
        raise ValueError(f"step is {step} but must be > 0")
    out = _zeros_of(grad_in, input_sizes)
    if step >= size:  # the windows do not meet: one copy
        copy_into(unfold(out, dim, size, step), grad_in)
        return out
    if out._np is None or not out._np.size:
        return out
    # Overlapping windows: upstream's CPU kernel adds into each element, from zero, the windows
    # holding it in increasing window order, in the dtype itself, over as many windows as the
    # gradient has (it need not match the input: the elements past them stay zero, windows past
    # the input's end are cut).
    d = dim % len(input_sizes)
    folds, length = grad_in._size[d], input_sizes[d]
    reach = (folds - 1) * step + size
    buffer = out._np
    if reach > length:
        buffer = np.zeros(buffer.shape[:d] + (reach,) + buffer.shape[d + 1:], buffer.dtype)
    target = np.lib.stride_tricks.as_strided(
        buffer, buffer.shape[:d] + (folds,) + buffer.shape[d + 1:] + (size,),
        buffer.strides[:d] + (buffer.strides[d] * step,) + buffer.strides[d + 1:] +
        (buffer.strides[d],))
    source = grad_in._np
    if grad_in._math_bits:
        source = apply_bits(source.copy(), grad_in._math_bits)  # the values it reads as
    if source.shape != target.shape:
        infer_size(target.shape, source.shape)  # the iterator's message
        source = np.broadcast_to(source, target.shape)
    # For a fixed position r within the windows the elements written are distinct: one add per
    # r, from the last position down (window f holds element f*step + r: a later window, a
    # smaller r).
    lead = (slice(None),) * (target.ndim - 1)
    for r in range(size - 1, -1, -1):
        target[lead + (r,)] += source[lead + (r,)]
    if buffer is not out._np:
        out._np[...] = buffer[(slice(None),) * d + (slice(0, length),)]
    return out


def clone_preserve_strides(self):
    """A copy of ``self`` with its sizes, strides and storage offset (the *_scatter operators
    keep their input's layout): the whole storage copied and viewed as ``self`` -- or a plain
    clone where elements share memory (an expanded gradient), which could not be written."""
    if internal_overlap(self) == YES:
        return _clone(self, None)
    whole = self._storage._nbytes // self._np.itemsize if self._np is not None else 0
    copy = _clone(as_strided(self, (whole,), (1,), 0), None)
    # the same memory, as a new tensor (upstream's view of its clone is made below autograd)
    return make(copy._storage, self._dtype, self._size, self._stride, self._offset)


def _scatter(src, view):
    """``src`` written into ``view`` (of a clone of ``self``), the sizes checked first."""
    if tuple(view._size) != tuple(src._size):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{int_list(src._size)}, slice size = {int_list(view._size)}")
    copy_into(view, src)


@kernel("slice_scatter")
def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    out = clone_preserve_strides(self)
    _scatter(src, slice_(out, dim, start, end, step))
    return out


@kernel("select_scatter")
def select_scatter(self, src, dim, index):
    out = clone_preserve_strides(self)
    _scatter(src, select(out, dim, index))
    return out


@kernel("diagonal_scatter")
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    out = clone_preserve_strides(self)
    _scatter(src, diagonal(out, offset, dim1, dim2))
    return out


@kernel("as_strided_scatter")
def as_strided_scatter(self, src, size, stride, storage_offset=None):
    if self.requires_grad and not self.is_contiguous():
        raise RuntimeError("as_strided_scatter is currently only supported for contiguous inputs")
    out = clone_preserve_strides(self)
    _scatter(src, as_strided(out, size, stride, storage_offset))
    return out
