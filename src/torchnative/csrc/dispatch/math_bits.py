"""The Conjugate and Negative fallbacks: a call with a lazily conjugated or negated tensor.

Upstream (ConjugateFallback.cpp, NegateFallback.cpp, MathBitsFallback.h) runs these keys below
autograd and above Python dispatch. An operator that does not handle the bits itself sees its
bit-carrying inputs resolved into fresh tensors (``clone``, which materializes the values); a
written argument carrying a bit is cloned, the operator writes the clone, and the clone is copied
back (``copy_`` writes through the bit). View operators pass, their kernels carry the bits to the
view, as do the listed operators that never read values. The door sends a call here only when
``core.conj_neg_bits.LIVE`` is set and an argument carries a bit.

``copy_`` and ``clone`` pass: their kernels handle the bits as upstream's do (``clone`` gives the
values the tensor reads as; ``copy_`` into a tensor with bits writes raw memory that reads as the
source), so a ``__torch_dispatch__`` mode that calls them again resolves nothing twice.
"""

from __future__ import annotations

from typing import Any, Callable

from ..core.conj_neg_bits import CONJ, NEG, bits_in
from ..core.tensor import TensorBase
from ..ops.dispatcher import REGISTRY

# Operators that read no values (they make tensors from metadata, or rewrite self's geometry or
# storage), passed as upstream's fallthrough lists do (MathBitFallThroughLists.h and the two
# fallback files); conj_physical_ / neg_ work on raw memory, which reads right through the bit
_NEITHER = frozenset((
    "set_.source_Storage_storage_offset", "set_.source_Storage", "set_.source_Tensor", "set_",
    "empty_like", "empty.memory_format", "empty.out", "empty_strided", "full_like",
    "requires_grad_", "as_strided_", "detach_", "resize_", "resize_as_",
    "_has_same_storage_numel", "_new_zeros_with_same_feature_meta",
    "clone", "copy_",  # their kernels read and write through the bits (kernels/copy.py)
))
_PASS = {CONJ: _NEITHER | {"conj_physical_"}, NEG: _NEITHER | {"neg_"}}

_OPS: dict = {}


def _op(name: str):
    handle = _OPS.get(name)
    if handle is None:
        handle = _OPS[name] = REGISTRY.find("aten::" + name, "")
    return handle


def _writes(op) -> bool | None:
    """True for an in-place/out= operator, False for a view, None when no argument aliases."""
    found = op.cache.get("math_bits_writes", 0)
    if found == 0:
        found = None
        for a in op.schema.arguments:
            if a.alias_info is not None:
                found = a.alias_info.is_write
                break
        op.cache["math_bits_writes"] = found
    return found


def resolve(tensor: TensorBase, run: Callable) -> TensorBase:
    """A fresh tensor holding the values ``tensor`` reads as (upstream: ``at::clone``)."""
    return run(_op("clone"), (tensor,), {})


def fallback(op, args: tuple, kwargs: dict, run: Callable) -> Any:
    """Run ``op`` on arguments of which at least one carries a bit; ``run(op, args, kwargs)``
    continues below the fallback (Python dispatch, then the kernel)."""
    name = op.name[6:] if op.name.startswith("aten::") else op.name
    writes = _writes(op)
    if writes is False:
        return run(op, args, kwargs)  # a view: its kernel carries the bits over
    seen = bits_in(args) | bits_in(kwargs.values())
    if all(name in _PASS[bit] for bit in (CONJ, NEG) if seen & bit):
        return run(op, args, kwargs)
    written = []  # (the caller's tensor, the resolved clone the operator writes instead)
    positional = list(args)
    names = [a.name for a in op.schema.arguments]
    mutable = {a.name for a in op.schema.arguments
               if a.alias_info is not None and a.alias_info.is_write} if writes else ()

    def resolved(value, arg_name):
        if isinstance(value, TensorBase):
            if not value._math_bits:
                return value
            r = resolve(value, run)
            if arg_name in mutable:
                if written:
                    raise RuntimeError(f"{_key(seen)} fallback does not support operators with "
                                       f"more than one mutable tensors with {_key(seen)}bit "
                                       "set to true.")
                written.append((value, r))
            return r
        if isinstance(value, (list, tuple)) and any(
                isinstance(x, TensorBase) and x._math_bits for x in value):
            if arg_name in mutable:
                raise RuntimeError(f" fallback doesn't currently support mutable TensorLists "
                                   f"with {_key(seen)} inputs. Please materialize all the "
                                   f"{_key(seen)} input tensor(s) in the mutable TensorList "
                                   f"inputs before calling {op.schema.name}")
            items = [resolve(x, run) if isinstance(x, TensorBase) and x._math_bits else x
                     for x in value]
            return type(value)(items) if isinstance(value, tuple) else items
        return value

    for i, v in enumerate(positional):
        positional[i] = resolved(v, names[i] if i < len(names) else None)
    kw = {k: resolved(v, k) for k, v in kwargs.items()}
    result = run(op, tuple(positional), kw)
    for original, clone_ in written:
        from .structured import resize_out

        resize_out(original, clone_._size)
        run(_op("copy_"), (original, clone_), {})
        result = _swap(result, clone_, original)
    return result


def _key(seen: int) -> str:
    return "Conjugate" if seen & CONJ else "Negative"


def _swap(result, clone_, original):
    """The operator returns the tensor it wrote: the caller gets its own tensor back."""
    if result is clone_:
        return original
    if isinstance(result, tuple):
        items = [original if r is clone_ else r for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    return result
