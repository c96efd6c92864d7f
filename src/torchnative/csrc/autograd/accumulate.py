"""How a tensor's ``.grad`` takes each gradient that reaches it (upstream's
AccumulateGrad::accumulateGrad): run by the AccumulateGrad node, and by the engine for a
non-leaf named in ``backward(inputs=...)``."""

from __future__ import annotations

from ..core.grad_mode import TLS as _GRAD
from ..dispatch.call import call  # at::detach/add as the C++ calls them, not the Python bindings
from .graph_task import TLS as _TASK


def accumulate_grad(variable, new_grad) -> None:
    """AccumulateGrad::accumulateGrad: the first gradient is copied in (with the variable's
    strides), later ones are added in place, or out of place when building a graph."""
    if new_grad is None:
        return
    grad = variable._grad
    if grad is None:
        if not _GRAD.grad_enabled and _held_by_nothing_else(new_grad) and \
                _obeys_layout_contract(new_grad, variable):
            variable._grad = call("detach", new_grad)  # taken, not copied, as upstream
        else:
            variable._grad = _clone_obey_contract(new_grad, variable)
    elif not _GRAD.grad_enabled:
        call("add_.Tensor", grad, new_grad)
        variable._grad = grad
    else:
        variable._grad = call("add.Tensor", grad, new_grad)
    hooks = variable._post_accumulate_grad_hooks
    if hooks:
        for hook in list(hooks.values()):
            hook(variable)


def _clone_obey_contract(g, variable):
    import torch

    if variable._non_overlapping_and_dense() and g._stride != variable._stride:
        out = torch.empty_strided(variable._size, variable._stride, dtype=g.dtype)
        out.copy_(g)
        return out
    if getattr(g, "_tn_buffer_owned", None) and not _GRAD.grad_enabled:
        return g
    return g.clone(memory_format=torch.contiguous_format if g.is_contiguous() else
                   torch.preserve_format)


def mark_fresh(g) -> None:
    """The running pass made ``g`` and nothing outside it holds it (upstream reads this from the
    gradient's use count): the first gradient of a leaf may become its ``.grad`` uncopied."""
    g._tn_fresh = _TASK.task_id


def forget_fresh(g) -> None:
    if g is not None:
        g._tn_fresh = -1


def _held_by_nothing_else(g) -> bool:
    return getattr(g, "_tn_fresh", -1) == _TASK.task_id or \
        bool(getattr(g, "_tn_buffer_owned", False))


def _obeys_layout_contract(g, variable) -> bool:
    """utils::obeys_layout_contract: the variable's strides (where the size is not 1), or
    contiguous when the variable is not dense."""
    if variable._non_overlapping_and_dense():
        return all((gst == vst) if n != 1 else gst != 0
                   for n, gst, vst in zip(g._size, g._stride, variable._stride))
    return g.is_contiguous()
