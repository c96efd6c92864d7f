"""Forward-AD levels and the tangents tensors carry (upstream's ForwardADLevel and ForwardGrad,
torch/csrc/autograd/forward_grad.h, and AutogradMeta::fw_grad / set_fw_grad, variable.cpp).

A tensor's tangents live in its ``_tn_fw`` slot ({level: tangent}); each level remembers
(weakly) the tensors holding a tangent for it and clears them when it is exited, as upstream's
level releases its grads. As upstream, only one level exists at a time.

Views: the tangent of a view made by a forward-differentiable view operator comes from its
formula (a view of the input's tangent). A view without a tangent of its own whose base gained
one (an in-place operation on the base or on a sibling view) reads its slice of the base's
tangent on first use. An in-place operation on a view that had no tangent gives the base a zero
tangent first, so that the view's tangent is a view of the base's. ``_make_dual``'s and
``_fw_primal``'s results are views that are not forward-differentiable at their level and above
(``_tn_fw_nonview`` holds that level).

Nesting (torch.func's jvp inside jvp): upstream keeps one dual level and tells nested jvp levels
apart by functorch's per-level wrappers, each with its own tangent. Here every jvp level past the
first pushes one more level of ``_LEVELS`` (``push_nested`` / ``pop_nested``) and a tensor keeps
one tangent per level. The public level number 0 means the innermost level (``resolve``), as
upstream's level 0 means the innermost wrapper. While the door computes level L's tangents, the
levels at and above L are hidden (``hide_from``): what runs below and the formulas themselves
carry only the outer levels' tangents, which makes an inner tangent differentiable by the outer
levels.
"""

from __future__ import annotations

import threading
import weakref

from ...core.grad_mode import TLS as _GRAD

_LEVELS: list = []  # [WeakSet of tensors holding a tangent at level i]
_HOOK: list = [None, None]  # (install, uninstall) the door's forward-AD entry, set by __init__
# torch.func.jvp levels open now (functorch's jvp keeps it); the first one's level is the dual
# level upstream's Python enters, each deeper one pushes a nested level
JVP_DEPTH: list = [0]


class _TLS(threading.local):
    def __init__(self):
        self.hidden = None  # levels >= this are hidden (None: none is)
        self.formula_level = 0  # the level whose formulas are being evaluated


TLS = _TLS()


def enter_dual_level() -> int:
    if _LEVELS:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _push()
    return 0


def _push() -> None:
    _LEVELS.append(weakref.WeakSet())
    if len(_LEVELS) == 1 and _HOOK[0] is not None:
        _HOOK[0]()


def exit_dual_level(*, level: int) -> None:
    if level != len(_LEVELS) - 1:
        raise RuntimeError("Exiting a forward AD level that is not the last that was created is "
                           "not support. Ensure they are released in the reverse order they "
                           "were created.")
    _pop()


def _pop() -> None:
    level = len(_LEVELS) - 1
    holders = _LEVELS.pop()
    for t in list(holders):
        grads = getattr(t, "_tn_fw", None)
        if grads is not None:
            grads.pop(level, None)
    if not _LEVELS and _HOOK[1] is not None:
        _HOOK[1]()


def push_nested() -> None:
    """A jvp level inside another: one more level (the outermost is the entered dual level)."""
    _push()


def pop_nested() -> None:
    _pop()


def active() -> bool:
    return bool(_LEVELS)


def current() -> int:
    """The innermost level not hidden: what the public level 0 names."""
    hidden = TLS.hidden
    return (len(_LEVELS) if hidden is None else hidden) - 1


def resolve(level: int) -> int:
    """A level number from Python (upstream's only level, 0) as the level it names here."""
    return current() if level == 0 and len(_LEVELS) > 1 else level


class hide_from:
    """Hide levels >= ``level`` (the door computing that level's tangents)."""

    __slots__ = ("level", "prev")

    def __init__(self, level: int):
        self.level = level

    def __enter__(self):
        self.prev = TLS.hidden
        TLS.hidden = self.level if self.prev is None else min(self.prev, self.level)

    def __exit__(self, *exc):
        TLS.hidden = self.prev


def _visible(level: int) -> bool:
    hidden = TLS.hidden
    return level < len(_LEVELS) and (hidden is None or level < hidden)


