"""functorch: the transforms' C++ half (torch._C._functorch) — levels, BatchedTensor and the
batching layer for vmap, grad levels over the autograd engine for grad/vjp/jacrev, and
functionalization (functionalize.py).

Importing this package installs the batching and functionalization layer into the door.
"""

from ..autograd import engine as _engine
from ..core import tensor as _tensor
from ..dispatch.door import register_batching
from . import batched, batching, functionalize, grad_levels, levels
from . import (random_rules, rules_linear, rules_loss, rules_norm, rules_pointwise,  # noqa: F401
               rules_reduce, rules_shape)



def _wants(op, args, kwargs, above_autograd):
    return functionalize.wants(op, args, kwargs, above_autograd) or \
        batching.wants(op, args, kwargs, above_autograd)


def _dispatch(op, args, kwargs, above_autograd):
    if functionalize.wants(op, args, kwargs, above_autograd):
        return functionalize.dispatch(op, args, kwargs, above_autograd)
    return batching.dispatch(op, args, kwargs, above_autograd)


register_batching(levels.live_vmap, _wants, _dispatch)
_tensor.no_values_error[0] = batched.no_values_error
_engine.keep_graph_for_transforms[0] = grad_levels.any_grad_level
