"""The Autograd dispatch key: run the operator below autograd, then record it in the graph.

As upstream's generated VariableType kernels: collect the next edges of the differentiable
inputs, refuse what autograd refuses (out= with grad, in-place on a leaf that requires grad or on
a view of one, inputs that cannot be differentiated), save what the formulas need (only for the
inputs whose gradient will be computed), run the operator with grad mode off, and set the history
of the differentiable outputs. In-place ops rebase the history of the tensor they modify; on a
view they rebase the view's base through a CopySlices node (views.py).
"""

from __future__ import annotations

from ..tensor import TensorBase
from .grad_mode import TLS as _GRAD
from .node import Node, SavedVariable, gradient_edge
from .views import check_inplace as _check_inplace, requires_grad, stamp

_NO_DEFAULT = object()


class _Plan:
    """How to read an operator's arguments by name (schema convention: positional, then
    keyword-only), and its formula spec."""

    __slots__ = ("names", "kwonly", "defaults", "spec", "fallback", "op", "view")

    def __init__(self, op):
        from .generated import spec_for

        self.op = op
        self.view = _view_kind(op)
        args = op.schema.arguments
        self.names = [a.name for a in args if not a.kwarg_only]
        self.kwonly = [a.name for a in args if a.kwarg_only]
        self.defaults = {a.name: (a.default_value if a.has_default_value() else None)
                         for a in args}
        key = op.name.split("::", 1)[1] if op.qualname.startswith("aten::") else None
        self.spec = spec_for(key) if key else None
        self.fallback = None
        if self.spec is None or not self.spec.available:
            self.fallback = _decomposition_above_autograd(op)

    def bind(self, args, kwargs) -> dict:
        vals = dict(self.defaults)
        vals.update(zip(self.names, args))
        vals.update(kwargs)
        return vals


def _view_kind(op):
    """None, or the CreationMeta of the views an operator returns: DEFAULT for one view of its
    input, MULTI_OUTPUT_NODE for several (unbind, split, ...)."""
    from .views import DEFAULT, MULTI_OUTPUT_NODE

    rets = op.schema.returns
    views = [r for r in rets if getattr(r, "alias_info", None) is not None and
             not r.alias_info.is_write]
    if not views:
        return None
    if len(rets) > 1 or "[]" in str(views[0].type) or "List" in str(views[0].type):
        return MULTI_OUTPUT_NODE
    return DEFAULT


def _plan(op) -> _Plan:
    p = op.cache.get("autograd")
    if p is None:
        p = op.cache["autograd"] = _Plan(op)
    return p


def _decomposition_above_autograd(op):
    """Upstream's Python decomposition of an operator we cannot differentiate directly: run above
    autograd, its constituent operators record the graph (views and factories excluded)."""
    from ..door import _decomposition, _guarded_decomposition

    if any(a.alias_info is not None and not a.alias_info.is_write
           for a in op.schema.returns if hasattr(a, "alias_info")):
        return None
    fn = _decomposition(op)
    return _guarded_decomposition(op, fn) if fn is not None else None


def _below(op, args, kwargs):
    from ..door import below_autograd

    prev = _GRAD.grad_enabled
    _GRAD.grad_enabled = False
    try:
        return below_autograd(op, args, kwargs)
    finally:
        _GRAD.grad_enabled = prev


def _differentiable(t) -> bool:
    dt = t._dtype
    return dt.is_floating_point or dt.is_complex