def fw_grad(t, level: int = 0):
    """``t._fw_grad(level)``: the tangent, or None (also when forward grad mode is off or the
    level is hidden)."""
    if not _GRAD.fw_grad or not _visible(level):
        return None
    return _tangent(t, level)


def _tangent(t, level: int):
    grads = getattr(t, "_tn_fw", None)
    if grads is not None:
        g = grads.get(level)
        if g is not None:
            return g
    base = t._view_base
    nonview = getattr(t, "_tn_fw_nonview", None)
    if base is None or (nonview is not None and level >= nonview):
        return None
    bgrad = (getattr(base, "_tn_fw", None) or {}).get(level)
    if bgrad is None:
        return None
    # a view whose base gained a tangent after the view was made: its slice of it
    g = bgrad.as_strided(t._size, t._stride, bgrad._offset + t._offset - base._offset)
    _store(t, g, level)
    return g


def formula_tangent(t):
    """The tangent at the level whose formulas are running (hidden from the operators the
    formula calls, not from the formula's own helpers)."""
    return _tangent(t, TLS.formula_level) if _GRAD.fw_grad else None


def top_level(args) -> int:
    """The innermost visible level at which a tensor among ``args`` has a tangent (-1: none)."""
    top = -1
    for lvl in range(current(), -1, -1):
        for a in args:
            if _tangent(a, lvl) is not None:
                return lvl
    return top


def has_fw_grad(t) -> bool:
    """Cheap test for the door: a tangent at a visible level, directly or through a base."""
    grads = getattr(t, "_tn_fw", None)
    hidden = TLS.hidden
    if grads:
        if hidden is None or any(lvl < hidden for lvl in grads):
            return True
    base = t._view_base
    if base is None:
        return False
    nonview = getattr(t, "_tn_fw_nonview", None)
    if nonview == 0:
        return False
    bgrads = getattr(base, "_tn_fw", None)
    if not bgrads:
        return False
    limit = min(x for x in (hidden, nonview) if x is not None) \
        if hidden is not None or nonview is not None else None
    return limit is None or any(lvl < limit for lvl in bgrads)


def _store(t, g, level: int) -> None:
    grads = getattr(t, "_tn_fw", None)
    if grads is None:
        grads = t._tn_fw = {}
    known = level in grads
    grads[level] = g
    if not known:  # a WeakSet compares a tensor already in it with ==, elementwise
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
    existing = (getattr(t, "_tn_fw", None) or {}).get(level)
    if existing is new_grad:
        return
    if existing is not None and not is_inplace_op:
        raise RuntimeError("Trying to set a forward gradient that already exists, this is not "
                           "supported.")
    base = t._view_base
    nonview = getattr(t, "_tn_fw_nonview", None)
    if is_inplace_op and base is not None and (nonview is None or level < nonview) and \
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


def share_tangent(src, dst, below: int | None = None) -> None:
    """``dst``, a new tensor object over ``src``'s data (an alias), gets ``src``'s tangents
    (those of the levels under ``below`` only, when given)."""
    grads = getattr(src, "_tn_fw", None)
    if grads:
        for level, g in list(grads.items()):
            if level < len(_LEVELS) and (below is None or level < below):
                _store(dst, g, level)


def outer_tangents(src, dst, level: int) -> None:
    """``dst``, an alias of ``src`` made with forward AD off, gets ``src``'s tangents at the
    visible levels under ``level`` (through its base too), and is no forward view from
    ``level`` on."""
    for lvl in range(level):
        if _visible(lvl):
            g = _tangent(src, lvl)
            if g is not None and (getattr(dst, "_tn_fw", None) or {}).get(lvl) is None:
                _store(dst, g, lvl)
    mark_not_forward_view(dst, level)


def mark_not_forward_view(t, level: int = 0) -> None:
    """``t`` reads no tangent through its base at ``level`` and above."""
    prev = getattr(t, "_tn_fw_nonview", None)
    t._tn_fw_nonview = level if prev is None else min(prev, level)


def _enter() -> int:
    return enter_dual_level()


def _exit(*, level: int) -> None:
    exit_dual_level(level=level)


from ...kernels.support import nn_util as _nn_util  # noqa: E402

_nn_util.FORWARD_GRAD[0] = has_fw_grad  # composites ask whether a tangent needs more outputs

TORCH_C = {
    "torch._C._enter_dual_level": _enter,
    "torch._C._exit_dual_level": _exit,
}
