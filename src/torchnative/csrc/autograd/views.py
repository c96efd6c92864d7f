"""Views and in-place operations: the history of views (upstream's DifferentiableViewMeta,
VariableHooks::grad_fn, rebase_history, handle_view_on_rebase; torch/csrc/autograd/variable.cpp
and functions/tensor.cpp).

A view records its root base (``_view_base``, set by the view kernels) and, in
``_tn_view``, a two-item list: the version its history was computed at
(``attr_version``) and how it was created (``creation``, upstream's CreationMeta).

- An in-place op on a tensor that is not a view makes the op's node the tensor's grad_fn. On a
  view, the root base's grad_fn becomes CopySlices (which runs the op's node on the slice of the
  base's gradient the view covers).
- Every view of that base whose version moved past its ``attr_version`` (the modified view, its
  siblings, views of the modified base) gets, when its history is next read
  (``grad_fn_of``), a fresh AsStridedBackward0 reading its slice of the base's new history, as
  upstream's lazy grad_fn does. Views created in no_grad or inference mode, by a function
  returning several views, or inside a custom Function refuse that rebase with upstream's
  messages.

Views made by an operator that autograd recorded are stamped here (``stamp``). Views made below
autograd (nothing required grad, or grad mode off) are stamped by the view kernels through
``core.creation_meta.note_view``; a view that carries no stamp keeps the history it was made with.
"""

from __future__ import annotations

import weakref

from ..core.creation_meta import (DEFAULT, IN_CUSTOM_FUNCTION, INFERENCE_MODE, MULTI_OUTPUT_NODE,
                                  NO_GRAD_MODE, propagate as _propagate)
from ..core.grad_mode import TLS as _GRAD
from .graph_task import TLS as _TASK
from .node import Node, forward_name, gradient_edge, register_view_grad_fn


def stamp(view, base, creation: int) -> None:
    """A view made by an operator autograd recorded: its history is current at this version.

    Its root remembers it (weakly), so that an in-place op rebasing the root refreshes its
    ``_grad_fn`` at once; reading ``grad_fn_of`` would refresh it anyway. A leaf that requires
    grad is never rebased (in-place on it is refused), so its views are not remembered."""
    prev = base._tn_view if base._view_base is not None else None
    if prev is not None:
        creation = _propagate(prev[1], creation)
    view._tn_view = [view._version_ref[0], creation]
    root = view._view_base
    if root._grad_fn is not None or not root._requires_grad:
        views = getattr(root, "_tn_views", None)
        if views is None:
            views = root._tn_views = weakref.WeakSet()
        views.add(view)


def replace_view(old, new) -> None:
    """``new`` takes ``old``'s place among the views its root refreshes (a Python object made
    for the same view after the fact: Tensor.as_subclass into a class with slots)."""
    root = old._view_base
    views = getattr(root, "_tn_views", None) if root is not None else None
    # by identity: a WeakSet's own lookup would compare tensors with ==
    ref = next((r for r in views.data if r() is old), None) if views is not None else None
    if ref is not None:
        views.data.discard(ref)
        views.add(new)


def _refresh_views(root, skip=None) -> None:
    """After ``root`` was rebased: the views autograd made of it read their new history now
    (those whose rebase is refused keep theirs until read, where the refusal is raised)."""
    views = getattr(root, "_tn_views", None)
    if not views:
        return
    for v in list(views):
        if v is skip:
            continue
        meta = v._tn_view
        if meta is not None and meta[1] == DEFAULT and v._dtype == root._dtype:
            grad_fn_of(v)


def set_creation(view, creation: int) -> None:
    meta = view._tn_view
    if meta is None:
        view._tn_view = [view._version_ref[0], creation]
    else:
        meta[1] = creation


def requires_grad(t) -> bool:
    """Tensor.requires_grad as upstream answers it: its own flag or history, or, for a view, its
    base's (a view of a tensor that requires grad requires grad, even one made in no_grad)."""
    if t._requires_grad or t._grad_fn is not None:
        return True
    b = t._view_base
    return b is not None and (b._requires_grad or b._grad_fn is not None)


