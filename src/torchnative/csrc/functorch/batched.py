"""BatchedTensor: a tensor that presents one element of a batch (upstream's BatchedTensorImpl).

It is a ``torch.Tensor`` (as upstream's: ``type(x) is torch.Tensor``) whose geometry is the
logical one (the physical value's sizes and strides without the batch dimension) and which
holds no values of its own: its ``_tn_batched`` slot is ``(value, bdim, level)``, the
physical tensor, where its batch dimension is, and the vmap ``Level`` it belongs to. The value
may itself be batched at an outer level (nested vmap). Every operator call on it reaches the
batching layer (batching.py) through the door.
"""

from __future__ import annotations

from ..core.construct import make
from ..core.python_classes import tensor_class
from ..core.tensor import TensorBase
from . import levels
from .jvp import carry_tangent

_NO_VALUES = object()


def batched_info(t):
    """``(value, bdim, level)`` for a BatchedTensor, else None."""
    if isinstance(t, TensorBase):
        return getattr(t, "_tn_batched", None)
    return None


def is_batched(t) -> bool:
    return isinstance(t, TensorBase) and hasattr(t, "_tn_batched")


def make_batched(value, bdim: int, level: levels.Level):
    """A BatchedTensor over ``value`` with the batch along ``bdim`` at ``level``."""
    size = value._size[:bdim] + value._size[bdim + 1:]
    stride = value._stride[:bdim] + value._stride[bdim + 1:]
    t = make(None, value._dtype, size, stride, 0, tensor_class(), version_ref=value._version_ref,
             np_view=_NO_VALUES)
    t._np = None
    t._tn_batched = (value, bdim, level)
    return t


def add_batch_dim(tensor, bdim: int, level_number: int):
    level = levels.by_number(level_number)
    if level.kind != "vmap":
        raise RuntimeError(f"_add_batch_dim: level {level_number} is a {level.kind} level")
    n = tensor.dim()
    if not -n <= bdim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {bdim})")
    return carry_tangent(tensor, make_batched(tensor, bdim % n, level),
                         lambda t: add_batch_dim(t, bdim, level_number))


def remove_batch_dim(tensor, level_number: int, batch_size: int, out_dim: int):
    """The physical tensor with the batch along ``out_dim``; a tensor not batched at the level
    (its value does not depend on the batch) is expanded along it, as upstream's."""
    info = batched_info(tensor)
    if info is not None and info[2].number == level_number:
        value, bdim, _ = info
        out = value.movedim(bdim, out_dim) if bdim != out_dim else value
        return carry_tangent(tensor, out, lambda t: remove_batch_dim(t, level_number, batch_size,
                                                                     out_dim))
    size = list(tensor.shape)
    size.insert(out_dim, batch_size)
    return tensor.unsqueeze(out_dim).expand(size)


def unwrap_batched(tensor, level_number: int):
    """(value, bdim) at ``level_number``; (tensor, None) when not batched there."""
    info = batched_info(tensor)
    if info is not None and info[2].number == level_number:
        return info[0], info[1]
    return tensor, None


def no_values_error(tensor, what: str) -> None:
    """Reading a value from a BatchedTensor (``.item()``, ``bool()``) raises upstream's vmap
    errors: the value would differ per batch element."""
    if not is_batched(tensor):
        return
    if what == "item":
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations. If error is occurring somewhere inside PyTorch internals, please file "
            "a bug report.")
    raise RuntimeError(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
        "flow. We don't support that yet, please file an issue at "
        "https://github.com/pytorch/pytorch/issues .")
