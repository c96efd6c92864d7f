"""``torch._C._any_requires_grad``: whether a call's arguments need the autograd graph (what
torch.library's autograd kernels ask before recording)."""

from __future__ import annotations

from ..core.tensor import TensorBase


def any_requires_grad(*args, **kwargs) -> bool:
    """True if a tensor argument, or a tensor in a list/tuple of only tensors, requires grad
    (upstream looks no deeper: a nested or mixed list, a dict, is not searched)."""
    for v in (*args, *kwargs.values()):
        if isinstance(v, TensorBase):
            if v.requires_grad:
                return True
        elif isinstance(v, (list, tuple)) and all(isinstance(x, TensorBase) for x in v):
            if any(x.requires_grad for x in v):
                return True
    return False


TORCH_C = {"torch._C._any_requires_grad": any_requires_grad}