def grad_fn_of(t):
    """The tensor's grad_fn, refreshed for a view whose base (or a sibling view) was modified in
    place since its history was computed (upstream's VariableHooks::grad_fn)."""
    fn = t._grad_fn
    root = t._view_base
    if root is None:
        return fn
    meta = t._tn_view
    if meta is None:
        return fn
    if fn is None and not (root._requires_grad or root._grad_fn is not None):
        return None
    current = t._version_ref[0]
    if meta[0] != current:
        _handle_view_on_rebase(t, meta, indirect=True)
        _check_same_dtype(t, root)
        new = AsStridedBackward0(t, root)
        update_tensor_hooks(t, fn, new)
        t._grad_fn = new
        t._output_nr = 0
        t._requires_grad = True
        meta[0] = current
        return new
    return fn


def update_tensor_hooks(t, old_fn, new_fn) -> None:
    """update_tensor_hooks_on_new_gradfn: hooks registered from now on go to the new grad_fn
    (the old ones stay with the old node), and a retains_grad hook moves to the new one."""
    if getattr(t, "_tn_backward_hooks", None) is not None:
        t._tn_backward_hooks = None
    if t._retains_grad and old_fn is not None:
        rg = old_fn._retains_grad
        ref = rg.pop(t._output_nr, None) if rg else None
        if ref is None:
            ref = weakref.ref(t)
        if new_fn._retains_grad is None:
            new_fn._retains_grad = {}
        new_fn._retains_grad[0] = ref


def _check_same_dtype(view, root) -> None:
    """A view of another dtype (view_as_real, view(dtype)) cannot be read back with as_strided;
    upstream replays the view function there, which torchnative does not record."""
    if view._dtype != root._dtype:
        from ..core.refuse import TorchnativeNotImplementedError

        raise TorchnativeNotImplementedError(
            "autograd through an in-place change of a view whose dtype differs from its base's "
            f"({view._dtype} view of {root._dtype})",
            "upstream replays the view function there; torchnative rebases views with "
            "as_strided only")


def _handle_view_on_rebase(t, meta, indirect: bool) -> None:
    creation = meta[1]
    if creation == DEFAULT:
        return
    fn = t._grad_fn
    modified = "its base or another view of its base has been" if indirect else "is being"
    if creation in (INFERENCE_MODE, NO_GRAD_MODE) or fn is None:
        prefix = (f"Output {t._output_nr} of {forward_name(fn)} is a view of a view which was "
                  "created in"
                  if fn is not None else "A view was created in")
        if creation == INFERENCE_MODE:
            msg = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = (f"Output {t._output_nr} of {forward_name(fn)} is a view and {modified} modified "
               "inplace.")
    if creation == MULTI_OUTPUT_NODE:
        msg += (" This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should "
                "replace the inplace operation by an out-of-place one.")
    elif creation == NO_GRAD_MODE:
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can "
                "clarify your code by moving both the view and the inplace either both inside the "
                "no_grad block (if you don't want the inplace to be tracked) or both outside (if "
                "you want the inplace to be tracked).")
    elif creation == INFERENCE_MODE:
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can "
                "clarify your code by moving both the view and the inplace either both inside the "
                "inference_mode block (if you don't want the inplace to be tracked) or both "
                "outside (if you want the inplace to be tracked).")
    elif creation == IN_CUSTOM_FUNCTION:
        msg += (" This view was created inside a custom Function (or because an input was "
                "returned as-is) and the autograd logic to handle view+inplace would override the "
                "custom backward associated with the custom Function, leading to incorrect "
                "gradients. This behavior is forbidden. You can fix this by cloning the output of "
                "the custom Function.")
    raise RuntimeError(msg)


def check_inplace(t, any_requires_grad: bool) -> None:
    """check_inplace (VariableTypeUtils.h): what autograd refuses before an in-place op runs on
    ``t`` while recording."""
    if not (any_requires_grad and _GRAD.grad_enabled):
        return
    root = t._view_base
    if root is not None:
        meta = t._tn_view
        if meta is not None:
            _handle_view_on_rebase(t, meta, indirect=False)
        if requires_grad(t) and root._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        _check_same_dtype(t, root)
    # upstream reads the raw grad_fn here (a stale view is still a leaf to this check)
    if t._grad_fn is None and requires_grad(t):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def rebase_history(t, node) -> None:
    """The tensor ``t`` was modified in place by the op recorded as ``node`` (one input: the
    gradient of ``t``'s new value)."""
    root = t._view_base
    if root is None:
        old = t._grad_fn
        t._grad_fn = node
        t._output_nr = 0
        t._requires_grad = True
        update_tensor_hooks(t, old, node)
        _refresh_views(t)
        return
    _check_same_dtype(t, root)
    copy_slices = CopySlices(root, t, node)
    root._grad_fn = copy_slices
    root._output_nr = 0
    root._requires_grad = True
    meta = t._tn_view
    if meta is None:  # not stamped: the view was made below autograd and nobody recorded when
        meta = t._tn_view = [-1, DEFAULT]
    else:
        meta[0] = -1  # its history is out of date whatever the version says
    grad_fn_of(t)
    _refresh_views(root, t)


