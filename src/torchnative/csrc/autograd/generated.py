"""Node classes for derivatives.yaml entries (``AddBackward0``...), built from formulas.py's table.

Each overload's formulas are compiled once, on first use: the Python source from translate.py
becomes a code object, and every free name in it is resolved to a helper (``helpers.namespace()``:
cpp_shims.py and manual/) or to an ATen operator packet (``torch.ops.aten.<name>``, reached
through the door). A formula whose names
do not all resolve is kept with the reason, so the node can refuse by name when reached.
"""

from __future__ import annotations

import ast
import sys

from ..core.tensor import TensorBase
from ..dispatch import door as _door
from . import formula_runners as _formula_runners, helpers
from .formulas import table
from .graph_task import TLS as _TASK
from .node import Node, SavedVariable

_ENV_FIXED = {"grad", "grads", "grad_input_mask", "retain_variables"}

NS: dict = helpers.namespace()
_UNRESOLVED = object()


def _resolve(name: str):
    """A helper, else an ATen operator packet, else None."""
    if name in NS:
        return NS[name]
    from ..ops.dispatcher import REGISTRY

    for cand in (name, name[:-7] if name.endswith("_symint") else None):
        if cand and _runnable(REGISTRY.overloads(f"aten::{cand}")):
            fn = NS[name] = CppOp(f"aten::{cand}")
            return fn
    return None


def _runnable(overloads: dict) -> bool:
    """Does some overload have a CPU kernel, a composite, or a decomposition? (A formula
    calling an operator we cannot run is as unavailable as one calling a missing helper.)"""
    from ..dispatch.door import resolve, resolve_composite_implicit

    for op in overloads.values():
        cia = op.cache.get("CompositeImplicitAutograd", False)
        if cia is False:
            cia = op.cache["CompositeImplicitAutograd"] = resolve_composite_implicit(op)
        if cia is not None:
            return True
        impl = op.cache.get("CPU")
        if impl is None:
            impl = op.cache["CPU"] = resolve(op, "CPU")
        if impl.path != "refused":
            return True
    return False


class CppOp:
    """An ATen operator called as C++ calls it: all arguments positional, in schema order
    (keyword-only ones included), the overload chosen by the arguments' types."""

    __slots__ = ("qualname", "_plans", "_chosen")

    def __init__(self, qualname: str):
        self.qualname = qualname
        self._plans = None
        self._chosen = {}  # _kinds(args) -> (op, how each argument is passed or None)

    def __call__(self, *args):
        kinds = tuple([(_TENSOR if v._size else _SCALAR_TENSOR) if isinstance(v, TensorBase)
                       else type(v) for v in args])  # _kind of each, inlined: the hot path
        chosen = self._chosen.get(kinds)
        if chosen is None:
            chosen = self._chosen[kinds] = self._choose(args)
        op, steps = chosen
        if steps is None:  # every argument positional and as given
            return _door.aten_dispatch(op, args, {})
        pos, kw = [], {}
        for v, (kwarg_only, name, conv) in zip(args, steps):
            if conv:
                v = [] if conv == _EMPTY else [v]
            if kwarg_only:
                kw[name] = v
            else:
                pos.append(v)
        return _door.aten_dispatch(op, tuple(pos), kw)

    def _choose(self, args):
        """The overload the arguments bind to and how each is passed; the choice depends only
        on each argument's ``_kind``, so it is made once per kinds."""
        if self._plans is None:
            from ..ops.dispatcher import REGISTRY

            self._plans = []
            for op in REGISTRY.overloads(self.qualname).values():
                params = [a for a in op.schema.arguments if not a.is_out]
                if len(params) != len(op.schema.arguments):
                    continue
                self._plans.append((op, params))
        # C++ picks an exact overload first; failing that, an int converts to a one-int
        # IntArrayRef (its implicit constructor), as ``at::sum(t, 0, true)`` does
        for widen in (False, True):
            for op, params in self._plans:
                steps = _bind(op, params, args, widen)
                if steps is not None:
                    if not any(kwarg_only or conv for kwarg_only, _, conv in steps):
                        steps = None
                    return op, steps
        raise RuntimeError(f"{self.qualname}: no overload accepts the arguments of the "
                           f"derivative formula ({', '.join(type(a).__name__ for a in args)})")


