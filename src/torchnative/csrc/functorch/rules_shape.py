"""Batch rules for view and shape operators (upstream's ViewBatchRules / LegacyBatchingRegistrations):
the batch goes first and the logical dims shift by one; views stay views of the physical value."""

from __future__ import annotations

from ..dispatch.door import aten_dispatch
from .batching import TAG_RULES, at_front, batch_size, front, rule, shift, unwrap, wrap


def _view_like(op, level, args, kwargs):
    """view/_unsafe_view/_reshape_alias/reshape(self, size): the batch first, then the size."""
    self, size = args[0], args[1]
    p = front(self, level)
    if p is None:
        return NotImplemented
    size = (p.shape[0], *size)
    name = op.qualname.split("::")[-1]
    if name in ("view", "_unsafe_view"):
        out = p.view(size)  # as upstream's: the physical layout decides whether it can be a view
    else:
        out = p.reshape(size)
    return wrap(out, level, 0)


rule("view.default", "_unsafe_view.default", "reshape.default", "_reshape_alias.default")(
    _view_like)


@rule("expand.default")
def expand(op, level, args, kwargs):
    self, size = args[0], list(args[1])
    p = front(self, level)
    if p is None:
        return NotImplemented
    rank = len(self._size)
    extra = len(size) - rank
    if extra < 0:
        return NotImplemented  # upstream's error comes from the per-element call
    for _ in range(extra):
        p = p.unsqueeze(1)
    return wrap(p.expand([p.shape[0], *size]), level, 0)


@rule("permute.default", "flip.default")
def dim_list(op, level, args, kwargs):
    """permute(self, dims) / flip(self, dims): every logical dim shifted past the batch (which
    permute keeps first)."""
    self, dims = args[0], args[1]
    p = front(self, level)
    if p is None:
        return NotImplemented
    rank = len(self._size)
    shifted = [shift(d, rank) for d in dims]
    if op.qualname == "aten::permute":
        shifted = [0] + shifted
    return wrap(aten_dispatch(op, (p, shifted), {}), level, 0)


@rule("transpose.int")
def transpose(op, level, args, kwargs):
    self, d0, d1 = args[0], args[1], args[2]
    v, bd = unwrap(self, level)
    if bd is None:
        return NotImplemented
    rank = len(self._size)
    if rank == 0:
        return wrap(v, level, bd)
    p = front(self, level)
    return wrap(p.transpose(shift(d0, rank), shift(d1, rank)), level, 0)


@rule("t.default")
def t(op, level, args, kwargs):
    self = args[0]
    p = front(self, level)
    if p is None:
        return NotImplemented
    if len(self._size) < 2:
        return wrap(p, level, 0)
    return wrap(p.transpose(1, 2), level, 0)


@rule("unsqueeze.default")
def unsqueeze(op, level, args, kwargs):
    self, dim = args[0], args[1]
    p = front(self, level)
    if p is None:
        return NotImplemented
    return wrap(p.unsqueeze(shift(dim, len(self._size) + 1)), level, 0)


@rule("squeeze.dim", "squeeze.dims", "squeeze.default")
def squeeze(op, level, args, kwargs):
    self = args[0]
    p = front(self, level)
    if p is None:
        return NotImplemented
    rank = len(self._size)
    if len(args) > 1:
        dims = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
    else:
        dims = [i for i, s in enumerate(self._size) if s == 1]
    if rank == 0:
        return wrap(p, level, 0)
    dims = [shift(d, rank) for d in dims]
    return wrap(p.squeeze(dims) if dims else p, level, 0)


def _dim_rule(dim_index: int, new_rank: int = 0):
    """``op(self, ..., dim, ...)`` on one tensor: shift the dim (wrapped at the logical rank,
    plus ``new_rank`` for an operator that adds a dim)."""

    def batched(op, level, args, kwargs):
        self = args[0]
        p = front(self, level)
        if p is None:
            return NotImplemented
        rank = len(self._size)
        if rank == 0 and not new_rank:
            return NotImplemented
        if any(unwrap(x, level)[1] is not None for x in args[1:]):
            return NotImplemented  # a batched index: per element
        a = list(args)
        k = dict(kwargs)
        name = op.schema.arguments[dim_index].name
        if dim_index < len(a):
            a[dim_index] = shift(a[dim_index], rank + new_rank)
        elif name in k:
            k[name] = shift(k[name], rank + new_rank)
        else:
            default = op.schema.arguments[dim_index].default_value
            a += [op.schema.arguments[j].default_value for j in range(len(a), dim_index)]
            a.append(shift(default, rank + new_rank))
        a[0] = p
        return wrap(aten_dispatch(op, tuple(a), k), level, 0)

    return batched


for _n in ("select.int", "slice.Tensor", "narrow.default", "unbind.int", "split.Tensor",
           "split_with_sizes.default", "chunk.default", "index_select.default",
           "unsafe_split.Tensor", "unsafe_chunk.default", "unfold.default",
           "tensor_split.sections", "tensor_split.indices"):
    rule(_n)(_dim_rule(1 if _n.split(".")[0] not in ("split", "split_with_sizes", "chunk",
                                                     "unsafe_split", "unsafe_chunk",
                                                     "tensor_split") else 2))


