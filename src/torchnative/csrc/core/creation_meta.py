"""How a view was made (upstream's CreationMeta), stamped on the view when it is made.

The view kernels stamp every view they make (``note_view``); autograd reads the stamp to decide
whether an in-place change through the view may rebase its history (csrc/autograd/views.py).
A view stores ``_tn_view = [attr_version, creation]`` (None on other tensors).
"""

from __future__ import annotations

from .grad_mode import TLS as _GRAD

# upstream's CreationMeta, in its order
DEFAULT, IN_CUSTOM_FUNCTION, MULTI_OUTPUT_NODE, NO_GRAD_MODE, INFERENCE_MODE = range(5)


def propagate(prev: int, new: int) -> int:
    """propagate_creation_meta: a view of a view inherits what was special about its base."""
    if new == DEFAULT:
        return prev
    return prev if prev == INFERENCE_MODE else new


def creation_now(multi_output: bool, base_stamp) -> int:
    """The creation of a view made now, in the current grad mode; ``base_stamp``: its base's own
    stamp when the base is itself a view (else None), whose special creation it inherits."""
    if _GRAD.inference:
        creation = INFERENCE_MODE
    elif not _GRAD.grad_enabled:
        creation = NO_GRAD_MODE
    else:
        creation = MULTI_OUTPUT_NODE if multi_output else DEFAULT
    return creation if base_stamp is None else propagate(base_stamp[1], creation)


def note_view(view, base, multi_output: bool = False) -> None:
    """Stamp a view made by a view kernel (``base`` is the tensor it was taken of): the version
    it is made at and the mode it is made in (upstream's as_view). ``multi_output``: one of
    several views one call returns (unbind, split, split_with_sizes)."""
    prev = base._tn_view if base._view_base is not None else None
    view._tn_view = [view._version_ref[0], creation_now(multi_output, prev)]