_SCALAR_TENSOR, _TENSOR, _EMPTY, _WRAP = object(), object(), 1, 2


def _kind(v):
    """What overload resolution reads of an argument: its type, and for a tensor whether it is
    0-dimensional (a Number parameter takes only those)."""
    if isinstance(v, TensorBase):
        return _TENSOR if v._size else _SCALAR_TENSOR
    return type(v)


def _bind(op, params, args, widen: bool):
    """How each argument is passed to ``op`` ((keyword-only, name, conversion) per argument), or
    None where the arguments do not fit."""
    if len(args) > len(params):
        return None
    steps = []
    for i, a in enumerate(params):
        if i < len(args):
            v = args[i]
            conv = 0
            if v is None and a.real_type.kind() == "ListType":
                v, conv = [], _EMPTY  # an int[] the forward's caller gave as None (stride=None)
            if widen and _int_for_int_list(v, a.real_type):
                v, conv = [v], _WRAP
            if not _matches(v, a.real_type):
                return None
        elif a.has_default_value() or a.type.kind() == "OptionalType":
            continue
        else:
            return None
        steps.append((a.kwarg_only, a.name, conv))
    return tuple(steps)


def _int_for_int_list(v, t) -> bool:
    if t.kind() == "OptionalType":
        t = t.getElementType()
    return (t.kind() == "ListType" and t.getElementType().kind() in ("IntType", "SymIntType")
            and isinstance(v, int) and not isinstance(v, bool))


def _matches(v, t) -> bool:
    k = t.kind()
    if k == "OptionalType":
        return v is None or _matches(v, t.getElementType())
    if k == "TensorType":
        return isinstance(v, TensorBase)
    if v is None:
        return False
    if k == "ListType":
        return isinstance(v, (list, tuple))
    if isinstance(v, TensorBase):
        return k in ("NumberType", "IntType", "FloatType", "SymIntType") and v.dim() == 0 and \
            k == "NumberType"
    if k in ("IntType", "SymIntType"):
        return isinstance(v, int) and not isinstance(v, bool)
    if k == "BoolType":
        return isinstance(v, bool)
    if k in ("FloatType", "NumberType", "ComplexType"):
        return isinstance(v, (int, float, complex))
    if k == "StringType":
        return isinstance(v, str)
    return True


class CompiledFormula:
    __slots__ = ("var_names", "code", "error", "names")

    def __init__(self, var_names, code, error, names):
        self.var_names, self.code, self.error, self.names = var_names, code, error, names


