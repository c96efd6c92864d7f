"""How one ModuleInfo case runs, the same on both sides: the module rebuilt from its constructor
arguments and state, seeded forward, and the gradients of a fixed weighted sum of its outputs
with respect to its parameters."""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_map

SEED = 1234


def _cast(tree, dtype):
    return tree_map(lambda v: v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point()
                    else v, tree)


def _tensors(out) -> list:
    flat = []
    for v in torch.utils._pytree.tree_leaves(out):
        if isinstance(v, torch.Tensor):
            flat.append(v.detach().clone())
    return flat


def _run(cls, cargs, ckwargs, state, fargs, fkwargs, training, dtype):
    """Forward (seeded, so random modules draw the same numbers on both sides) and the gradients
    of sum(outputs * fixed weights) with respect to the parameters."""
    torch.manual_seed(SEED)
    m = cls(*cargs, **ckwargs).to(dtype)
    m.load_state_dict(_cast(state, dtype))
    m.train(training)
    args, kwargs = _cast(fargs, dtype), _cast(fkwargs, dtype)
    torch.manual_seed(SEED + 1)
    out = m(*args, **kwargs)
    outs = _tensors(out)
    params = [p for p in m.parameters() if p.requires_grad]
    grads = []
    floats = [o for o in torch.utils._pytree.tree_leaves(out)
              if isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad]
    if params and floats:
        g = torch.Generator().manual_seed(SEED + 2)
        loss = sum((o * torch.rand(o.shape, generator=g, dtype=torch.float64).to(o.dtype)).sum()
                   for o in floats)
        grads = [None if v is None else v.detach().clone()
                 for v in torch.autograd.grad(loss, params, allow_unused=True)]
    return outs, grads
