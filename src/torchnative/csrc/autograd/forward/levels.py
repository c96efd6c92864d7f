"""Forward-AD levels and the tangents tensors carry (upstream's ForwardADLevel and ForwardGrad,
torch/csrc/autograd/forward_grad.h, and AutogradMeta::fw_grad / set_fw_grad, variable.cpp).

A tensor's tangents live in ``__dict__["_tn_fw"]`` ({level: tangent}); each level remembers
(weakly) the tensors holding a tangent for it and clears them when it is exited, as upstream's
level releases its grads. As upstream, only one level exists at a time.

Views: the tangent of a view made by a forward-differentiable view operator comes from its
formula (a view of the input's tangent). A view without a tangent of its own whose base gained
one (an in-place operation on the base or on a sibling view) reads its slice of the base's
tangent on first use. An in-place operation on a view that had no tangent gives the base a zero
tangent first, so that the view's tangent is a view of the base's. ``_make_dual``'s and
``_fw_primal``'s results are views that are not forward-differentiable (``_tn_fw_nonview``).
"""

from __future__ import annotations

import weakref

from ...core.grad_mode import TLS as _GRAD

_LEVELS: list = []  # [WeakSet of tensors holding a tangent at level i]
_HOOK: list = [None, None]  # (install, uninstall) the door's forward-AD entry, set by __init__
# torch.func.jvp levels open now (functorch's jvp keeps it): a tensor has one tangent, so a dual
# made inside a nested jvp level refuses (the nesting calls themselves must not fail: upstream's
# Python counts them in pairs)
JVP_DEPTH: list = [0]


def enter_dual_level() -> int:
    if _LEVELS:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _LEVELS.append(weakref.WeakSet())
    if _HOOK[0] is not None:
        _HOOK[0]()
    return len(_LEVELS) - 1


def exit_dual_level(*, level: int) -> None:
    if level != len(_LEVELS) - 1:
        raise RuntimeError("Exiting a forward AD level that is not the last that was created is "
                           "not support. Ensure they are released in the reverse order they "
                           "were created.")
    holders = _LEVELS.pop()
    for t in list(holders):
        grads = t.__dict__.get("_tn_fw")
        if grads is not None:
            grads.pop(level, None)
    if not _LEVELS and _HOOK[1] is not None:
        _HOOK[1]()


def active() -> bool:
    return bool(_LEVELS)


def fw_grad(t, level: int = 0):
    """``t._fw_grad(level)``: the tangent, or None (also when forward grad mode is off)."""
    if not _GRAD.fw_grad or level >= len(_LEVELS):
        return None
    d = t.__dict__
    grads = d.get("_tn_fw")
    if grads is not None:
        g = grads.get(level)
        if g is not None:
            return g
    base = t._view_base
    if base is None or d.get("_tn_fw_nonview"):
        return None
    bgrad = (base.__dict__.get("_tn_fw") or {}).get(level)
    if bgrad is None:
        return None
    # a view whose base gained a tangent after the view was made: its slice of it
    g = bgrad.as_strided(t._size, t._stride, bgrad._offset + t._offset - base._offset)
    _store(t, g, level)
    return g


def has_fw_grad(t) -> bool:
    """Cheap test for the door: a tangent at the current level, directly or through a base."""
    d = t.__dict__
    grads = d.get("_tn_fw")
    if grads:
        return True
    base = t._view_base
    return base is not None and not d.get("_tn_fw_nonview") and bool(base.__dict__.get("_tn_fw"))


def _store(t, g, level: int) -> None:
    grads = t.__dict__.get("_tn_fw")
    if grads is None:
        grads = t.__dict__["_tn_fw"] = {}
    grads[level] = g
    _LEVELS[level].add(t)


def _same_meta(a, b) -> bool:
    """upstream's has_same_meta: sizes, strides (where they matter), offset, storage extent."""
    if a._size != b._size:
        return False
    if a._np is None or b._np is None:
        return True  # no storage of its own (a vmap-batched tangent): its layout is its batch's
    if a._offset != b._offset:
        return False
    for n, sa, sb in zip(a._size, a._stride, b._stride):
        if n > 1 and sa != sb:
            return False
    return a.untyped_storage().nbytes() // a.element_size() == \
        b.untyped_storage().nbytes() // b.element_size()


def set_fw_grad(t, new_grad, level: int, is_inplace_op: bool) -> None:
    """``t._set_fw_grad(new_grad, level, is_inplace_op)`` (AutogradMeta::set_fw_grad)."""
    if level >= len(_LEVELS):
        raise RuntimeError(f"Invalid level given to set the forward gradient: {level}")
    if has_fw_grad(new_grad) and fw_grad(new_grad, level) is not None:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the "
                           f"same level{level} is not supported.")
    if tuple(t._size) != tuple(new_grad._size):
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(t._size)} while the given forward gradient is of size "
                           f"{list(new_grad._size)}.")
    current = (t.__dict__.get("_tn_fw") or {}).get(level)
    if current is new_grad:
        return
    if current is not None and not is_inplace_op:
        raise RuntimeError("Trying to set a forward gradient that already exists, this is not "
                           "supported.")
    base = t._view_base
    if is_inplace_op and base is not None and not t.__dict__.get("_tn_fw_nonview") and \
            fw_grad(base, level) is None:
        # the base gets a tangent, and this view's tangent is its slice of it
        if _same_meta(new_grad, base) and _same_meta(new_grad, t):
            base_grad = new_grad
        else:
            base_grad = _zeros_like_layout(new_grad, base)
            view_grad = base_grad.as_strided(t._size, t._stride, t._offset - base._offset)
            view_grad.copy_(new_grad)
            new_grad = view_grad
        set_fw_grad(base, base_grad, level, False)
    if not _same_meta(new_grad, t) and not (is_inplace_op and base is not None):
        res = new_grad.new_empty_strided(t._size, t._stride)
        res.copy_(new_grad)
        new_grad = res
    _store(t, new_grad, level)


def _zeros_like_layout(grad, base):
    """A zero tangent with the base's sizes and strides, in the tangent's dtype
    (upstream's _new_zeros_with_same_feature_meta without batch dimensions)."""
    z = grad.new_empty_strided(base._size, base._stride)
    z.zero_()
    return z


def share_tangent(src, dst) -> None:
    """``dst``, a new tensor object over ``src``'s data (an alias), gets ``src``'s tangents."""
    grads = src.__dict__.get("_tn_fw")
    if grads:
        for level, g in grads.items():
            if level < len(_LEVELS):
                _store(dst, g, level)


def mark_not_forward_view(t) -> None:
    t.__dict__["_tn_fw_nonview"] = True


def _enter() -> int:
    return enter_dual_level()


def _exit(*, level: int) -> None:
    exit_dual_level(level=level)


TORCH_C = {
    "torch._C._enter_dual_level": _enter,
    "torch._C._exit_dual_level": _exit,
}
