"""Queries about a tensor's representation: its lazy conjugate/negative bits
(core/conj_neg_bits.py), the zero-tensor flag (never set here), inference."""

from __future__ import annotations

from ..core.conj_neg_bits import CONJ, NEG, is_conj, is_neg
from ..core.mem_overlap import internal_overlap
from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from ..platform.torch_warn import torch_warn


@kernel("_is_zerotensor", meta=True)
def _is_zerotensor(self) -> bool:
    return False


# CompositeImplicitAutograd upstream: answered above the Conjugate/Negative fallback, which
# would otherwise resolve the very bit asked about
kernel("is_conj", composite=True)(is_conj)
kernel("is_neg", composite=True)(is_neg)


@kernel("is_inference", meta=True)
def is_inference(self) -> bool:
    return bool(self._tn_inference)


@kernel("resolve_conj", composite=True)
def resolve_conj(self):
    """self without the bit, else a clone (which resolves every bit, as upstream's copy_)."""
    return call("clone", self) if self._math_bits & CONJ else self


@kernel("resolve_neg", composite=True)
def resolve_neg(self):
    return call("clone", self) if self._math_bits & NEG else self


@kernel("is_same_size", meta=True)
def is_same_size(self, other) -> bool:
    return tuple(self._size) == tuple(other._size)


@kernel("is_set_to", meta=True)
def is_set_to(self, tensor) -> bool:
    return (self._storage is tensor._storage and self._offset == tensor._offset and
            self._size == tensor._size and self._stride == tensor._stride)


@kernel("is_nonzero")
def is_nonzero(self) -> bool:
    n = self.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.item())


@kernel("_debug_has_internal_overlap", meta=True)
def debug_has_internal_overlap(self) -> int:
    """0: no overlap, 1: overlap, 2: too hard to tell (at::has_internal_overlap)."""
    return internal_overlap(self)


@kernel("lift_fresh", meta=True)
def lift_fresh(self):
    """A tensor made from Python data entering the dispatcher: nothing to do outside tracing."""
    return self


@kernel("is_floating_point", meta=True)
def is_floating_point(self) -> bool:
    return self.dtype.is_floating_point


@kernel("is_complex", meta=True)
def is_complex(self) -> bool:
    return self.dtype.is_complex


@kernel("is_signed", meta=True)
def is_signed(self) -> bool:
    return self.dtype.is_signed


@kernel("promote_types", meta=True)
def promote_types(type1, type2):
    from ..core.promotion import promote_types as promote

    return promote(type1, type2)


@kernel("can_cast", composite=True)
def can_cast(from_, to):
    from ..core.promotion import can_cast as check

    return check(from_, to)


@kernel("_has_compatible_shallow_copy_type", meta=True)
def has_compatible_shallow_copy_type(self, from_) -> bool:
    """Can ``self.data = from_`` swap implementations? Dense tensors on the same device can."""
    return self.device.type == from_.device.type


@kernel("_local_scalar_dense")
def local_scalar_dense(self):
    """The one operator that reads a value out (Tensor.item() dispatches it, after its own
    count check): the first element, as upstream's CPU kernel reads its data pointer."""
    return self._scalar_value(first=True)


@kernel("sym_size.int", meta=True)
def sym_size(self, dim) -> int:
    return self.size(dim)


@kernel("sym_stride.int", meta=True)
def sym_stride(self, dim) -> int:
    return self.stride(dim)


@kernel("sym_storage_offset", meta=True)
def sym_storage_offset(self) -> int:
    return self.storage_offset()


@kernel("sym_is_contiguous", meta=True)
def sym_is_contiguous(self, memory_format=None) -> bool:
    from ..core.layouts import contiguous_format

    return self.is_contiguous(memory_format=memory_format or contiguous_format)


@kernel("is_pinned", meta=True)
def is_pinned(self, device=None) -> bool:
    """Pinned memory belongs to an accelerator's allocator; with none, no tensor is pinned (the
    answer upstream's CPU-only build gives)."""
    if device is not None:
        torch_warn("The argument 'device' of Tensor.is_pinned() is deprecated. Please do not "
                   "pass this argument.", DeprecationWarning)
    return False
