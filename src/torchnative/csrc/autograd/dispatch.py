"""The Autograd dispatch key: run the operator below autograd, then record it in the graph.

As upstream's generated VariableType kernels: collect the next edges of the differentiable
inputs, refuse what autograd refuses (out= with grad, in-place on a leaf that requires grad or on
a view of one, inputs that cannot be differentiated), save what the formulas need (only for the
inputs whose gradient will be computed), run the operator with grad mode off, and set the history
of the differentiable outputs. In-place ops rebase the history of the tensor they modify; on a
view they rebase the view's base through a CopySlices node (views.py).
"""

from __future__ import annotations

from ..core.tensor import TensorBase
from ..core.grad_mode import TLS as _GRAD
from ..dispatch.boxing import normalize
from ..dispatch.door import below_autograd
from ..ops.dispatch_keys import DispatchKeySet
from . import recorders as _recorders
from .node import Node, SavedVariable, gradient_edge, next_sequence_nr
from .views import check_inplace as _check_inplace, rebase_history, requires_grad, stamp

_NO_DEFAULT = object()
_NO_EDGE = (None, 0)  # an argument that does not require grad
_AS_IS = frozenset((int, float, bool, str, type(None)))


class _Plan:
    """How to read an operator's arguments by name (schema convention: positional, then
    keyword-only), and its formula spec."""

    __slots__ = ("names", "kwonly", "defaults", "spec", "fallback", "op", "view", "ns", "fname",
                 "ranges", "recorder")

    def __init__(self, op):
        from .generated import NS, spec_for

        self.ns = NS  # the formulas' namespace, for the saved values computed from the arguments
        self.fname = op.qualname.split("::")[-1]  # the name autograd's errors give
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
        # without a list argument every node of the op has the same ranges: one shared dict
        # (nodes only read it)
        self.ranges = None
        if self.spec is not None and all(kind != "list" for _, kind in self.spec.edges):
            self.ranges = {name: (i, i + 1, False) for i, (name, _) in enumerate(self.spec.edges)}
        if self.spec is not None and not self.spec.available:
            # formulas we cannot run: differentiate through upstream's decomposition instead.
            # An operator without formulas gets upstream's NotImplemented node, decomposition
            # or not (upstream's VariableType does not decompose it either)
            self.fallback = _decomposition_above_autograd(op)
        # the spec's steps written out as one function (None: ``_record`` interprets them)
        self.recorder = _recorders.build(self, self.spec, _RECORDING_STEPS)

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
    from ..dispatch.door import _decomposition, _guarded_decomposition

    if any(a.alias_info is not None and not a.alias_info.is_write
           for a in op.schema.returns if hasattr(a, "alias_info")):
        return None
    fn = _decomposition(op)
    return _guarded_decomposition(op, fn) if fn is not None else None


def _below(op, args, kwargs):
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
    py = op.py_kernels.get("AutogradCPU") or op.py_kernels.get("Autograd")
    if py is not None:
        return _python_autograd_kernel(op, py, args, kwargs)
    manual = MANUAL.get(op.name)
    if manual is not None:
        return manual(op, args, kwargs)
    plan = _plan(op)
    rec = plan.recorder
    if rec is not None:
        return rec(op, args, kwargs)
    spec = plan.spec
    if spec is None or not spec.available:
        if plan.fallback is not None:
            return _through_decomposition(op, plan, args, kwargs)
        if spec is None:
            return _record_not_implemented(op, args, kwargs)
    return _record(op, plan, spec, args, kwargs)


# the keys a dense CPU tensor's call carries at the autograd key (what a Python autograd kernel
# registered with_keyset receives, and masks with _after_autograd_keyset to redispatch)
_CPU_AUTOGRAD_KEYSET = DispatchKeySet("CPU") | "ADInplaceOrView" | "AutogradCPU"


def _python_autograd_kernel(op, entry, args, kwargs):
    """A kernel registered in Python at the Autograd key (torch.library.register_autograd, a
    torch.autograd.Function-backed op): it records the graph itself and redispatches below."""
    fn, with_keyset = entry
    args, kwargs = normalize(op, args, kwargs)
    if with_keyset:
        return fn(_CPU_AUTOGRAD_KEYSET, *args, **kwargs)
    return fn(*args, **kwargs)


