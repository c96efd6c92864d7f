"""Copies and conversions: copy_, _to_copy, clone, fill_, zero_, resize_, set_.

``copy_`` broadcasts the source and casts it with upstream's cast rules; ``clone`` and
``_to_copy`` keep the source's strides under ``preserve_format`` when it is dense and
non-overlapping (as upstream's ``empty_like`` does), else make it contiguous.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..core.conj_neg_bits import apply_bits
from ..core import dtypes as D
from ..core.cast import cast_array
from ..core.construct import checked_device, empty
from ..core.mem_overlap import check_written
from ..core.python_data import register_bf16_copy_nans
from ..core.layouts import channels_last, channels_last_3d, contiguous_format, preserve_format
from ..core.storage import new_storage
from ..core.tensor import TensorBase, contiguous_strides
from .simd_lanes import copy_nans
from .support.common import arr
from .support.broadcast import infer_size
from .support.iteration import infer_dense_strides
from .support.scalar import scalar_to
from ..dispatch.structured import register_copy
from ..ops.kernel_registry import kernel

_COMPLEX32 = D.BY_NAME["complex32"]
_BF16, _FLOAT64 = D.BY_NAME["bfloat16"], D.BY_NAME["float64"]
_COMPLEX64 = D.BY_NAME["complex64"]


def copy_into(dest: TensorBase, src: TensorBase) -> None:
    """Write ``src`` (broadcast to ``dest``'s shape, cast to its dtype) into ``dest``'s memory,
    ``src`` read through its lazy conjugate/negative bits (``dest``'s own bits are its caller's:
    ``copy_`` applies them; the math-bits fallback writes memory that already carries them)."""
    if dest._np is None:
        return  # meta: nothing to write
    if src._np is None:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    values = src._np
    if src._math_bits:
        values = apply_bits(values.copy(), src._math_bits)
    if src.dtype != dest.dtype:
        nans = partial(_bf16_nans, dest, src) if dest._dtype is _BF16 else None
        values = cast_array(values, src.dtype, dest.dtype, nans)
    try:
        np.copyto(dest._np, values, casting="unsafe")
    except ValueError:
        shape = infer_size(dest._size, src._size)  # TensorIterator's message for a mismatch
        raise RuntimeError(f"output with shape {list(dest._size)} doesn't match the broadcast "
                           f"shape {list(shape)}") from None


def _bf16_nans(dest, src, values):
    """The converted ``values`` of a float32/float64 -> bfloat16 copy that holds a NaN (cast_array
    calls this only then), broadcast to ``dest``'s shape with each NaN stored as upstream's copy
    kernel stores it (simd_lanes.py, copy_nans)."""
    shape = dest._size
    lead = len(shape) - len(src._size)
    src_strides = [0] * lead + [0 if n == 1 else st for n, st in zip(src._size, src._stride)]
    return copy_nans(values, shape, dest._stride, src_strides, src._dtype is _FLOAT64)


def _same_data(self, src) -> bool:
    """copy_'s early return: ``src`` is a view of exactly ``self``'s elements, read the same way."""
    st = self._st
    return st is not None and st is src._st and self._offset == src._offset and \
        tuple(self._stride) == tuple(src._stride) and tuple(self._size) == tuple(src._size) and \
        self._dtype is src._dtype and self._math_bits == src._math_bits


@kernel("copy_")
def copy_(self, src, non_blocking=False):
    if self is src or _same_data(self, src):
        return self
    check_written(self, (src,))  # the iterator's overlap checks
    if self._np is not None and src._np is not None and \
            np.shares_memory(self._np, src._np) and self._np is not src._np:
        src = _clone(src, contiguous_format)  # overlapping copies read the source first
    copy_into(self, src)
    if self._math_bits and self._np is not None:
        apply_bits(self._np, self._math_bits)  # raw memory that reads as src through the bits
    return self


@kernel("copy", meta=True)
def copy(self, src, non_blocking=False):
    """The functional copy_: a new tensor like ``self`` holding ``src`` broadcast and cast."""
    out = _empty_like(self, self.dtype, self.device, None)
    if out._np is not None:
        copy_into(out, src)
    return out


def strides_for(src: TensorBase, memory_format) -> tuple:
    """Output strides upstream's empty_like picks for ``memory_format``."""
    size = src._size
    if memory_format is None or memory_format is preserve_format:
        # c10: a tensor without elements is contiguous, hence non-overlapping and dense, and
        # empty_like keeps its strides whatever they are
        if src._non_overlapping_and_dense() or 0 in size:
            return tuple(src._stride)
        # strided but not dense: dense strides in the input's memory order (empty_like's,
        # clone's and _to_copy's preserve rule)
        return infer_dense_strides(size, src._stride)
    if memory_format is channels_last and len(size) == 4:
        n, c, h, w = size
        return (h * w * c, 1, w * c, c)
    if memory_format is channels_last_3d and len(size) == 5:
        n, c, d, h, w = size
        return (d * h * w * c, 1, h * w * c, w * c, c)
    return contiguous_strides(size)


def _empty_like(src: TensorBase, dt, dev, memory_format) -> TensorBase:
    stride = strides_for(src, memory_format)
    return empty(src._size, dt, dev, stride=stride)


def _clone(src: TensorBase, memory_format) -> TensorBase:
    out = _empty_like(src, src.dtype, src.device, memory_format)
    if out._np is not None:
        np.copyto(out._np, arr(src))
        if src._math_bits:
            apply_bits(out._np, src._math_bits)  # the values src reads as, without its bits
    return out


@kernel("clone", meta=True)
def clone(self, *, memory_format=None):
    return _clone(self, memory_format)


@kernel("lift_fresh_copy", meta=True)
def lift_fresh_copy(self):
    return _clone(self, None)  # upstream's is self.clone()


@kernel("_to_copy", meta=True)
def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    dt = dtype or self.dtype
    dev = checked_device(device) if device is not None else self.device
    out = _empty_like(self, dt, dev, memory_format)
    if out._np is not None:
        if self._np is None:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        copy_into(out, self)
    return out


@kernel("fill_.Scalar", meta=True)
def fill_scalar(self, value):
    if self._np is not None:
        dt = self.dtype
        # overflow raises, as upstream's checked conversion -- except where its fill converts
        # otherwise (measured): one element of float16, bfloat16 or a float8 type is written
        # unchecked (inf past the range); more than one complex32 element is checked against
        # complex64's range, then written unchecked
        one = self._np.size == 1
        if one and (dt in D.REDUCED_FLOATING or dt in D.FLOAT8):
            self._np[...] = scalar_to(value, dt, checked=False)
        elif dt is _COMPLEX32 and not one:
            scalar_to(value, _COMPLEX64)
            self._np[...] = scalar_to(value, dt, checked=False)
        else:
            self._np[...] = scalar_to(value, dt)
    return self


@kernel("fill_.Tensor", meta=True)
def fill_tensor(self, value):
    if value.dim() != 0:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    if self._np is not None:
        self._np[...] = _cast_in(value.item(), self.dtype)
    return self


@kernel("zero_", meta=True)
def zero_(self):
    if self._np is not None:
        self._np[...] = 0
    return self


# The functional forms (CompositeExplicitAutograd upstream): empty_like(self), then the in-place
# kernel, so the layout is empty_like's and the value's checks are fill_'s.
@kernel("fill.Scalar")
def fill(self, value):
    return fill_scalar(_empty_like(self, self.dtype, self.device, None), value)


@kernel("fill.Tensor")
def fill_with_tensor(self, value):
    return fill_tensor(_empty_like(self, self.dtype, self.device, None), value)


@kernel("zero")
def zero(self):
    return zero_(_empty_like(self, self.dtype, self.device, None))


def _cast_in(value, dt):
    """A Python scalar converted to ``dt`` through the cast rules (no overflow check: the value
    of a 0-dim tensor, as fill_.Tensor copies it)."""
    src = D.PYTHON_TYPE_DTYPE[bool if isinstance(value, (bool, np.bool_)) else
                            int if isinstance(value, (int, np.integer)) else
                            complex if isinstance(value, complex) else float]
    return cast_array(np.asarray(value, dtype=D.numpy_dtype(src)), src, dt)


@kernel("resize_", meta=True)
def resize_(self, size, *, memory_format=None):
    """upstream's resize_ (Resize.cpp): a new size makes the tensor contiguous (an unchanged size
    keeps its strides) and grows the storage if it holds elements; ``memory_format`` then
    restrides it (TensorImpl::empty_tensor_restride)."""
    if self._requires_grad:  # VariableTypeManual's check, below autograd for no_grad too
        raise RuntimeError("cannot resize variables that require grad")
    size = tuple(int(s) for s in size)
    if any(s < 0 for s in size) and 0 not in size:
        raise RuntimeError("numel: integer multiplication overflow")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    stride = tuple(self._stride)
    if size != tuple(self._size):
        stride = contiguous_strides(size)
        numel = math.prod(size)
        if (numel + self._offset) * self.dtype.itemsize >= 1 << 64:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)}")
        if numel:
            nbytes = (self._offset + numel) * self.dtype.itemsize
            if nbytes > self._storage.nbytes():
                self._storage.resize_(nbytes)
    if memory_format is not None:
        if memory_format is preserve_format:
            raise RuntimeError("Unsupported memory formatPreserve")
        stride = _restride(size, memory_format)
    if size != tuple(self._size) or stride != tuple(self._stride):
        from ..core.tensor import numpy_view

        self._size, self._stride = size, stride
        self._np = numpy_view(self._storage, self._dtype, size, stride, self._offset)
    return self