def autograd_dispatch(op, args, kwargs):
    manual = MANUAL.get(op.name)
    if manual is not None:
        return manual(op, args, kwargs)
    plan = _plan(op)
    spec = plan.spec
    if spec is None or not spec.available:
        if plan.fallback is not None:
            return plan.fallback(*args, **kwargs)
        if spec is None:
            return _record_not_implemented(op, args, kwargs)
    vals = plan.bind(args, kwargs)
    inplace = spec.kind == "inplace"
    self_t = vals.get("self") if inplace else None
    if inplace and _inputs_require_grad(spec, vals):
        # before the edges are read (which refreshes a stale view's history), as upstream
        check_inplace(self_t, True)
    # next edges, in the order of the arguments with formulas
    edges, ranges = [], {}
    any_rg = False
    for name, kind in spec.edges:
        v = vals.get(name)
        start = len(edges)
        if kind == "list":
            for t in v or ():
                e = gradient_edge(t) if isinstance(t, TensorBase) else (None, 0)
                edges.append(e)
            ranges[name] = (start, len(edges), True)
        else:
            e = gradient_edge(v) if isinstance(v, TensorBase) else (None, 0)
            edges.append(e)
            ranges[name] = (start, start + 1, False)
    for e in edges:
        if e[0] is not None:
            any_rg = True
            break
    if not any_rg:
        # a view made in no_grad of a tensor that requires grad requires grad but has no edge:
        # the op is recorded, its gradient goes nowhere (upstream's compute_requires_grad)
        any_rg = _any_view_requires_grad(spec, vals)
    fname = op.qualname.split("::")[-1]
    for name in spec.nondiff:
        v = vals.get(name)
        if isinstance(v, TensorBase) and v._requires_grad:
            raise RuntimeError(f"The function '{fname}' is not differentiable with respect to "
                               f"argument '{name}'. This input cannot have requires_grad True.")
    if spec.kind == "out" or spec.kind == "mutable" and _writes_output(op):
        if any_rg:
            raise RuntimeError(f"{fname}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")
        return _below(op, args, kwargs)
    if not any_rg:
        return _below(op, args, kwargs)
    # which inputs' gradients are wanted: save only what their formulas use
    wanted = {name for name, (a, b, _) in ranges.items()
              if any(edges[i][0] is not None for i in range(a, b))}
    saved = {}
    for name, plain, code, users in spec.saved_inputs:
        if users and not (users & wanted):
            continue
        if plain is not None:
            v = vals.get(plain)
            if inplace and plain == "self":
                v = _clone_for_save(v)
        else:
            from .generated import NS

            v = eval(code, NS, vals)
        saved[name] = _save(v, False)
    result = _below(op, args, kwargs)
    node = spec.node_cls(edges, ranges, saved)
    node._spec = spec
    outs = result if isinstance(result, tuple) else (result,)
    if inplace:
        from .views import rebase_history

        rebase_history(self_t, node)
        node._input_meta = ((self_t._size, self_t._dtype),)
    else:
        meta = []
        for k, idx in enumerate(spec.diff_outputs):
            o = outs[idx]
            if isinstance(o, TensorBase):
                if _differentiable(o):
                    o._grad_fn = node
                    o._output_nr = k
                    o._requires_grad = True
                meta.append((o._size, o._dtype))
            elif isinstance(o, list):
                node._input_meta = tuple((t._size, t._dtype) for t in o)
                for j, t in enumerate(o):
                    if _differentiable(t):
                        t._grad_fn = node
                        t._output_nr = j
                        t._requires_grad = True
                meta = None
                break
            else:
                meta.append(None)
        if meta is not None:
            node._input_meta = tuple(meta)
        if plan.view is not None:
            _stamp_views(outs, vals.get("self"), plan.view)
    for name, idx, users in spec.saved_outputs:
        if users and not (users & wanted):
            continue
        o = self_t if inplace else outs[idx]
        saved[name] = _save(o, o is not None and o._grad_fn is node)
    return result


def _inputs_require_grad(spec, vals) -> bool:
    for name, kind in spec.edges:
        v = vals.get(name)
        for t in (v or ()) if kind == "list" else (v,):
            if isinstance(t, TensorBase) and requires_grad(t):
                return True
    return False


def _any_view_requires_grad(spec, vals) -> bool:
    for name, kind in spec.edges:
        v = vals.get(name)
        for t in (v or ()) if kind == "list" else (v,):
            if isinstance(t, TensorBase) and t._view_base is not None and requires_grad(t):
                return True
    return False


