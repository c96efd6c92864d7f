"""The forward-AD entry of the door: tangents of an operator's outputs from its inputs' tangents.

As upstream's generated VariableType kernels (the forward-grad half): when an input has a tangent
at the current level, run the operator (below this entry: autograd records the backward graph as
usual), then evaluate derivatives.yaml's forward formula over the inputs' primals (``x_p``,
aliases without tangent) and tangents (``x_t``, zeros for an input without one) and set the
outputs' tangents. An out= overload, or one autograd differentiates but that has no forward
formula (and no jvp decomposition), refuses with upstream's NotImplementedError. Composite
operators run as the operators they are made of, whose tangents compose.

``_make_dual``, ``_unpack_dual`` and ``_fw_primal`` are written by hand, as upstream's
VariableTypeManual.cpp writes them.

Nested levels (levels.py): the innermost level at which an input has a tangent is computed
first; the operator and its formula then run with that level hidden, so the outer levels'
tangents flow through both (the inner tangent gets a tangent of its own at each outer level).
"""

from __future__ import annotations

from ...core.grad_mode import TLS as _GRAD
from ...core.tensor import TensorBase
from ...dispatch.door import FORWARD_PASS, past_forward_ad
from . import levels, zero_tangent
from .formulas import spec_for


def _has_tangent(args, kwargs) -> bool:
    for a in (*args, *kwargs.values()):
        if isinstance(a, TensorBase):
            if levels.has_fw_grad(a):
                return True
        elif type(a) in (list, tuple):
            for x in a:
                if isinstance(x, TensorBase) and levels.has_fw_grad(x):
                    return True
    return False


def forward_dispatch(op, args, kwargs):
    manual = MANUAL.get(op.name)
    if manual is not None:
        return manual(op, args, kwargs)
    if not _GRAD.fw_grad or not _has_tangent(args, kwargs):
        return FORWARD_PASS
    spec = spec_for(op)
    if spec is None:  # not an ATen operator of native_functions.yaml (a custom op)
        return past_forward_ad(op, args, kwargs)
    entry = spec.entry
    vals = _bind(op, args, kwargs)
    level = levels.top_level(_flat(vals.get(n) for n, _ in entry.inputs))
    if level < 0:
        return past_forward_ad(op, args, kwargs)
    tangents = {n: _tangent_of(vals.get(n), k, level) for n, k in entry.inputs}
    if _is_composite(op):
        return past_forward_ad(op, args, kwargs)
    if entry.kind == "out" or (entry.kind == "mutable" and any(a.is_out for a in op.schema.arguments)):
        _forbid(entry, "because it is an out= function")
    if not entry.requires_derivative:
        return _below_forward(op, args, kwargs, 0)  # no level gives its outputs a tangent
    if not spec.formulas:
        if not entry.modifies_or_void:
            decomposed = _jvp_decomposition(op)
            if decomposed is not None:
                return decomposed(*args, **kwargs)
        _forbid(entry, "because it has not been implemented yet.\nPlease file an issue to "
                "PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-"
                "request.yml so that we can prioritize its implementation.")
    inplace = entry.kind == "inplace"
    original_self = None
    if inplace and any(c.f.original_self for c in spec.formulas):
        from ...dispatch.call import call

        original_self = call("clone", vals["self"])
    result = _below_forward(op, args, kwargs, level)
    outs = result if isinstance(result, tuple) else (result,)
    env = dict(vals)
    if inplace:
        env.update(dict.fromkeys(entry.outputs, vals["self"]))
        env["result"] = vals["self"]
    else:
        env.update(zip(entry.outputs, outs))
        if "result" not in entry.outputs and len(outs) == 1:
            env["result"] = outs[0]
    computed = []
    hide = levels.hide_from(level) if level else None
    prev_level = levels.TLS.formula_level
    levels.TLS.formula_level = level
    if hide is not None:
        hide.__enter__()
    try:
        _evaluate(spec, vals, tangents, env, level, inplace, original_self, computed)
    finally:
        levels.TLS.formula_level = prev_level
        if hide is not None:
            hide.__exit__()
    # set after every formula ran, as upstream's generated code: a formula reading another
    # output (batch norm's result1) reads its primal value, not a dual
    for f, value in computed:
        _set(f, value, env, inplace, level)
    if not inplace:
        _to_saved_outputs(outs, level)
    return result


