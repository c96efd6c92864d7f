"""Batch rules for pointwise operators (upstream's BinaryOps/UnaryOps batch rules).

Every batched argument gets its batch dimension first and, when its logical rank is below the
call's largest, size-1 dimensions after it, so that broadcasting lines the logical dimensions
up as they were; unbatched arguments broadcast as they are. One call computes the batch.
"""

from __future__ import annotations

from ..core.tensor import TensorBase
from ..dispatch.door import aten_dispatch
from .batching import (RULES, TAG_RULES, batch_size, front, inplace_error, is_inplace, rule,
                       unwrap, wrap)


def _padded(p, rank: int, target: int):
    for _ in range(target - rank):
        p = p.unsqueeze(1)
    return p


def pointwise(op, level, args, kwargs):
    entries = []  # (container, key, tensor, bdim)
    rank = 0
    dtypes = set()
    scalar_batched = False
    for i, a in enumerate(args):
        if isinstance(a, TensorBase):
            entries.append((0, i, a))
    for k, a in kwargs.items():
        if isinstance(a, TensorBase):
            entries.append((1, k, a))
    any_batched = False
    for _, _, a in entries:
        r = len(a._size)
        rank = max(rank, r)
        dtypes.add(a._dtype)
        if unwrap(a, level)[1] is not None:
            any_batched = True
            if r == 0:
                scalar_batched = True
    if not any_batched:
        return NotImplemented
    if scalar_batched and len(dtypes) > 1:
        # a logical scalar is a dimensioned physical tensor: type promotion would change
        return NotImplemented
    inplace = is_inplace(op) or op.name == "aten::copy_"
    if inplace and unwrap(args[0], level)[1] is None:
        if op.name == "aten::copy_":
            raise inplace_error("inplace arithmetic", level)
        # upstream runs the operator on the physical values: the kernel's broadcast error
    new_args, new_kwargs = list(args), dict(kwargs)
    for where, key, a in entries:
        p = front(a, level)
        if p is None:
            continue
        p = _padded(p, len(a._size), rank if not (inplace and key == 0 and where == 0)
                    else len(a._size))
        if where == 0:
            new_args[key] = p
        else:
            new_kwargs[key] = p
    result = aten_dispatch(op, tuple(new_args), new_kwargs)
    if inplace:
        return args[0]
    return wrap(result, level, 0)


TAG_RULES["pointwise"] = pointwise
for _n in ("copy_.default", "masked_fill.Scalar", "masked_fill.Tensor", "masked_fill_.Scalar",
           "masked_fill_.Tensor", "where.self", "threshold_backward.default", "lerp.Scalar",
           "lerp.Tensor", "_s_where.default"):
    RULES[_n] = pointwise


@rule("clone.default", "detach.default", "alias.default", "_to_copy.default", "lift_fresh.default",
      "zeros_like.default", "ones_like.default", "empty_like.default", "full_like.default",
      "_conj.default", "resolve_conj.default", "resolve_neg.default", "positive.default",
      "_conj_physical.default", "conj_physical.default")
def same_layout(op, level, args, kwargs):
    """Operators that keep their input's shape and layout: run on the physical value, the batch
    stays where it was."""
    v, d = unwrap(args[0], level)
    if d is None:
        return NotImplemented
    return wrap(aten_dispatch(op, (v,) + tuple(args[1:]), kwargs), level, d)


@rule("fill_.Scalar", "zero_.default", "fill_.Tensor")
def fill(op, level, args, kwargs):
    v, d = unwrap(args[0], level)
    if d is None:
        raise inplace_error(op.qualname.split("::")[-1], level)
    rest = list(args[1:])
    if rest and isinstance(rest[0], TensorBase):
        fv, fd = unwrap(rest[0], level)
        if fd is not None:  # a batched fill value: a copy of it, per element
            p = front(args[0], level)
            p.copy_(fv.movedim(fd, 0).reshape((batch_size(level),) + (1,) * (p.dim() - 1)))
            return args[0]
    aten_dispatch(op, (v,) + tuple(rest), kwargs)
    return args[0]