def _stamp_views(outs, base, creation) -> None:
    """as_view: the views an op returns have current history, made in grad mode."""
    if not isinstance(base, TensorBase):
        return
    for o in outs:
        for t in (o if isinstance(o, list) else (o,)):
            if isinstance(t, TensorBase) and t._view_base is not None:
                stamp(t, base, creation)


def _writes_output(op) -> bool:
    return any(a.is_out for a in op.schema.arguments)


def _save(v, is_output: bool):
    if isinstance(v, TensorBase):
        return SavedVariable(v, is_output)
    if type(v) in (list, tuple) and v and any(isinstance(x, TensorBase) for x in v):
        return [SavedVariable(x, is_output) if isinstance(x, TensorBase) else None for x in v]
    return v


def _clone_for_save(t):
    """The value an in-place op overwrites, saved for its backward: cloned while recording (as
    upstream's ``original_self = self.clone()``), so that double backward sees its history."""
    from ..manual_bindings import call

    return call("clone", t)


def check_inplace(t, any_requires_grad: bool) -> None:
    if t is None:
        return
    if t.__dict__.get("_tn_inference") and not _GRAD.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")
    _check_inplace(t, any_requires_grad)


def _record_not_implemented(op, args, kwargs):
    """No formula and no decomposition: the outputs get a node that refuses when reached, as
    upstream's NotImplemented node does."""
    from .node import NotImplementedNode

    edges = []
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, TensorBase):
            edges.append(gradient_edge(a))
        elif type(a) in (list, tuple):
            edges.extend(gradient_edge(t) for t in a if isinstance(t, TensorBase))
    result = _below(op, args, kwargs)
    from .formulas import table

    if op.qualname.split("::")[-1] in table()["__dont_require__"]:
        return result  # upstream's DONT_REQUIRE_DERIVATIVE: outputs depend on no input's values
    outs = result if isinstance(result, tuple) else (result,)
    diff = [o for o in outs if isinstance(o, TensorBase) and _differentiable(o)]
    if not diff or all(e[0] is None for e in edges):
        return result
    schema = op.schema
    if any(a.is_write for a in schema.arguments):
        from ..refuse import TorchnativeNotImplementedError

        raise TorchnativeNotImplementedError(f"autograd for {op.name}",
                                             "no derivative formula or decomposition")
    node = NotImplementedNode(f"derivative for {op.name} is not implemented", edges)
    node._input_meta = tuple((o._size, o._dtype) for o in diff)
    for k, o in enumerate(diff):
        o._grad_fn = node
        o._output_nr = k
        o._requires_grad = True
    return result


class CopyBackwards(Node):
    """copy_'s node (upstream writes copy_'s autograd by hand, VariableTypeManual.cpp)."""

    def __init__(self, edges, src):
        super().__init__(edges)
        self._src_dtype = src._dtype

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"

    def _run(self, grads):
        import torch

        grad = grads[0]
        out = [None, None]
        if grad is None:
            return out
        if self._next[0][0] is not None:
            out[0] = torch.zeros_like(grad, memory_format=torch.contiguous_format)
        if self._next[1][0] is not None:
            if not self._src_dtype.is_complex and grad._dtype.is_complex:
                grad = torch.real(grad)
            out[1] = grad.to(self._src_dtype)
        return out


def _copy_(op, args, kwargs):
    from .views import rebase_history

    self_t, src = args[0], args[1]
    # as VariableTypeManual's copy_: requires grad, check, then the edges
    if not (requires_grad(self_t) or isinstance(src, TensorBase) and requires_grad(src)) or \
            not _differentiable(self_t):
        return _below(op, args, kwargs)
    check_inplace(self_t, True)
    edges = [gradient_edge(self_t), gradient_edge(src) if isinstance(src, TensorBase)
             else (None, 0)]
    node = CopyBackwards(edges, src)
    result = _below(op, args, kwargs)
    rebase_history(self_t, node)
    node._input_meta = ((self_t._size, self_t._dtype),)
    return result


MANUAL = {"aten::copy_": _copy_}
