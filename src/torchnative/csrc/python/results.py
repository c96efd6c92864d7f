"""What a spelling returns for an operator's tuple or list result: upstream's Python bindings
give a Tensor[] return as a tuple and a multi-output operator's as its torch.return_types
named tuple."""

from __future__ import annotations


def as_returned(op, result):
    if type(result) is list:
        return tuple(result)
    if type(result) is tuple:
        return named(op, result)
    return result


def named(op, result: tuple):
    """Multi-output spellings return upstream's torch.return_types named tuples."""
    from ..ops.return_types import BY_OVERLOAD

    cls = BY_OVERLOAD.get(op.name.split("::", 1)[1])
    return cls(result) if cls is not None else result