class Spec:
    """An overload's compiled formulas and saving plan."""

    def __init__(self, key: str, f):
        self.key = key
        self.raw = f
        self.edges = f.edges
        self.kind = f.kind
        self.diff_outputs = f.diff_outputs
        self.output_names = f.output_names
        # (k, "grad_<name>"): the formulas' name for the gradient of differentiable output k
        self.grad_names = tuple((k, f"grad_{f.output_names[idx]}")
                                for k, idx in enumerate(f.diff_outputs))
        self.nondiff = f.nondiff_tensor_args
        env = {n for n, _ in f.saved_inputs} | set(f.saved_outputs) | _ENV_FIXED | \
            {f"grad_{n}" for n in f.output_names}
        self.formulas = []
        uses: dict[str, set] = {}
        for fm in f.formulas:
            if not fm.source:
                self.formulas.append(CompiledFormula(fm.var_names, None, fm.error, ()))
                continue
            names = _free_names(fm.source)
            missing = [n for n in names if n not in env and _resolve(n) is None]
            error = ""
            if missing:
                error = f"its formula calls {', '.join(sorted(missing))}, which torchnative " \
                        "does not implement"
            code = _compile_formula(fm.source, env, f"<{f.node} formula for "
                                    f"{', '.join(fm.var_names)}>") if not missing else None
            self.formulas.append(CompiledFormula(fm.var_names, code, error, names))
            for n in names:
                uses.setdefault(n, set()).update(fm.var_names)
        # saved inputs: (name, code or None for a plain argument, vars whose formulas use it)
        self.saved_inputs = []
        for name, src in f.saved_inputs:
            plain = src.isidentifier()
            code = None if plain else compile(src, f"<{f.node} saved {name}>", "eval")
            if not plain:
                for n in _free_names(src):
                    if n not in NS:
                        _resolve(n)
            self.saved_inputs.append((name, src if plain else None, code,
                                      frozenset(uses.get(name, ()))))
        derived = dict(f.derived_outputs)
        self.saved_outputs = [(n, self._output_index(n), frozenset(uses.get(n, ())))
                              for n in f.saved_outputs if n not in derived]
        # saved values computed from the outputs: (name, code, vars whose formulas use it)
        self.derived_outputs = [(n, compile(src, f"<{f.node} saved {n}>", "eval"),
                                 frozenset(uses.get(n, ()))) for n, src in derived.items()]
        self.available = all(c.code is not None for c in self.formulas) and \
            all(i is not None for _, i, _u in self.saved_outputs)
        self.missing = "; ".join(c.error for c in self.formulas if c.error)
        self.needs_original_self = f.kind == "inplace" and any(
            n == "self" for n, *_ in self.saved_inputs)
        self.node_cls = node_class(f.node)
        self.runner = _UNRESOLVED  # formula_runners' function, made on the first backward

    def _output_index(self, name: str) -> int:
        if name in self.output_names:
            return self.output_names.index(name)
        if name == "result":
            return 0
        if name.startswith("result") and name[6:].isdigit():
            return int(name[6:])
        return None


class _Functions:
    """``_FN.name``: the helper or operator ``name``, for calls whose name an argument shadows
    (``complex(real, imag)``'s formula calls ``at::real(grad)`` beside an argument ``real``)."""

    def __getattr__(self, name: str):
        fn = _resolve(name)
        if fn is None:
            raise AttributeError(name)
        return fn


NS["_FN"] = _Functions()


def _shadowed_calls(src: str, env: set):
    """The formula's tree with each call of a helper whose name an environment value shadows
    made through ``_FN``, or None where no call is shadowed."""
    tree = ast.parse(src, mode="eval")
    shadowed = False
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in env and \
                _resolve(n.func.id) is not None:
            n.func = ast.Attribute(value=ast.Name("_FN", ast.Load()), attr=n.func.id,
                                   ctx=ast.Load())
            shadowed = True
    return ast.fix_missing_locations(tree) if shadowed else None


def _compile_formula(src: str, env: set, filename: str):
    tree = _shadowed_calls(src, env)
    return compile(src if tree is None else tree, filename, "eval")


def formula_source(src: str, env: set) -> str:
    """The formula's source as ``_compile_formula`` compiles it."""
    tree = _shadowed_calls(src, env)
    return src if tree is None else ast.unparse(tree)


def _free_names(src: str) -> tuple:
    tree = ast.parse(src, mode="eval")
    bound = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Lambda):
            bound.update(a.arg for a in n.args.args)
    seen = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id not in bound and n.id not in seen and \
                n.id not in ("True", "False", "None", "list", "int", "float"):
            seen.append(n.id)
    return tuple(seen)


_SPECS: dict = {}


def spec_for(key: str):
    """The compiled Spec of an overload ("add.Tensor"), or None without a formula."""
    s = _SPECS.get(key, _UNRESOLVED)
    if s is _UNRESOLVED:
        f = table().get(key)
        s = _SPECS[key] = Spec(key, f) if f is not None else None
    return s


