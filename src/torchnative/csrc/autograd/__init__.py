"""Autograd: the graph's nodes, derivatives.yaml's formulas, views and in-place history, hooks and
the engine (torch/csrc/autograd in upstream). Grad mode itself is core state (core/grad_mode.py).

Importing this package installs autograd into the layers below, which cannot import it: the
door's autograd entry, and a view's ``grad_fn`` and ``retain_grad`` on tensors.
"""

from ..core.tensor import register_autograd as _register_tensor_hooks
from ..dispatch.door import register_autograd as _register_entry, \
    register_dont_record as _register_dont_record
from .dispatch import autograd_dispatch as _autograd_dispatch, dont_record as _dont_record
from .retain_grad import retain_grad as _retain_grad
from .views import grad_fn_of as _grad_fn_of

_register_entry(_autograd_dispatch)
_register_dont_record(_dont_record)
_register_tensor_hooks(_grad_fn_of, _retain_grad)