def _evaluate(spec, vals, tangents, env, level, inplace, original_self, computed) -> None:
    for c in spec.formulas:
        f = c.f
        req = f.required_tangents
        if req and not any(_defined(tangents.get(n)) for n in req):
            continue
        if c.code is None:
            from ...core.refuse import TorchnativeNotImplementedError

            raise TorchnativeNotImplementedError(f"the forward derivative of {spec.key}", c.error)
        for n in req:
            v = vals.get(n)
            raw = tangents.get(n)
            if inplace and n == "self" and zero_tangent.is_zero(raw):
                raw = None  # zero tensors are immutable: self's tangent is computed anew
            env[f"{n}_t_raw"] = raw
            env[f"{n}_tensor"] = v
            env[f"{n}_t"] = raw if _defined(raw) or not isinstance(v, TensorBase) else \
                _zeros(v, inplace and n == "self")
        for n in f.required_primals:
            env[f"{n}_p"] = _primal(vals.get(n), level)
        if f.original_self:
            raw = levels.formula_tangent(original_self)
            env["original_self_t_raw"] = raw
            env["original_self_t"] = raw if raw is not None else _zeros(original_self, True)
            env["original_self_p"] = _primal(original_self, level)
            env["original_self"] = original_self
        elif inplace and _reuses_outplace(f) and _GRAD.grad_enabled and \
                env.get("self_t") is not None:
            env["self_t"] = env["self_t"].clone()
        computed.append((f, eval(c.code, _ns(), env)))


def _flat(values):
    out = []
    for v in values:
        if isinstance(v, TensorBase):
            out.append(v)
        elif type(v) in (list, tuple):
            out.extend(x for x in v if isinstance(x, TensorBase))
    return out


def _to_saved_outputs(outs, level) -> None:
    """Outputs the backward node saved were saved before their tangents existed (upstream saves
    them after): the saved copies get them, so a backward formula reading ``result`` (tanh,
    exp, sigmoid...) differentiates forward-over-reverse."""
    from ..node import SavedVariable

    for o in outs:
        node = getattr(o, "_grad_fn", None) if isinstance(o, TensorBase) else None
        saved = getattr(node, "_saved", None)
        spec = getattr(node, "_spec", None)
        if not saved or spec is None:
            continue
        for name, idx, _users in spec.saved_outputs:
            sv = saved.get(name)
            if type(sv) is SavedVariable and sv.data is not None and not sv.saved_original \
                    and idx is not None and idx < len(outs):
                g = levels.fw_grad(outs[idx], level)
                if g is not None and levels.fw_grad(sv.data, level) is None:
                    levels.share_tangent(outs[idx], sv.data)
        return  # one node for all outputs


def _below_forward(op, args, kwargs, level):
    """The operator itself, below the forward-AD entry of ``level``: its kernel (or the
    decomposition serving as one) computes values only, as upstream's kernels below the Autograd
    key do; the levels outside ``level`` still compute their tangents."""
    if level == 0:
        return _no_fw(past_forward_ad, op, args, kwargs)
    with levels.hide_from(level):
        result = forward_dispatch(op, args, kwargs)
        return past_forward_ad(op, args, kwargs) if result is FORWARD_PASS else result


def _set(f, value, env, inplace, level):
    names = ("self",) if inplace else f.var_names
    if len(names) == 1:
        target = env[names[0]]
        if f.var_is_list:
            if value is None:
                return
            for o, g in zip(target, value):
                if _defined(g) and o is not None:
                    levels.set_fw_grad(o, g, level, inplace)
            return
        if _defined(value) and isinstance(target, TensorBase):
            levels.set_fw_grad(target, value, level, inplace)
        return
    for name, g in zip(names, value):
        o = env[name]
        if _defined(g) and isinstance(o, TensorBase):
            levels.set_fw_grad(o, g, level, False)


def _reuses_outplace(f) -> bool:
    return "self_t_raw" in f.source


def _ns():
    from .. import generated

    return generated.NS


def _defined(t) -> bool:
    return t is not None and not (type(t) is list and not any(x is not None for x in t))


def _tangent_of(v, kind, level):
    if kind == "list":
        if not v:
            return None
        return [levels.fw_grad(t, level) if isinstance(t, TensorBase) else None for t in v]
    return levels.fw_grad(v, level) if isinstance(v, TensorBase) else None


def _zeros(v, plain: bool):
    """A zero tangent for an input without one (upstream: _efficientzerotensor, or zeros for the
    self of an in-place op, whose tangent is then written in place)."""
    import torch

    if plain:
        return torch.zeros(v.shape, dtype=v.dtype)
    return zero_tangent.zero(tuple(v.shape), v.dtype)


def _primal(v, level):
    if isinstance(v, TensorBase):
        if not levels.has_fw_grad(v):
            return v
        return _primal_at(v, level)
    if type(v) in (list, tuple):
        return [_primal(x, level) for x in v]
    return v