def _record(op, plan, spec, args, kwargs, computed=_NO_DEFAULT):
    """Record ``op`` with its formula node; ``computed``: the result, already computed (its
    outputs' history is replaced), else the op is run below autograd."""
    vals = plan.bind(args, kwargs)
    inplace = spec.kind == "inplace"
    self_t = vals.get("self") if inplace else None
    if inplace and _inputs_require_grad(spec, vals):
        # before the edges are read (which refreshes a stale view's history), as upstream
        check_inplace(self_t, True)
    # next edges, in the order of the arguments with formulas; ``wanted``: the arguments with
    # a live edge, whose gradients will be computed (only what their formulas use is saved)
    edges, wanted = [], set()
    shared = plan.ranges if plan.spec is spec else None  # set only for specs without lists
    ranges = {} if shared is None else shared
    for name, kind in spec.edges:
        v = vals.get(name)
        start = len(edges)
        if kind == "list":
            for t in v or ():
                e = gradient_edge(t) if isinstance(t, TensorBase) else _NO_EDGE
                edges.append(e)
                if e[0] is not None:
                    wanted.add(name)
            ranges[name] = (start, len(edges), True)
        else:
            e = gradient_edge(v) if isinstance(v, TensorBase) else _NO_EDGE
            edges.append(e)
            if e[0] is not None:
                wanted.add(name)
            if shared is None:
                ranges[name] = (start, start + 1, False)
    any_rg = bool(wanted)
    if not any_rg:
        # a view made in no_grad of a tensor that requires grad requires grad but has no edge:
        # the op is recorded, its gradient goes nowhere (upstream's compute_requires_grad)
        any_rg = _any_view_requires_grad(spec, vals)
    fname = plan.fname
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
    saved = {}
    after = []
    written = _written_args(op) if spec.kind == "mutable" else ()
    for name, plain, code, users in spec.saved_inputs:
        if users and users.isdisjoint(wanted):
            continue
        if plain is not None and plain in written:
            # running_mean/var of training-mode batch norm: the op updates them in place and
            # upstream saves the very tensor, not bumping its version (its ADInplaceOrView
            # kernels bump only in-place and out= ops): saved once the op has written them
            after.append((name, vals.get(plain)))
            continue
        if plain is not None:
            v = vals.get(plain)
            if inplace and plain == "self":
                v = _clone_for_save(v)
        else:
            v = eval(code, plan.ns, vals)
        tv = type(v)
        # a Python scalar, None or a string is saved as it is (``_save``'s answer, uncalled)
        saved[name] = v if tv in _AS_IS else _save(v, False)
    result = _below(op, args, kwargs) if computed is _NO_DEFAULT else computed
    for name, v in after:
        saved[name] = _save(v, False)
    node = spec.node_cls(edges, ranges, saved)
    node._spec = spec
    outs = result if isinstance(result, tuple) else (result,)
    if inplace:
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
        if users and users.isdisjoint(wanted):
            continue
        o = self_t if inplace else outs[idx]
        saved[name] = _save(o, o is not None and o._grad_fn is node)
    if spec.derived_outputs:
        named = dict(zip(spec.output_names, outs))
        for name, code, users in spec.derived_outputs:
            if users and users.isdisjoint(wanted):
                continue
            saved[name] = _save(eval(code, plan.ns, named), False)
    return result


def _tensors(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, TensorBase):
            yield a
        elif type(a) in (list, tuple):
            yield from (t for t in a if isinstance(t, TensorBase))


