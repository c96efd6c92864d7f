"""functorch: the transforms' C++ half (torch._C._functorch) — levels, BatchedTensor and the
batching layer for vmap, grad levels over the autograd engine for grad/vjp/jacrev.

Importing this package installs the batching layer into the door.
"""

from ..autograd import engine as _engine
from ..core import tensor as _tensor
from ..dispatch.door import register_batching
from . import batched, batching, grad_levels, levels
from . import (random_rules, rules_linear, rules_loss, rules_norm, rules_pointwise,  # noqa: F401
               rules_reduce, rules_shape)

register_batching(levels.live_vmap, batching.wants, batching.dispatch)
_tensor.no_values_error[0] = batched.no_values_error
_engine.keep_graph_for_transforms[0] = grad_levels.any_grad_level
