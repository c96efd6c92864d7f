"""How a tensor's ``.grad`` takes each gradient that reaches it (upstream's
AccumulateGrad::accumulateGrad): run by the AccumulateGrad node, and by the engine for a
non-leaf named in ``backward(inputs=...)``."""

from __future__ import annotations

from ..core.grad_mode import TLS as _GRAD


def accumulate_grad(variable, new_grad) -> None:
    """AccumulateGrad::accumulateGrad: the first gradient is copied in (with the variable's
    strides), later ones are added in place, or out of place when building a graph."""
    if new_grad is None:
        return
    grad = variable._grad
    if grad is None:
        if not _GRAD.grad_enabled:
            new_grad = new_grad.detach()
        variable._grad = _clone_obey_contract(new_grad, variable)
    elif not _GRAD.grad_enabled:
        grad.add_(new_grad)
        variable._grad = grad
    else:
        variable._grad = grad + new_grad
    hooks = variable._post_accumulate_grad_hooks
    if hooks:
        for hook in list(hooks.values()):
            hook(variable)


def _clone_obey_contract(g, variable):
    import torch

    if variable.is_non_overlapping_and_dense() and g._stride != variable._stride:
        out = torch.empty_strided(variable._size, variable._stride, dtype=g.dtype)
        out.copy_(g)
        return out
    if g.__dict__.get("_tn_buffer_owned") and not _GRAD.grad_enabled:
        return g
    return g.clone(memory_format=torch.contiguous_format if g.is_contiguous() else
                   torch.preserve_format)