def _through_decomposition(op, plan, args, kwargs):
    """An operator whose formulas cannot run here, differentiated through upstream's
    decomposition (its constituent operators record the graph). A decomposition may read an
    input only through values that carry no history (log_sigmoid_backward reads the saved
    ``buffer``, not ``self``): then the graph it records does not reach every input that
    requires grad, and the gradient would be silently missing. Such a result is recorded with
    the operator's own formula node instead (formulas that cannot run refuse by name when
    reached), or, without a usable node, with a node that refuses by name."""
    if not _GRAD.grad_enabled:
        return plan.fallback(*args, **kwargs)
    wanted = [t for t in _tensors(args, kwargs) if _differentiable(t) and requires_grad(t)]
    if not wanted:
        return plan.fallback(*args, **kwargs)
    # the nodes themselves are kept (a leaf's AccumulateGrad lives only while referenced)
    targets = {id(n): n for n in (gradient_edge(t)[0] for t in wanted)}
    start = next_sequence_nr()
    result = plan.fallback(*args, **kwargs)
    outs = [t for o in (result if isinstance(result, tuple) else (result,))
            for t in (o if isinstance(o, list) else (o,))
            if isinstance(t, TensorBase) and _differentiable(t)]
    if not outs:
        return result
    missing = set(targets) - _reached(outs, start)
    if not missing:
        return result
    spec = plan.spec
    ins = {id(t) for t in _tensors(args, kwargs)}
    if spec is not None and spec.kind == "functional" and \
            all(i is not None for _, i, _u in spec.saved_outputs) and \
            not any(id(o) in ins for o in outs):
        return _record(op, plan, spec, args, kwargs, computed=result)
    from ..core.refuse import TorchnativeNotImplementedError

    what = f"the derivative of {op.name}"
    why = spec.missing if spec is not None else "no derivative formula"
    if any(id(o) in ins for o in outs) or spec is not None and spec.kind != "functional":
        raise TorchnativeNotImplementedError(what, why + "; upstream's decomposition does not "
                                             "differentiate it")
    node = _Refusing(what, why, [gradient_edge(t) for t in _tensors(args, kwargs)])
    node._input_meta = tuple((o._size, o._dtype) for o in outs)
    for k, o in enumerate(outs):
        o._grad_fn, o._output_nr, o._requires_grad = node, k, True
    return result


def _reached(outs, start) -> set:
    """ids of the nodes the outputs' history reaches, walking only nodes made since
    sequence number ``start`` (those the decomposition recorded)."""
    seen, found = set(), set()
    stack = []
    for o in outs:
        fn = gradient_edge(o)[0]
        if fn is not None:
            found.add(id(fn))
            stack.append(fn)
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if getattr(fn, "_seq", start) < start:
            continue
        for nxt, _ in fn._next:
            if nxt is not None:
                found.add(id(nxt))
                stack.append(nxt)
    return found


class _Refusing(Node):
    """Stands for an operator's backward torchnative cannot compute: refuses by name when a
    backward pass reaches it."""

    def __init__(self, what, why, edges):
        super().__init__(edges)
        self._what, self._why = what, why

    def _run(self, grads):
        from ..core.refuse import TorchnativeNotImplementedError

        raise TorchnativeNotImplementedError(self._what, self._why)


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


def _written_args(op) -> frozenset:
    """Names of the arguments a (non in-place, non out=) operator writes: ``Tensor(a!)``."""
    w = op.cache.get("autograd_written")
    if w is None:
        w = op.cache["autograd_written"] = frozenset(
            a.name for a in op.schema.arguments
            if a.alias_info is not None and a.alias_info.is_write)
    return w


def _writes_output(op) -> bool:
    return any(a.is_out for a in op.schema.arguments)


def _save(v, is_output: bool):
    tv = type(v)
    if tv is list or tv is tuple:  # sizes and strides mostly: no tensor in them
        for x in v:
            if isinstance(x, TensorBase):
                return [SavedVariable(x, is_output) if isinstance(x, TensorBase) else None
                        for x in v]
        return v
    if isinstance(v, TensorBase):
        return SavedVariable(v, is_output)
    return v


def _clone_for_save(t):
    """The value an in-place op overwrites, saved for its backward: cloned while recording (as
    upstream's ``original_self = self.clone()``), so that double backward sees its history."""
    from ..dispatch.call import call

    return call("clone", t)


