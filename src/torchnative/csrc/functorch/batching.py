"""The batching layer: what an operator call with a BatchedTensor argument runs.

The door sends a call here (below autograd, above Python dispatch and the kernels) when a vmap
level is live and an argument is batched, or the operator draws random numbers. The call is
taken at the innermost level among its batched arguments: tensors batched there are unwrapped
to their physical values, the rest (plain, or batched at an outer level) are left as they are,
and the operator runs as

1. a batch rule (rules_*.py): the physical operation that computes the whole batch at once;
2. a FuncTorchBatched kernel registered through ``torch.library`` (upstream's vmap
   decompositions, registered by torch._functorch when vmap is first used);
3. a CompositeImplicitAutograd operator's decomposition, whose parts are batched in turn;
4. the fallback (upstream's BatchedFallback): the operator once per batch element, the results
   stacked; an in-place operator writes each element of its batched ``self``.

Inner calls go back through the door, so a value batched at an outer level is batched there.
"""

from __future__ import annotations

from ..core.grad_mode import TLS as _GRAD
from ..core.refuse import TorchnativeNotImplementedError
from ..dispatch.door import _any_requires_grad, aten_dispatch, call, resolve_composite_implicit
from ..ops.dispatch_keys import autograd_excluded
from ..dispatch.boxing import normalized
from ..core.tensor import TensorBase, wrap_dim
from . import levels
from .batched import make_batched

# short overload name ("add.Tensor") -> rule(op, level, args, kwargs)
RULES: dict = {}
# how a random operator runs under vmap (random_rules.py installs it)
RANDOM: list = [None]


def rule(*names):
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn

    return register


def short_name(op) -> str:
    """"add.Tensor", "t.default": the key batch rules are registered under."""
    base = op.qualname.split("::", 1)[1] if op.qualname.startswith("aten::") else op.qualname
    return f"{base}.{op.overload or 'default'}"


def _tensors(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, TensorBase):
            yield a
        elif type(a) in (list, tuple):
            for x in a:
                if isinstance(x, TensorBase):
                    yield x


def wants(op, args, kwargs, above_autograd: bool) -> bool:
    """Does this call (made while a vmap level is live) belong to the batching layer now? Above
    autograd only when autograd has nothing to record (it records on the BatchedTensors first,
    as a grad level inside the vmap needs)."""
    if not levels.TLS.vmap:
        return False  # the live vmap is another thread's
    for t in _tensors(args, kwargs):
        if hasattr(t, "_tn_batched"):
            break
    else:
        if not _is_random(op):
            return False
    if above_autograd and _GRAD.grad_enabled and _any_requires_grad(args, kwargs) and \
            not autograd_excluded():
        return False
    return True


def _is_random(op) -> bool:
    r = op.cache.get("functorch_random")
    if r is None:
        r = op.cache["functorch_random"] = any(
            getattr(t, "name", str(t)) == "nondeterministic_seeded" for t in op.tags)
    return r


def call_level(args, kwargs):
    """The innermost live level among the batched arguments (None: no batched argument)."""
    best = None
    for t in _tensors(args, kwargs):
        info = getattr(t, "_tn_batched", None)
        if info is not None and (best is None or info[2].number > best.number):
            best = info[2]
    return best


def dispatch(op, args, kwargs, above_autograd: bool = True):
    level = call_level(args, kwargs)
    # forward AD's tangents live on the BatchedTensors (the forward entry above computed them
    # for this call): the physical computation is values only, as for a kernel
    prev_fw = _GRAD.fw_grad
    _GRAD.fw_grad = False
    try:
        if above_autograd:
            if _is_random(op):
                return RANDOM[0](op, level, args, kwargs)
            return batched_call(op, level, args, kwargs)
        # below autograd (which recorded this call on the BatchedTensors and turned grad mode
        # off): the physical values are the next level down, whose own history is recorded
        prev = _GRAD.grad_enabled
        _GRAD.grad_enabled = True
        try:
            if _is_random(op):
                return RANDOM[0](op, level, args, kwargs)
            return batched_call(op, level, args, kwargs)
        finally:
            _GRAD.grad_enabled = prev
    finally:
        _GRAD.fw_grad = prev_fw


def batched_call(op, level, args, kwargs):
    if not level.alive:
        raise RuntimeError(f"{op.name}: a BatchedTensor of a vmap level that has ended was "
                           "used outside its vmap")
    fn = op.cache.get("functorch_rule", _UNRESOLVED)
    if fn is _UNRESOLVED:
        fn = op.cache["functorch_rule"] = _rule_for(op)
    if fn is not None:
        result = fn(op, level, args, kwargs)
        if result is not NotImplemented:
            return result
    py = op.py_kernels.get("FuncTorchBatched")
    if py is not None:
        return normalized(op, py[0])(*args, **kwargs)
    cia = op.cache.get("CompositeImplicitAutograd", _UNRESOLVED)
    if cia is _UNRESOLVED:
        cia = op.cache["CompositeImplicitAutograd"] = resolve_composite_implicit(op)
    if cia is not None:
        try:
            return call(cia, args, kwargs)
        except (TorchnativeNotImplementedError, AttributeError) as e:
            # a few of torchnative's composite kernels read values or call kernels directly
            # (not through the door): such a call runs per element instead
            if cia.path != "composite" or not _read_values(e):
                raise
    return fallback(op, level, args, kwargs)


def _read_values(e: Exception) -> bool:
    text = str(e)
    return "the tensor has none" in text or "'NoneType' object has no attribute" in text


_UNRESOLVED = object()
# operators that draw a rule from their tags (pointwise) when no rule is registered by name
TAG_RULES: dict = {}