def _primal_at(v, level):
    """An alias of ``v`` without its tangent at ``level``, keeping those of the outer levels."""
    from ...dispatch.call import call

    result = _no_fw(call, "alias", v)
    levels.outer_tangents(v, result, level)
    return result


def _bind(op, args, kwargs) -> dict:
    from ..dispatch import _plan

    return _plan(op).bind(args, kwargs)


def _is_composite(op) -> bool:
    """CompositeImplicitAutograd in upstream's build: it has no forward formula of its own, its
    operators carry the tangents (or the door refuses it by name when it cannot run it)."""
    return "CompositeImplicitAutograd" in op.static_keys or \
        "CompositeImplicitAutograd" in op.py_kernels


def _forbid(entry, why: str):
    raise NotImplementedError(f"Trying to use forward AD with {entry.cpp_name} that does not "
                              f"support it {why}")


# operator name -> its compiled decomposition, filled by torch._C._jit_register_decomposition_for
# _schema (torch._decomp.decompositions_for_jvp registers them when TorchScript is on)
JIT_DECOMPOSITIONS: dict = {}


def _jvp_decomposition(op):
    """The decomposition registered for an operator without a forward formula, as upstream's
    ``run_jit_decomposition_with_args_for_jvp`` finds it: the operators it calls carry the
    tangents."""
    fn = JIT_DECOMPOSITIONS.get(op.name)
    if fn is None:
        return None

    def run(*args, **kwargs):  # the schema's arguments in order, keyword-only ones by name
        vals = _bind(op, args, kwargs)
        schema_args = op.schema.arguments
        return fn(*(vals[a.name] for a in schema_args if not a.kwarg_only),
                  **{a.name: vals[a.name] for a in schema_args if a.kwarg_only})
    return run


# --- VariableTypeManual's forward-AD operators -----------------------------------------------

def _no_fw(fn, *args):
    prev = _GRAD.fw_grad
    _GRAD.fw_grad = False
    try:
        return fn(*args)
    finally:
        _GRAD.fw_grad = prev


def _make_dual(op, args, kwargs):
    from ...dispatch.call import call

    vals = _bind(op, args, kwargs)
    primal, tangent, level = vals["primal"], vals["tangent"], vals["level"]
    inner = levels.resolve(level)
    if levels.fw_grad(primal, inner) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    result = _no_fw(call, "view", primal, list(primal.shape))
    levels.outer_tangents(primal, result, inner)
    if level != 0 or not levels.active():
        raise RuntimeError("Invalid level given to _make_dual")
    levels.set_fw_grad(result, tangent, inner, False)
    return result


def _fw_primal(op, args, kwargs):
    vals = _bind(op, args, kwargs)
    return _primal_at(vals["self"], levels.resolve(vals["level"]))


def _unpack_dual(op, args, kwargs):
    vals = _bind(op, args, kwargs)
    t, level = vals["dual"], levels.resolve(vals["level"])
    return (_primal_at(t, level), levels.fw_grad(t, level))


def _copy_(op, args, kwargs):
    """copy_ (VariableTypeManual.cpp): self's tangent becomes src's, broadcast (zero where src
    has none)."""
    if not _GRAD.fw_grad or not _has_tangent(args, kwargs):
        return FORWARD_PASS
    vals = _bind(op, args, kwargs)
    self_t, src = vals["self"], vals["src"]
    level = levels.top_level(_flat((self_t, src)))
    if level < 0:
        return FORWARD_PASS
    self_g = levels.fw_grad(self_t, level)
    if zero_tangent.is_zero(self_g):
        self_g = None  # zero tensors are immutable: the tangent is src's anew
    src_g = levels.fw_grad(src, level) if isinstance(src, TensorBase) else None
    result = _below_forward(op, args, kwargs, level)
    if self_g is not None:
        new = self_g.copy_(src_g) if src_g is not None else self_g.fill_(0)
    elif tuple(self_t._size) != tuple(src_g._size):
        new = src_g.broadcast_to(self_t.shape)
    else:
        new = src_g.clone()
    levels.set_fw_grad(self_t, new, level, True)
    return result


def _detach(op, args, kwargs):
    """detach: the result carries no tangent (upstream sets none), and is no forward view."""
    result = _no_fw(past_forward_ad, op, args, kwargs)
    levels.mark_not_forward_view(result)
    return result


MANUAL = {"aten::detach": _detach, "aten::_make_dual": _make_dual, "aten::_fw_primal": _fw_primal,
          "aten::_unpack_dual": _unpack_dual, "aten::copy_": _copy_}
