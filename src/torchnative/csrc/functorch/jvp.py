"""Forward-mode levels of torch.func (jvp, jacfwd, hessian's outer jacobian) on the level stack.

torch.func.jvp pushes a jvp level; upstream's Python enters the forward-AD dual level for the
outermost one, and each jvp level inside it pushes a nested forward-AD level here
(autograd/forward/levels.py), where upstream wraps tensors per level over its one dual level. The
duals a level makes carry their tangents through every operator, batched ones included when
jacfwd vmaps over the tangents.
"""

from __future__ import annotations

from ..autograd.forward import levels as fw
from . import levels


def jvp_increment_nesting() -> int:
    fw.JVP_DEPTH[0] += 1
    if fw.JVP_DEPTH[0] > 1:
        fw.push_nested()
    return levels.push("jvp").number


def jvp_decrement_nesting() -> int:
    number = levels.pop("jvp").number
    if fw.JVP_DEPTH[0] > 1:
        fw.pop_nested()
    fw.JVP_DEPTH[0] -= 1
    return number


_F = "torch._C._functorch."

TORCH_C = {
    _F + "_jvp_increment_nesting": jvp_increment_nesting,
    _F + "_jvp_decrement_nesting": jvp_decrement_nesting,
}


def carry_tangent(src, dst, transform=None):
    """``dst`` made from ``src`` by a level's lifting or lowering (wrap/unwrap for grad, add or
    remove a batch dimension), which upstream does by wrapping the dual itself: here the
    tangents of every level are carried over, transformed as the value was (``transform``, which
    carries the tangents' own tangents of the outer levels). Returns ``dst``."""
    if not fw.active() or dst is src:
        return dst
    for level in range(fw.current() + 1):
        if fw.fw_grad(dst, level) is not None:
            continue
        tangent = fw.fw_grad(src, level)
        if tangent is not None:
            fw.mark_not_forward_view(dst, level)
            fw.set_fw_grad(dst, transform(tangent) if transform else tangent, level, False)
    return dst