def _rule_for(op):
    fn = RULES.get(short_name(op))
    if fn is not None:
        return fn
    if op.native is not None and op.native.kind == "out":
        return None
    for t in op.tags:
        fn = TAG_RULES.get(getattr(t, "name", str(t)))
        if fn is not None:
            return fn
    return None


# --- helpers the rules share ------------------------------------------------------------------

def unwrap(t, level):
    """(physical value, bdim) of ``t`` at ``level``; (t, None) if it is not batched there."""
    if isinstance(t, TensorBase):
        info = getattr(t, "_tn_batched", None)
        if info is not None and info[2] is level:
            return info[0], info[1]
    return t, None


def shift(dim: int, rank: int) -> int:
    """A logical dim (wrapped as upstream wraps it) as the physical one, past the batch dim."""
    return wrap_dim(dim, rank) + 1


def front(t, level):
    """``t``'s physical value with the batch dimension first, or None if it is not batched."""
    v, d = unwrap(t, level)
    if d is None:
        return None
    return v if d == 0 else v.movedim(d, 0)


def at_front(t, level, size: int):
    """``t``'s physical value with the batch first, expanded along it when not batched."""
    v, d = unwrap(t, level)
    if d is None:
        return t.expand(size, *t.shape)
    return v if d == 0 else v.movedim(d, 0)


def wrap(value, level, bdim: int = 0):
    if isinstance(value, TensorBase):
        return make_batched(value, bdim, level)
    if type(value) in (list, tuple):
        return type(value)(wrap(v, level, bdim) for v in value)
    return value


def batch_size(level) -> int:
    return level.info["batch_size"]


def logical_dim(t) -> int:
    return len(t._size)


def inplace_error(op_name: str, level) -> RuntimeError:
    return RuntimeError(
        f"vmap: {op_name}(self, *extra_args) is not possible because there exists a Tensor "
        "`other` in extra_args that has more elements than `self`. This happened due to "
        f"`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
        f"use out-of-place operators instead of {op_name}. If said operator is being called "
        "inside the PyTorch framework, please file a bug report instead.")


def is_inplace(op) -> bool:
    return op.native is not None and op.native.kind == "inplace"


# --- the fallback -----------------------------------------------------------------------------

_NO_FALLBACK = ("_local_scalar_dense", "item", "is_nonzero", "allclose", "nonzero",
                "unique_dim", "unique_consecutive", "unique_dim_consecutive", "_unique2",
                "equal")


def _unsupported(op):
    base = op.qualname.split("::")[-1]
    if base in ("_local_scalar_dense", "item"):
        return RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations. If error is occurring somewhere inside PyTorch internals, please file "
            "a bug report.")
    if base in ("is_nonzero", "equal"):
        return RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues .")
    if base == "allclose":
        return RuntimeError("vmap over torch.allclose isn't supported yet. Please voice your "
                            "support over at github.com/pytorch/functorch/issues/275")
    return RuntimeError(
        "vmap: We do not support batching operators that can output dynamic shape. Attempted "
        f"to vmap over {op.qualname}. Please voice your support in "
        "https://github.com/pytorch/functorch/issues/256")


def fallback(op, level, args, kwargs):
    """The operator once per batch element, results stacked along a new first dimension."""
    import torch

    if op.qualname.split("::")[-1] in _NO_FALLBACK:
        raise _unsupported(op)
    kind = op.native.kind if op.native is not None else "functional"
    if kind == "out":
        raise RuntimeError(f"Batching rule not implemented for {op.qualname}; the fallback "
                           "path doesn't work on out= or view ops.")
    returns = op.schema.returns
    if kind != "inplace" and any(r.alias_info is not None for r in returns):
        raise RuntimeError(f"Batching rule not implemented for {op.qualname}; the fallback "
                           "path doesn't work on out= or view ops.")
    if kind == "inplace" or kind == "mutable":
        for i, a in enumerate(op.schema.arguments):
            if a.alias_info is not None and a.alias_info.is_write:
                target = args[i] if i < len(args) else kwargs.get(a.name)
                if isinstance(target, TensorBase) and unwrap(target, level)[1] is None:
                    raise inplace_error(op.qualname.split("::")[-1], level)
    n = batch_size(level)
    results = []
    for b in range(n):
        a = tuple(_select(x, level, b) for x in args)
        k = {key: _select(x, level, b) for key, x in kwargs.items()}
        results.append(aten_dispatch(op, a, k))
    if kind == "inplace":
        return args[0]
    first = results[0]
    if isinstance(first, TensorBase):
        return make_batched(torch.stack(results), 0, level)
    if isinstance(first, (list, tuple)):
        outs = []
        for i, r0 in enumerate(first):
            if isinstance(r0, TensorBase):
                outs.append(make_batched(torch.stack([r[i] for r in results]), 0, level))
            elif type(r0) in (list, tuple):
                outs.append([make_batched(torch.stack([r[i][j] for r in results]), 0, level)
                             for j in range(len(r0))])
            else:
                outs.append(r0)
        if type(first) is tuple or type(first) is list:
            return type(first)(outs)
        return type(first)(*outs)  # a return_types structseq
    if first is None:
        return None
    raise RuntimeError(f"vmap: {op.qualname} returns a {type(first).__name__}, which cannot be "
                       "batched (its value would depend on the batch element)")


def _select(x, level, b):
    if isinstance(x, TensorBase):
        v, d = unwrap(x, level)
        return x if d is None else v.select(d, b)
    if type(x) in (list, tuple):
        return type(x)(_select(y, level, b) for y in x)
    return x
