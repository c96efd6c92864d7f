"""Forward-mode levels of torch.func (jvp, jacfwd, hessian's outer jacobian) on the level stack.

torch.func.jvp pushes a jvp level and, for the outermost one, enters a forward-AD dual level
(autograd/forward): the duals it makes carry their tangents through every operator, batched
ones included when jacfwd vmaps over the tangents. Upstream nests jvp levels by wrapping tensors
per level over the one dual level; here a tensor has one tangent, so a dual made inside a nested
jvp level refuses by name (autograd/forward's ``_make_dual``).
"""

from __future__ import annotations

from ..autograd.forward.levels import JVP_DEPTH
from . import levels


def jvp_increment_nesting() -> int:
    JVP_DEPTH[0] += 1
    return levels.push("jvp").number


def jvp_decrement_nesting() -> int:
    JVP_DEPTH[0] -= 1
    return levels.pop("jvp").number


_F = "torch._C._functorch."

TORCH_C = {
    _F + "_jvp_increment_nesting": jvp_increment_nesting,
    _F + "_jvp_decrement_nesting": jvp_decrement_nesting,
}


def carry_tangent(src, dst, transform=None):
    """``dst`` made from ``src`` by a level's lifting or lowering (wrap/unwrap for grad, add or
    remove a batch dimension), which upstream does by wrapping the dual itself: here the
    tangent is carried over, transformed as the value was (``transform``). Returns ``dst``."""
    from ..autograd.forward import levels as fw

    if not fw.active() or dst is src or fw.fw_grad(dst, 0) is not None:
        return dst
    tangent = fw.fw_grad(src, 0)
    if tangent is not None:
        fw.mark_not_forward_view(dst)
        fw.set_fw_grad(dst, transform(tangent) if transform else tangent, 0, False)
    return dst
