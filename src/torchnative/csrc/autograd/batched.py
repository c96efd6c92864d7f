"""Batched gradients: torch.autograd.grad(..., is_grads_batched=True) and the reverse-mode
``vectorize=True`` paths of torch.autograd.functional (jacobian, hessian) and gradcheck's
``check_batched_grad``.

Upstream runs these through its legacy vmap (torch/_vmap_internals.py): the grad_outputs get a
batch dimension (``torch._add_batch_dim`` makes BatchedTensors, under
``torch._C._vmapmode_increment_nesting``), the engine runs once on BatchedTensors, and
``torch._remove_batch_dim`` takes the dimension off the results. Here the engine is the only
thing that may receive a batched tensor: it runs one backward pass per batch element and stacks
the results, which equals upstream's batched pass element by element. Any other operation on a
batched tensor (legacy vmap over arbitrary functions, forward-mode ``vectorize=True``) refuses
by name.
"""

from __future__ import annotations

import threading

from ..core.refuse import TorchnativeNotImplementedError
from ..ops.kernel_registry import kernel


class _TLS(threading.local):
    def __init__(self):
        self.level = 0


TLS = _TLS()

_WHY = ("torchnative batches only the autograd engine's grad_outputs "
        "(torch.autograd.grad(..., is_grads_batched=True) and reverse-mode vectorize=True); use "
        "a Python loop instead")


def vmapmode_increment_nesting() -> int:
    TLS.level += 1
    return TLS.level


def vmapmode_decrement_nesting() -> int:
    TLS.level -= 1
    return TLS.level


_CLASS: list = []
# what a batched tensor answers: its properties' getters and the size queries
_METADATA = frozenset(("__get__", "size", "stride", "dim", "numel", "is_contiguous",
                       "storage_offset", "element_size", "get_device"))


def _batched_class():
    if _CLASS:
        return _CLASS[0]
    import torch

    class BatchedTensor(torch.Tensor):
        """A batch of tensors as upstream's BatchedTensor presents it: the geometry of one
        element (size, stride, dtype; what torch.autograd reads to validate grad_outputs), the
        whole batch kept aside for the engine. Any operation on it refuses by name."""

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is torch._remove_batch_dim:
                return _remove_batched(*args, **(kwargs or {}))
            if getattr(func, "__name__", None) in _METADATA:
                # a property (shape, requires_grad, grad_fn, ...) or a size query: metadata the
                # engine and torch.autograd read, as on upstream's C++ BatchedTensor
                with torch._C.DisableTorchFunctionSubclass():
                    return func(*args, **(kwargs or {}))
            name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
            raise TorchnativeNotImplementedError(
                f"{name} on a tensor batched by torch._vmap_internals (legacy vmap)", _WHY)

        def _refuse(self, *args, **kwargs):
            raise TorchnativeNotImplementedError(
                "reading the values of a tensor batched by torch._vmap_internals (legacy vmap)",
                _WHY)

        tolist = item = numpy = data_ptr = __array__ = __repr__ = __format__ = _refuse

    BatchedTensor.__module__ = "torch._C"
    _CLASS.append(BatchedTensor)
    return BatchedTensor


def is_batched(t) -> bool:
    return bool(_CLASS) and type(t) is _CLASS[0]


def _batch(t, level: int):
    """A batched tensor over ``t`` (batch dimension first), presenting one element."""
    from ..core.construct import make

    out = make(t._storage, t._dtype, t._size[1:], t._stride[1:], t._offset,
               _batched_class(), np_view=_NO_VALUES)
    out._np = None
    out._tn_vmap = (level, t._size[0], t)
    if t._grad_fn is not None or t._requires_grad:
        out._requires_grad = True  # its history is the batch's (the engine reads that)
    return out


_NO_VALUES = object()


@kernel("_add_batch_dim", composite=True)
def _add_batch_dim(self, batch_dim, level):
    if is_batched(self):
        raise TorchnativeNotImplementedError("nested legacy vmap (torch._add_batch_dim on a "
                                             "batched tensor)", _WHY)
    x = self.movedim(batch_dim, 0) if batch_dim != 0 else self
    return _batch(x, level)


@kernel("_remove_batch_dim", composite=True)
def _remove_batch_dim(self, level, batch_size, out_dim):
    """A result that does not depend on the batched input: repeated along the batch (as
    upstream's _remove_batch_dim of a tensor without that level)."""
    size = list(self._size)
    size.insert(out_dim, batch_size)
    return self.unsqueeze(out_dim).expand(size)


def _remove_batched(self, level, batch_size, out_dim):
    lvl, size, x = self._tn_vmap
    if lvl != level:
        raise TorchnativeNotImplementedError("nested legacy vmap (torch._remove_batch_dim of "
                                             "another level)", _WHY)
    return x.movedim(0, out_dim) if out_dim != 0 else x


def run_batched(run, tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unreachable,
                accumulate_grad):
    """The engine's pass for batched grad_outputs: one pass per batch element, stacked."""
    import torch

    if accumulate_grad:
        raise TorchnativeNotImplementedError("backward() with batched grad_tensors", _WHY)
    level = size = None
    phys = []
    for g in grad_tensors:
        if is_batched(g):
            level, size, p = g._tn_vmap
            phys.append(p)
        else:
            phys.append(None)
    results = []
    for b in range(size):
        gs = [p.select(0, b) if p is not None else g for p, g in zip(phys, grad_tensors)]
        results.append(run(tensors, gs, keep_graph or b < size - 1, create_graph, inputs,
                           allow_unreachable, accumulate_grad))
    out = []
    for i in range(len(inputs)):
        col = [r[i] for r in results]
        ref = next((c for c in col if c is not None), None)
        if ref is None:
            out.append(None)
            continue
        col = [torch.zeros_like(ref) if c is None else c for c in col]
        out.append(_batch(torch.stack(col), level))
    return tuple(out)


TORCH_C = {
    "torch._C._vmapmode_increment_nesting": vmapmode_increment_nesting,
    "torch._C._vmapmode_decrement_nesting": vmapmode_decrement_nesting,
}