def check_inplace(t, any_requires_grad: bool) -> None:
    if t is None:
        return
    if t._tn_inference and not _GRAD.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")
    _check_inplace(t, any_requires_grad)


def _record_not_implemented(op, args, kwargs):
    """No formula and no decomposition: the outputs get a node that refuses when reached, as
    upstream's NotImplemented node does."""
    from .node import NotImplementedNode

    if _dont_require(op):
        # upstream's DONT_REQUIRE_DERIVATIVE (outputs that depend on no input's values:
        # ones_like of the loss each backward), or outputs that derivatives.yaml declares
        # non-differentiable: nothing is recorded
        return _below(op, args, kwargs)
    edges = []
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, TensorBase):
            edges.append(gradient_edge(a))
        elif type(a) in (list, tuple):
            edges.extend(gradient_edge(t) for t in a if isinstance(t, TensorBase))
    result = _below(op, args, kwargs)
    outs = result if isinstance(result, tuple) else (result,)
    diff = [o for o in outs if isinstance(o, TensorBase) and _differentiable(o)]
    if not diff or all(e[0] is None for e in edges):
        return result
    schema = op.schema
    if any(a.is_write for a in schema.arguments):
        from ..core.refuse import TorchnativeNotImplementedError

        raise TorchnativeNotImplementedError(f"autograd for {op.name}",
                                             "no derivative formula or decomposition")
    node = NotImplementedNode(f"derivative for {op.name} is not implemented", edges)
    node._input_meta = tuple((o._size, o._dtype) for o in diff)
    for k, o in enumerate(diff):
        o._grad_fn = node
        o._output_nr = k
        o._requires_grad = True
    return result


def dont_record(op) -> bool:
    """Whether ``autograd_dispatch`` only runs ``op`` below autograd whatever its arguments: no
    autograd kernel registered in Python, no hand-written or formula recording, no
    decomposition, and outputs that are never differentiable (the door's plain lane may take
    such a call with grad mode off)."""
    if op.py_kernels.get("AutogradCPU") or op.py_kernels.get("Autograd") or \
            MANUAL.get(op.name) is not None:
        return False
    plan = _plan(op)
    return plan.spec is None and plan.fallback is None and _dont_require(op)


def _dont_require(op) -> bool:
    d = op.cache.get("autograd_dont_require")
    if d is None:
        from .formulas import table

        t = table()
        d = op.cache["autograd_dont_require"] = \
            op.qualname.split("::")[-1] in t["__dont_require__"] or \
            op.name.split("::", 1)[-1] in t["__nondiff_outputs__"] or _returns_numbers(op)
    return d


def _returns_numbers(op) -> bool:
    """Returns values but no tensor, writes nothing (``_local_scalar_dense``, ``sym_size``,
    ``is_nonzero``...): nothing for autograd to record."""
    schema = op.schema
    return bool(schema.returns) and not any("Tensor" in str(r.type) for r in schema.returns) \
        and not any(a.is_write for a in schema.arguments)


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


def _detach(op, args, kwargs):
    """detach (VariableTypeManual.cpp): computed below autograd, a view that neither records a
    node nor takes its base's history (not differentiable, backward or forward)."""
    result = _below(op, args, kwargs)
    if isinstance(result, TensorBase):
        result._grad_fn = None
        result._requires_grad = False
        result._view_base = None
    return result


def _resize(op, args, kwargs):
    """resize_/resize_as_ (VariableTypeManual.cpp) record nothing; the kernel refuses a tensor
    that requires grad (as upstream, under no_grad too)."""
    return _below(op, args, kwargs)


MANUAL = {"aten::copy_": _copy_, "aten::detach": _detach, "aten::resize_": _resize,
          "aten::resize_as_": _resize}


# what a written-out recorder calls (recorders.py, which cannot import this module; plans are
# made on first use, after this module is loaded)
_RECORDING_STEPS = {"no_edge": _NO_EDGE, "any_view": _any_view_requires_grad, "below": _below,
                    "as_is": _AS_IS, "save": _save, "stamp_views": _stamp_views}
