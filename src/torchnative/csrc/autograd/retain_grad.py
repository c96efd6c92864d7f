"""Tensor.retain_grad: core's TensorBase calls it through the hook this package installs."""

from __future__ import annotations

from .views import grad_fn_of, requires_grad


def retain_grad(t) -> None:
    """Tensor.retain_grad: a non-leaf keeps the gradient that reaches it in ``.grad``."""
    if not requires_grad(t):
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t._grad_fn is None or t._retains_grad:  # upstream's is_leaf() here reads the raw field
        return
    fn = grad_fn_of(t)
    fn._add_retains_grad(t)
    t._retains_grad = True
