"""Batch rules for reductions and other operators with a ``dim`` argument over one tensor
(upstream's ReduceOps batch rules): the batch goes first and the logical dims shift by one."""

from __future__ import annotations

from ..dispatch.door import aten_dispatch
from .batching import front, rule, shift, unwrap, wrap


def _dim_position(op, default: int) -> int:
    """Where the ``dim`` argument is in the schema (norm.ScalarOpt_dim: after ``p``)."""
    for i, a in enumerate(op.schema.arguments):
        if a.name == "dim":
            return i
    return default


def _dims_rule(default_index: int, all_when_none: bool):
    """A rule for ``op(self, ..., dim at dim_index, ...)``; a dim of None (or [] for an int[]
    dim) reduces over every logical dim when ``all_when_none``."""

    def batched(op, level, args, kwargs):
        self = args[0]
        p = front(self, level)
        if p is None:
            return NotImplemented
        rank = len(self._size)
        if rank == 0:
            return NotImplemented
        dim_index = _dim_position(op, default_index)
        a = list(args)
        name = op.schema.arguments[dim_index].name
        if dim_index < len(a):
            dim = a[dim_index]
        else:
            dim = kwargs.get(name, op.schema.arguments[dim_index].default_value
                             if op.schema.arguments[dim_index].has_default_value() else None)
        if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
            if not all_when_none:
                return NotImplemented
            new = list(range(1, rank + 1))
        elif isinstance(dim, (list, tuple)):
            new = [shift(d, rank) for d in dim]
        else:
            new = shift(dim, rank)
        k = dict(kwargs)
        if dim_index < len(a):
            a[dim_index] = new
        else:
            k[name] = new
        a[0] = p
        return wrap(aten_dispatch(op, tuple(a), k), level, 0)

    return batched


for _name in ("sum.dim_IntList", "mean.dim", "amax.default", "amin.default", "nansum.default",
              "var.correction", "std.correction", "var_mean.correction", "std_mean.correction",
              "logsumexp.default", "any.dims", "all.dims", "linalg_vector_norm.default",
              "count_nonzero.dim_IntList", "norm.ScalarOpt_dim", "nanmean.default"):
    rule(_name)(_dims_rule(1, True))
for _name in ("prod.dim_int", "max.dim", "min.dim", "any.dim", "all.dim", "cumsum.default",
              "cumprod.default", "logcumsumexp.default", "_softmax.default",
              "_log_softmax.default", "softmax.int", "log_softmax.int", "argsort.default",
              "sort.default", "median.dim", "mode.default", "cummax.default", "cummin.default",
              "nanmedian.dim", "glu.default", "kthvalue.default"):
    rule(_name)(_dims_rule(1, False))
for _name in ("argmax.default", "argmin.default"):
    rule(_name)(_dims_rule(1, False))
rule("topk.default")(_dims_rule(2, False))


@rule("sum.default", "mean.default", "prod.default", "max.default",
      "min.default", "any.default", "all.default")
def full_reduction(op, level, args, kwargs):
    self = args[0]
    p = front(self, level)
    if p is None:
        return NotImplemented
    flat = p.reshape(p.shape[0], -1)
    import torch

    base = op.qualname.split("::")[-1]
    fn = {"sum": torch.sum, "mean": torch.mean, "prod": torch.prod, "any": torch.any,
          "all": torch.all}.get(base)
    if fn is not None:
        result = fn(flat, 1, **kwargs) if base in ("sum", "mean", "prod") else fn(flat, 1)
    else:  # max/min of all elements
        result = (torch.amax if base == "max" else torch.amin)(flat, 1)
    return wrap(result, level, 0)


def _two_dims_rule(i: int, j: int):
    def batched(op, level, args, kwargs):
        self = args[0]
        p = front(self, level)
        if p is None or len(self._size) == 0:
            return NotImplemented
        a = list(args)
        rank = len(self._size)
        for idx in (i, j):
            if idx < len(a):
                a[idx] = shift(a[idx], rank)
        a[0] = p
        return wrap(aten_dispatch(op, tuple(a), kwargs), level, 0)

    return batched


@rule("_softmax_backward_data.default", "_log_softmax_backward_data.default")
def softmax_backward(op, level, args, kwargs):
    """(grad_output, output, dim, input_dtype): both tensors aligned, the dim shifted."""
    from .batching import at_front, batch_size

    g, out, dim = args[0], args[1], args[2]
    if unwrap(g, level)[1] is None and unwrap(out, level)[1] is None:
        return NotImplemented
    n = batch_size(level)
    rank = len(g._size)
    if rank == 0:
        return NotImplemented
    a = (at_front(g, level, n), at_front(out, level, n), shift(dim, rank)) + tuple(args[3:])
    return wrap(aten_dispatch(op, a, kwargs), level, 0)