def _restride(size: tuple, memory_format) -> tuple:
    """TensorImpl::empty_tensor_restride: the strides of ``memory_format`` for ``size``."""
    if memory_format is channels_last:
        if len(size) != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        n, c, h, w = size
        return (h * w * c, 1, w * c, c)
    if memory_format is channels_last_3d:
        if len(size) != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        n, c, d, h, w = size
        return (d * h * w * c, 1, h * w * c, w * c, c)
    return contiguous_strides(size)


@kernel("set_.source_Storage_storage_offset", meta=True)
def set_storage(self, source, storage_offset, size, stride=()):
    from ..core.tensor import numpy_view

    size = tuple(size)
    stride = tuple(stride) if stride else contiguous_strides(size)
    self._storage, self._offset = source, storage_offset
    self._size, self._stride = size, stride
    self._np = numpy_view(source, self._dtype, size, stride, storage_offset)
    return self


@kernel("set_.source_Storage", meta=True)
def set_source_storage(self, source):
    n = source.nbytes() // self.dtype.itemsize
    return set_storage(self, source, 0, (n,), (1,))


@kernel("set_.source_Tensor", meta=True)
def set_source_tensor(self, source):
    return set_storage(self, source._storage, source._offset, source._size, source._stride)


@kernel("set_", meta=True)
def set_empty(self):
    return set_storage(self, new_storage(0, self.device), 0, (0,), (1,))


register_copy(copy_into)
register_bf16_copy_nans(copy_nans)