@rule("diagonal.default")
def diagonal(op, level, args, kwargs):
    self = args[0]
    p = front(self, level)
    if p is None:
        return NotImplemented
    offset = args[1] if len(args) > 1 else kwargs.get("offset", 0)
    d1 = args[2] if len(args) > 2 else kwargs.get("dim1", 0)
    d2 = args[3] if len(args) > 3 else kwargs.get("dim2", 1)
    rank = len(self._size)
    return wrap(p.diagonal(offset, shift(d1, rank), shift(d2, rank)), level, 0)


@rule("movedim.int")
def movedim(op, level, args, kwargs):
    self, src, dst = args[0], args[1], args[2]
    p = front(self, level)
    if p is None:
        return NotImplemented
    rank = len(self._size)
    return wrap(p.movedim(shift(src, rank), shift(dst, rank)), level, 0)


@rule("cat.default", "stack.default")
def join(op, level, args, kwargs):
    """cat/stack(tensors, dim): every tensor with the batch first (unbatched ones expanded)."""
    tensors = list(args[0])
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    if all(unwrap(t, level)[1] is None for t in tensors):
        return NotImplemented
    if op.qualname == "aten::stack":
        rank = len(tensors[0]._size) + 1
    else:
        # legacy: 1-D empty tensors are skipped by cat whatever the others' rank
        rank = max(len(t._size) for t in tensors)
        tensors = [t for t in tensors if not (len(t._size) == 1 and t._size[0] == 0 and rank > 1)]
    parts = [at_front(t, level, batch_size(level)) for t in tensors]
    return wrap(aten_dispatch(op, (parts, shift(dim, rank)), {}), level, 0)


@rule("gather.default")
def gather(op, level, args, kwargs):
    self, dim, index = args[0], args[1], args[2]
    if len(self._size) == 0 or len(index._size) == 0:
        return NotImplemented
    n = batch_size(level)
    rank = len(self._size)
    a = (at_front(self, level, n), shift(dim, rank), at_front(index, level, n))
    return wrap(aten_dispatch(op, a + tuple(args[3:]), kwargs), level, 0)


@rule("embedding.default")
def embedding(op, level, args, kwargs):
    weight, indices = args[0], args[1]
    if unwrap(weight, level)[1] is not None:
        return NotImplemented
    v, d = unwrap(indices, level)
    return wrap(aten_dispatch(op, (weight, v) + tuple(args[2:]), kwargs), level, d)


def _inplace_view(op, level, args, kwargs):
    """squeeze_, unsqueeze_, transpose_, t_...: the out-of-place view's batch becomes self's."""
    import torch

    self = args[0]
    if unwrap(self, level)[1] is None:
        return NotImplemented
    base = op.qualname.split("::")[-1].rstrip("_")
    functional = getattr(torch.ops.aten, base)
    overload = getattr(functional, op.overload or "default")
    result = overload(*args, **kwargs)
    info = result._tn_batched
    self._tn_batched = info
    self._size, self._stride = result._size, result._stride
    return self


TAG_RULES["inplace_view"] = _inplace_view


@rule("as_strided.default", "as_strided_copy.default", "as_strided_scatter.default",
      "as_strided_.default")
def as_strided_refused(op, level, args, kwargs):
    """The copy, scatter and in-place forms address one element's storage with no rule here:
    per element they would read the first element's memory, so they refuse."""
    from ..core.refuse import TorchnativeNotImplementedError

    if op.qualname == "aten::as_strided" and not op.overload:
        return as_strided(op, level, args, kwargs)
    raise TorchnativeNotImplementedError(
        f"{op.name} under vmap", "torchnative has no batch rule for it (its strides address "
        "one element's storage)")


def as_strided(op, level, args, kwargs):
    """functorch's as_strided rule: each element's view is taken from that element's own
    storage offset (its strides and the offset as given, absolute within the storage), i.e. the
    physical as_strided with the batch dim's stride put first and the offset unchanged."""
    bound = dict(zip(("size", "stride", "storage_offset"), args[1:]), **kwargs)
    p = front(args[0], level)
    if p is None:
        return NotImplemented
    size = [p.shape[0], *bound["size"]]
    stride = [p.stride(0), *bound["stride"]]
    out = aten_dispatch(op, (p, size, stride, bound.get("storage_offset")), {})
    return wrap(out, level, 0)


@rule("masked_select.default")
def masked_select(op, level, args, kwargs):
    """A batched mask selects a different number of elements per batch element: upstream's
    error. An unbatched mask runs per element (same count everywhere)."""
    if unwrap(args[1], level)[1] is not None:
        raise RuntimeError(
            "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot "
            "support this because for each batch this would return a differently shaped Tensor. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues if you need this "
            "feature.")
    return NotImplemented


@rule("view_as_complex.default", "view_as_real.default")
def complex_view(op, level, args, kwargs):
    """The pair of floats is the last dim: a batch anywhere else keeps it a view."""
    p = front(args[0], level)
    if p is None:
        return NotImplemented
    return wrap(aten_dispatch(op, (p,), {}), level, 0)
