"""``Tensor.as_subclass``: an alias of the tensor, presented as another Tensor subclass.

Upstream (python_variable.cpp) returns ``self.alias()`` wrapped in ``cls``, with the dispatch
modes stashed, so the result is a view of ``self`` (``_base`` and ``AliasBackward0`` included) and
no TorchDispatchMode sees the alias. It is not a ``__torch_function__`` override point.
"""

from __future__ import annotations

from ..autograd.views import replace_view
from ..core.construct import alias
from ..core.tensor import LAZY_SLOTS, TensorBase
from ..dispatch.call import call
from ..dispatch.python_dispatch import TLS


def as_subclass(self, cls):
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not issubclass(cls, TensorBase):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    stack, infra = TLS.stack, TLS.infra
    TLS.stack, TLS.infra = [], {}
    try:
        out = call("alias", self)
    finally:
        TLS.stack, TLS.infra = stack, infra
    try:
        out.__class__ = cls
    except TypeError:  # cls adds __slots__, so the alias's object cannot change class
        out = _rehome(out, cls)
    return out


_UNSET = object()
_STATE = ("_requires_grad", "_grad", "_grad_fn", "_view_base", "_retains_grad", "_output_nr",
          "_wrapped", "_tn_view", "_tn_inference")


def _rehome(t, cls):
    """A new ``cls`` object taking over ``t``'s autograd and view state, and its place among the
    views its root refreshes after an in-place change."""
    out = alias(t, cls)
    for name in _STATE:
        setattr(out, name, getattr(t, name))
    for name in LAZY_SLOTS:
        value = getattr(t, name, _UNSET)
        if value is not _UNSET:
            setattr(out, name, value)
    out.__dict__.update(t.__dict__)
    replace_view(t, out)
    return out


TENSOR_METHODS = {"as_subclass": as_subclass}