class FormulaNode(Node):
    """A node whose backward is derivatives.yaml's formulas for one forward call."""

    _spec: Spec = None

    def __init__(self, next_edges, ranges, saved):
        Node.__init__(self, next_edges)
        self._ranges = ranges  # arg name -> (start, stop, is_list)
        self._saved = saved  # name -> value | SavedVariable | [SavedVariable]

    def _unpack(self, v):
        if type(v) is SavedVariable:
            return v.unpack(self)
        if type(v) is list and any(type(x) is SavedVariable for x in v):  # Tensor?[] may lead with None
            return [x.unpack(self) if type(x) is SavedVariable else x for x in v]
        return v

    def _run(self, grads):
        spec = self._spec
        run = spec.runner
        if run is _UNRESOLVED:
            run = spec.runner = _formula_runners.build(spec, NS, formula_source)
        if run is not None:
            return run(self, grads)
        nxt = self._next
        out = [None] * len(nxt)
        for g in grads:
            if g is not None:
                break
        else:
            return out
        env = None
        needed = _TASK.needed  # the running pass's nodes to execute (None: all)
        live = [n is not None for n, _ in nxt] if needed is None else \
            [n is not None and n in needed for n, _ in nxt]
        for f in spec.formulas:
            spans = [self._ranges[v] for v in f.var_names]
            mask = [True in live[a:b] for a, b, _ in spans]
            if True not in mask:
                continue
            if f.code is None:
                from ..core.refuse import TorchnativeNotImplementedError

                raise TorchnativeNotImplementedError(
                    f"the derivative of {spec.key} ({type(self).__name__})", f.error)
            if env is None:
                env = {}
                for k, v in self._saved.items():  # in saving order, as the C++ unpacks them
                    tv = type(v)
                    env[k] = v.unpack(self) if tv is SavedVariable else \
                        self._unpack(v) if tv is list else v
                env["grads"] = grads
                env["grad"] = grads[0] if grads else None
                n_grads = len(grads)
                for k, name in spec.grad_names:
                    if k < n_grads:
                        env[name] = grads[k]
                env["retain_variables"] = True
            env["grad_input_mask"] = mask
            r = eval(f.code, NS, env)
            if len(f.var_names) == 1:
                r = (r,)
            for (a, b, is_list), val, m in zip(spans, r, mask):
                if not m:
                    continue
                if is_list:
                    if val is not None:
                        out[a:b] = list(val)[: b - a]
                else:
                    out[a] = val
        return out

    def __getattr__(self, attr):
        if attr.startswith("_raw_saved_") and attr[11:] in self.__dict__.get("_saved", {}):
            return self._saved[attr[11:]]
        if attr.startswith("_saved_"):
            saved = self.__dict__.get("_saved", {})
            name = attr[7:]
            if name in saved:
                return self._unpack(saved[name])
            spec = self.__dict__.get("_spec")
            if spec is not None and (any(n == name for n, *_ in spec.saved_inputs) or
                                     any(n == name for n, *_ in spec.saved_outputs)):
                return None
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def _release_variables(self) -> None:
        for v in self._saved.values():
            if type(v) is SavedVariable:
                v.release()
            elif type(v) is list:
                for x in v:
                    if type(x) is SavedVariable:
                        x.release()


_CLASSES: dict = {}


def node_class(name: str) -> type:
    cls = _CLASSES.get(name)
    if cls is None:
        cls = type(name, (FormulaNode,), {"__module__": "builtins"})
        _CLASSES[name] = cls
        mod = sys.modules.get("torch._C._functions")
        if mod is not None:
            setattr(mod, name, cls)
    return cls


def saved_attribute(node, attr: str):
    """``node._saved_<name>``: the saved value, tensors unpacked."""
    return node._unpack(node._saved[attr])
