"""An overload's forward formulas, compiled on first use.

Free names resolve as the backward formulas' do (``generated._resolve``: the formula helpers, then
ATen operators through the door), after the jvp helpers of FunctionsManual that only forward
formulas call (jvp.py). A formula whose names do not all resolve keeps the reason, and refuses by
name when an input with a tangent reaches it.
"""

from __future__ import annotations

from . import jvp, linalg_jvp, zero_tangent
from .table import table

_UNRESOLVED = object()


def _jvp_names() -> dict:
    from .. import generated

    names = {}
    for module in (jvp, linalg_jvp, zero_tangent):
        names.update({k: v for k, v in vars(module).items() if callable(v) and
                      getattr(v, "__module__", None) == module.__name__ and
                      (not k.startswith("_") or k.endswith("_jvp")) and  # _convolution_jvp
                      (module is not zero_tangent or k.startswith("zt_"))})
    names.update(jvp.CONSTANTS)
    clash = sorted(n for n in names if n in generated.NS)
    if clash:
        raise RuntimeError(f"jvp helpers {clash} are also formula helpers: define each once")
    return names


JVP: dict = {}


def resolve(name: str):
    from .. import generated

    if not JVP:
        JVP.update(_jvp_names())
    if name in JVP:
        return JVP[name]
    return generated._resolve(name)


class Compiled:
    __slots__ = ("f", "code", "error", "names")

    def __init__(self, f, code, error, names):
        self.f, self.code, self.error, self.names = f, code, error, names


class FwSpec:
    def __init__(self, key: str, entry):
        from .. import generated  # its namespace needs torch imported

        self.key = key
        self.entry = entry
        self.input_names = [n for n, _ in entry.inputs]
        env = set()
        for n, _ in entry.inputs:
            env.update((n, f"{n}_t", f"{n}_p", f"{n}_t_raw", f"{n}_tensor"))
        env.update(("original_self", "original_self_t", "original_self_p", "original_self_t_raw",
                    "self", "self_t", "self_p", "self_t_raw", "result"))
        env.update(entry.outputs)
        self.formulas = []
        for f in entry.formulas:
            if not f.source:
                self.formulas.append(Compiled(f, None, f.error, ()))
                continue
            src = f.source
            names = generated._free_names(src)
            # upstream's efficient zero tangents: the arithmetic and views that short-circuit
            zsrc = zero_tangent.compile_zero_aware(src)
            zt_names = [n for n in generated._free_names(zsrc) if n.startswith("zt_")]
            # arguments of the schema that are not tensors (dim, alpha...) are bound at call time
            missing = [n for n in names if n not in env and not n.isupper() and
                       resolve(n) is None and n not in _ARG_NAMES.get(key, ())]
            if missing:
                self.formulas.append(Compiled(f, None, f"its forward formula calls "
                                              f"{', '.join(sorted(missing))}, which torchnative "
                                              "does not implement", names))
                continue
            if not JVP:
                JVP.update(_jvp_names())
            for n in [*names, *zt_names]:
                if n in JVP and n not in generated.NS:
                    generated.NS[n] = JVP[n]  # evaluation namespace: one dict for both
            source = zero_tangent.compile_zero_aware(_methods_as_cpp_calls(src))
            code = generated._compile_formula(source, env | set(_ARG_NAMES.get(key, ())),
                                              f"<forward formula of {key}>")
            self.formulas.append(Compiled(f, code, "", names))


def _methods_as_cpp_calls(src: str) -> str:
    """``t.expand(size, implicit)``: C++ passes every argument positionally, Python's Tensor
    methods take some only by keyword. A method that is an ATen operator is called as the
    operator, arguments in schema order (generated.CppOp), as the backward formulas' free
    functions are."""
    import ast

    from .. import generated
    from ...ops.dispatcher import REGISTRY

    tree = ast.parse(src, mode="eval")
    changed = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            m = node.func.attr
            overloads = REGISTRY.overloads(f"aten::{m}")
            # only where Python's method would refuse the call: more positional arguments than
            # any overload takes positionally
            if not overloads or any(
                    sum(1 for a in op.schema.arguments if not a.kwarg_only) > len(node.args)
                    for op in overloads.values()):
                continue
            name = f"_cpp_method_{m}"
            if name not in generated.NS:
                if not generated._runnable(overloads):
                    continue
                generated.NS[name] = generated.CppOp(f"aten::{m}")
            node.args = [node.func.value, *node.args]
            node.func = ast.Name(name, ast.Load())
            changed = True
    return ast.unparse(tree) if changed else src


_ARG_NAMES: dict = {}
_SPECS: dict = {}


def spec_for(op):
    """The FwSpec of an operator handle, or None (no entry in the table)."""
    key = op.name.split("::", 1)[1] if op.qualname.startswith("aten::") else None
    s = _SPECS.get(key, _UNRESOLVED)
    if s is _UNRESOLVED:
        entry = table().get(key) if key else None
        if entry is not None:
            _ARG_NAMES[key] = tuple(a.name for a in op.schema.arguments)
        s = _SPECS[key] = FwSpec(key, entry) if entry is not None else None
    return s
