"""The Tensor[] overloads of atleast_1d/2d/3d (CompositeImplicitAutograd): each tensor through
the single-tensor operator, as upstream's loop does."""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import kernel


def _each(name: str):
    def run(tensors):
        return [call(name, t) for t in tensors]

    run.__name__ = f"{name}_sequence"
    return run


for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    kernel(f"{_name}.Sequence", composite=True)(_each(_name))
