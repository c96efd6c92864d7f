"""Random operators under vmap, by the level's ``randomness``: 'error' refuses with upstream's
error; 'same' draws once for the whole batch (and refuses a batched input, as upstream does);
'different' draws for every batch element: a factory gets the batch size as a leading
dimension, an operator with tensor inputs runs on them with the batch first (unbatched ones
expanded along it)."""

from __future__ import annotations

from ..core.tensor import TensorBase
from ..dispatch.door import aten_dispatch, call, resolve_composite_implicit
from . import levels
from .batching import RANDOM, at_front, batch_size, fallback, front, is_inplace, unwrap, wrap

_UNRESOLVED = object()


def _innermost_vmap():
    for lvl in reversed(levels.stack()):
        if lvl.kind == "vmap":
            return lvl
    return None


def random_call(op, level, args, kwargs):
    if level is None:
        level = _innermost_vmap()
    mode = level.info["randomness"]
    if mode == "error":
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use "
            "the 'same' or 'different' randomness flags on vmap or perform the randomness "
            "operation out of vmap")
    cia = op.cache.get("CompositeImplicitAutograd", _UNRESOLVED)
    if cia is _UNRESOLVED:
        cia = op.cache["CompositeImplicitAutograd"] = resolve_composite_implicit(op)
    if cia is not None:  # dropout and friends: their parts draw (as upstream decomposes them)
        return call(cia, args, kwargs)
    tensors = [(i, a) for i, a in enumerate(args) if isinstance(a, TensorBase)]
    batched = [i for i, a in tensors if unwrap(a, level)[1] is not None]
    if mode == "same" and is_inplace(op) and batched == [0]:
        # one draw of the element's shape, written into every batch element
        import torch

        self = args[0]
        draw = _unbatched(op, (torch.empty(self.shape, dtype=self.dtype),) + tuple(args[1:]),
                          kwargs)
        front(self, level).copy_(draw)
        return self
    if mode == "same":
        if batched:
            raise RuntimeError("Vmap does not currently support same randomness with a batched "
                               "tensor input. Please file an issue with functorch")
        return _unbatched(op, args, kwargs)
    n = batch_size(level)
    if is_inplace(op):
        if not batched or batched[0] != 0:
            raise RuntimeError(
                "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This "
                "will appear like same randomness. If this is necessary for your usage, please "
                "file an issue with functorch.")
        p = at_front(args[0], level, n)
        rest = tuple(at_front(a, level, n) if isinstance(a, TensorBase) and
                     unwrap(a, level)[1] is not None else a for a in args[1:])
        _unbatched(op, (p,) + rest, kwargs)
        return args[0]
    if not tensors:
        return _factory(op, n, level, args, kwargs)
    if any(len(a._size) == 0 for _, a in tensors) and len(tensors) > 1:
        return _per_element(op, level, args, kwargs)
    rank = max(len(a._size) for _, a in tensors)
    new = list(args)
    for i, a in tensors:
        p = at_front(a, level, n)
        for _ in range(rank - len(a._size)):
            p = p.unsqueeze(1)
        new[i] = p
    return wrap(_unbatched(op, tuple(new), kwargs), level, 0)


def _unbatched(op, args, kwargs):
    """The draw on physical values (or unbatched ones), as a call outside any vmap: the batching
    layer must not see it again. (A value batched at an outer vmap level is not supported.)"""
    saved = levels.TLS.vmap
    levels.TLS.vmap = 0
    try:
        return aten_dispatch(op, args, kwargs)
    finally:
        levels.TLS.vmap = saved


def _per_element(op, level, args, kwargs):
    """One draw per batch element (each unbatched), stacked."""
    saved = levels.TLS.vmap
    levels.TLS.vmap = 0
    try:
        return fallback(op, level, args, kwargs)
    finally:
        levels.TLS.vmap = saved


def _factory(op, n, level, args, kwargs):
    """A factory (rand, randn, randint, normal with a size...): the batch as a leading dim."""
    names = [a.name for a in op.schema.arguments]
    if "size" not in names:
        return _per_element(op, level, args, kwargs)
    i = names.index("size")
    a, k = list(args), dict(kwargs)
    if i < len(a):
        a[i] = (n, *a[i])
    else:
        k["size"] = (n, *k["size"])
    return wrap(_unbatched(op, tuple(a), k), level, 0)


RANDOM[0] = random_call