def _geometry(view, root):
    return (view._size, view._stride, view._offset - root._offset)


class CopySlices(Node):
    """The grad_fn of a base one of whose views was modified in place: the base's gradient, with
    the slice the view covers replaced by what the in-place op's node makes of that slice."""

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def __init__(self, base, view, fn):
        super().__init__([gradient_edge(base)] + list(fn._next[1:]))
        self._base_geometry = (base._size, base._stride)
        self._view = _geometry(view, base)
        self._bits = view._math_bits ^ base._math_bits  # a lazy conj/neg view reads its slice so
        self.fn = fn
        self._input_meta = ((base._size, base._dtype),)

    def _run(self, grads):
        import torch

        grad = grads[0]
        if grad is None:
            return [None] * len(self._next)
        size, stride = self._base_geometry
        result = torch.empty_strided(size, stride, dtype=grad.dtype)
        result.copy_(grad)
        vsize, vstride, voff = self._view
        grad_slice = result.as_strided(vsize, vstride, voff)
        # fn's first edge (the view's old history) is not part of this graph task; it must
        # still compute that gradient (upstream adds the missing nodes to exec_info)
        saved, _TASK.needed = _TASK.needed, None
        try:
            res = self.fn._run([_through_bits(
                grad_slice.clone(memory_format=torch.contiguous_format), self._bits)])
        finally:
            _TASK.needed = saved
        out = [None] * len(self._next)
        for i, r in enumerate(res):
            if i >= len(out) or self._next[i][0] is None and i != 0:
                continue
            if i == 0:
                if r is None:
                    grad_slice.zero_()
                else:
                    grad_slice.copy_(_through_bits(r, self._bits))
                out[0] = result
            else:
                out[i] = r
        return out

    def _release_variables(self) -> None:
        self.fn._release_variables()


class AsStridedBackward0(Node):
    """The grad_fn of a view whose base was rebased: its gradient placed into a zero gradient of
    the base's geometry at the view's place (upstream's as_strided_backward; overlapping views
    sum their elements' gradients)."""

    def __init__(self, view, base):
        super().__init__([gradient_edge(base)])
        self._base_size, self._base_stride = base._size, base._stride
        self._geometry = _geometry(view, base)
        self._bits = view._math_bits ^ base._math_bits
        self._input_meta = ((view._size, base._dtype),)

    def _run(self, grads):
        import torch

        grad = grads[0]
        if grad is None:
            return [None]
        grad = _through_bits(grad, self._bits)
        size, stride, off = self._geometry
        bsize, bstride = self._base_size, self._base_stride
        # scatter-add the view's elements into the base's storage span: elements sharing
        # memory (an expanded view) sum, as upstream's as_strided_backward
        extent = max(_extent(bsize, bstride, 0), _extent(size, stride, off))
        flat = torch.zeros(extent, dtype=grad.dtype)
        idx = torch.arange(extent).as_strided(size, stride, off)
        flat = flat.index_add(0, idx.reshape(-1), grad.reshape(-1))
        return [flat.as_strided(bsize, bstride, 0)]


def _through_bits(grad, bits: int):
    """The gradient carried across a lazy conjugate/negative view (ConjBackward0 and
    NegViewBackward0's formulas): conjugated and/or negated, materialized."""
    if bits & 1 and grad.is_complex():
        grad = grad.conj_physical()
    if bits & 2:
        grad = grad.neg()
    return grad


def _extent(size, stride, off) -> int:
    if 0 in size:
        return off
    return off + 1 + sum((s - 1) * st for s, st in zip(size, stride))


register_view_grad_fn(grad_fn_of)  # the nodes, below this module, read views through it
