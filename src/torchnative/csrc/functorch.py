"""functorch's C++ state (torch._C._functorch and friends): no transform is ever active here.

vmap/grad transforms (the FuncTorch dispatch keys) are not implemented; their entry points stay
refusing. What upstream calls outside transforms (a guard, "is anything active?") behaves.
"""

from __future__ import annotations


class DisableFuncTorch:
    """Guard that disables functorch transforms; with none active there is nothing to do."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def are_functorch_transforms_active() -> bool:
    return False


TORCH_C = {
    "torch._C._DisableFuncTorch": DisableFuncTorch,
    "torch._C._are_functorch_transforms_active": are_functorch_transforms_active,
}
