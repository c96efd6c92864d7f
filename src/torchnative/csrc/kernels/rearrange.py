"""Kernels that move a tensor's elements into a new arrangement, no arithmetic: ``rot90``
(TensorTransformations.cpp: a flip, then the two dimensions' strides swapped), ``channel_shuffle``
(ChanelShuffle.cpp: channels regrouped, in the input's suggested memory format) and
``block_diag`` (TensorShape.cpp: blocks copied onto the diagonal of zeros). They were served by
Python decompositions, 11-38x upstream's time (bench/decomposed_ops.py), with other layouts,
dtypes and messages."""

from __future__ import annotations

from ..core.construct import empty
from ..core.dtypes import get_default_dtype
from ..core.layouts import (channels_last, channels_last_3d, contiguous_format,
                             suggest_memory_format)
from ..core.tensor import make, wrap_dim
from ..ops.kernel_registry import kernel
from .copy import _clone, copy_into, strides_for
from .factories import zeros
from .joining import flip
from .support.common import arr, result_type
from .views import slice_


def _swapped(t, d0: int, d1: int):
    """``t.transpose_(d0, d1)`` of a fresh result: the same memory under swapped strides."""
    size, stride = list(t._size), list(t._stride)
    size[d0], size[d1] = size[d1], size[d0]
    stride[d0], stride[d1] = stride[d1], stride[d0]
    return make(t._storage, t._dtype, size, stride, t._offset)


@kernel("rot90")
def rot90(self, k=1, dims=(0, 1)):
    n = self.dim()
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = dims
    w0, w1 = wrap_dim(d0, n), wrap_dim(d1, n)  # (the range's IndexError first)
    if w0 == w1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4  # (Python's modulo is upstream's (4 + k % 4) % 4)
    if k == 1:
        return _swapped(flip(self, [d1]), w0, w1)
    if k == 2:
        return flip(self, [d0, d1])
    if k == 3:
        return _swapped(flip(self, [d0]), w0, w1)
    return _clone(self, contiguous_format)


@kernel("channel_shuffle")
def channel_shuffle(self, groups):
    if self.dim() <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(self._size)}")
    c = self._size[1]
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                           f"{groups} groups.")
    if not self.numel():  # upstream's alias, made below autograd: the same memory, no view
        return make(self._storage, self._dtype, self._size, self._stride, self._offset)
    return native_channel_shuffle(self, groups)


@kernel("native_channel_shuffle", meta=True)
def native_channel_shuffle(self, groups):
    """channel_shuffle_cpu: (N, g, C/g, *) read as (N, C/g, g, *), written in the input's
    suggested memory format."""
    size = self._size
    fmt = suggest_memory_format(size, self._stride)
    stride = strides_for(self, fmt) if fmt in (channels_last, channels_last_3d) else None
    out = empty(size, self._dtype, self.device, stride=stride)
    if out._np is not None and out._np.size:
        n, c = size[0], size[1]
        x = arr(self).reshape(n, groups, c // groups, *size[2:])
        out._np[...] = x.swapaxes(1, 2).reshape(size)
    return out


@kernel("block_diag")
def block_diag(tensors):
    if not tensors:
        return empty((1, 0), get_default_dtype())
    device = tensors[0].device
    for i, t in enumerate(tensors):
        if t.device != device:
            raise RuntimeError("torch.block_diag: input tensors must all be on the same device. "
                               f"Input 0 is on device {device} and input {i} is on device "
                               f"{t.device}")
    dtype = result_type(*tensors)
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
        blocks.append(t._size if t.dim() == 2 else (1, t._size[0] if t.dim() else 1))
    rows, cols = sum(b[0] for b in blocks), sum(b[1] for b in blocks)
    out = zeros((rows, cols), dtype=dtype, device=device)
    r = c = 0
    for t, (h, w) in zip(tensors, blocks):
        copy_into(slice_(slice_(out, 0, r, r + h), 1, c, c + w), t)
        r, c = r + h, c + w
    return out

