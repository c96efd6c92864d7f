"""Grad levels (grad, grad_and_value, vjp, jacrev) over the one autograd engine.

Upstream gives each grad level its own autograd metadata (TensorWrapper). Here there is one
graph: lifting a tensor to a grad level makes a fresh node on it — an alias that keeps the
tensor's history when it has one (so an outer level differentiates through the inner one), a
detached leaf otherwise — and the transforms differentiate with ``create_graph=True`` with
respect to exactly those lifted tensors (``torch.autograd.grad`` with explicit inputs), so
levels do not see each other's perturbations.

Lowering a result back (``unwrap_for_grad``) keeps its history only where that history reaches
a tensor of an outer level (a leaf not lifted at this level or inside it); otherwise the result
is detached, as upstream's unwrapped value carries no autograd of the level that ended.
"""

from __future__ import annotations

from ..core.tensor import TensorBase
from . import levels
from .jvp import carry_tangent


def grad_increment_nesting() -> int:
    return levels.push("grad").number


def grad_decrement_nesting() -> int:
    return levels.pop("grad").number


def any_grad_level() -> bool:
    """Is a grad level active? (the engine then keeps the graph after a backward: the levels
    around this one differentiate through it)"""
    return any(lvl.kind == "grad" for lvl in levels.TLS.stack)


def wrap_for_grad(tensor, level_number: int):
    import torch

    level = levels.by_number(level_number)
    if not isinstance(tensor, TensorBase):
        return tensor
    with torch.enable_grad():
        if tensor.requires_grad:
            lifted = tensor.view_as(tensor)
        else:
            lifted = torch.ops.aten.detach.default(tensor)
            lifted._tn_grad_level = level
    carry_tangent(tensor, lifted)  # detach dropped it; upstream wraps the dual
    return lifted



def unwrap_for_grad(tensor, level_number: int):
    if not isinstance(tensor, TensorBase) or not tensor.requires_grad:
        return tensor
    level = levels.by_number(level_number) if level_number <= levels.depth() else None
    memo = level.info.setdefault("reach", {}) if level is not None else {}
    fn = tensor.grad_fn
    if fn is None:
        keep = _outer_leaf(tensor, level_number)
    else:
        keep = _reaches_outer(fn, level_number, memo)
    if keep:
        return tensor
    lowered = tensor.detach()
    carry_tangent(tensor, lowered)
    return lowered


def _outer_leaf(t, number: int) -> bool:
    lvl = getattr(t, "_tn_grad_level", None)
    if lvl is None:
        return True
    return lvl.alive and lvl.number < number


def _reaches_outer(fn, number: int, memo: dict) -> bool:
    """Does the graph below ``fn`` reach a leaf of an outer level? (iterative, memoized)"""
    stack = [fn]
    seen = set()
    while stack:
        node = stack.pop()
        key = id(node)
        hit = memo.get(key)
        if hit is not None:
            if hit:
                return True
            continue
        if key in seen:
            continue
        seen.add(key)
        var = getattr(node, "variable", None)
        if var is not None and _outer_leaf(var, number):
            memo[key] = True
            return True
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    for key in seen:
        memo[key] = False
    return False
