"""``torch._C.ScriptFunction`` and ``_jit_script_compile``: scripted functions that run as Python.

``torch.jit.script(fn)`` is upstream's: it parses ``fn`` with its frontend into tree views (so
unsupported syntax fails there, with upstream's errors), then calls ``_jit_script_compile(name,
def, rcb, defaults)``. Ours reads the Def's signature into a schema and returns a ScriptFunction;
upstream's ``_script_impl`` then hands it the original function as ``_torchdynamo_inline`` (for
``torch.compile`` to inline), and a call runs that function, as upstream's ``PYTORCH_JIT=0`` runs
scripted code, behind TorchScript's call contract (argument binding, conversion and type errors).
Nothing here builds IR: ``.graph`` is the function itself (``jit_graph``); the code, saving
and the passes refuse by name.
"""

from __future__ import annotations

import threading

from ..core.refuse import TorchnativeNotImplementedError, refusing_class, refusing_function
from ..ops.schema import FunctionSchema, _init_schema
from . import jit_errors, jit_signature, refusals
from .jit_graph import Graph, refusing_member
from .jit_tree_views import Apply, Def, Select, TreeView, Var

_NO_IR = ("torchnative runs scripted functions as Python and builds no TorchScript IR "
          "(graph, code, serialization, optimization passes)")


def _refuse_ir(what: str):
    return refusing_member("ScriptFunction", what, _NO_IR)


def _refuse_ir_property(what: str):
    return property(_refuse_ir(what))


_calls = threading.local()  # how deep this thread is in scripted calls


class ScriptFunction:
    """A function compiled by ``torch.jit.script``: its name, schema and call contract; its body
    is the original Python function."""

    def __init__(self, *args, **kwargs):
        raise TypeError("torch._C.ScriptFunction: No constructor defined!")

    @classmethod
    def _create(cls, qualified_name: str, def_: Def, arguments: list, returns, casts: list):
        self = object.__new__(cls)
        self._qualified_name = qualified_name
        self._name = def_.name().name
        self._arguments, self._returns = arguments, returns
        self._kwonly = [a.kwarg_only for a in arguments]
        inferred = {p.name.name for p in def_.decl().params if p.type is None}
        self._contract = jit_signature.CallContract(self._name, arguments, casts, inferred,
                                                    self._declaration())
        return self

    def _declaration(self) -> str:
        if self._returns is not None:
            return str(self.schema)
        head = str(_init_schema(object.__new__(FunctionSchema), self._name, "",
                                tuple(self._arguments), (), False, False))
        return head.rsplit(" -> ", 1)[0] + (" -> <return type TorchScript would infer: "
                                             "torchnative compiles no IR to infer it>")

    @property
    def name(self) -> str:
        return self._name

    @property
    def qualified_name(self) -> str:
        return self._qualified_name

    @property
    def schema(self) -> FunctionSchema:
        if self._returns is None:
            raise TorchnativeNotImplementedError(
                "torch._C.ScriptFunction.schema of a function without a return annotation",
                "TorchScript infers that return type from the IR, which torchnative does not build")
        return _init_schema(object.__new__(FunctionSchema), self._name, "",
                            tuple(self._arguments), tuple(self._returns), False, False)

    def __call__(self, *args, **kwargs):
        fn = self.__dict__.get("_torchdynamo_inline")
        if fn is None:
            raise TorchnativeNotImplementedError(
                f"calling ScriptFunction {self._qualified_name} made outside torch.jit.script",
                "torchnative runs the original Python function, which torch.jit.script attaches")
        values = self._contract.bind(args, kwargs)
        pos, kw = values, {}
        if any(self._kwonly):
            pos = [v for k, v in zip(self._kwonly, values) if not k]
            kw = {a.name: v for a, v in zip(self._arguments, values) if a.kwarg_only}
        depth = getattr(_calls, "depth", 0)
        _calls.depth = depth + 1
        try:
            return fn(*pos, **kw)
        except Exception as exc:
            if depth:  # the outermost scripted call reports it, with the whole stack
                raise
            err = jit_errors.interpreter_error(exc, self._name, getattr(fn, "__code__", None))
            if err is exc:
                raise
            raise err from exc
        finally:
            _calls.depth = depth

    @property
    def graph(self):
        """The function itself, standing in for its IR (``jit_graph``)."""
        return Graph._of(self)

    inlined_graph = _refuse_ir_property("inlined_graph")
    code = _refuse_ir_property("code")
    save = _refuse_ir("save")
    save_to_buffer = _refuse_ir("save_to_buffer")
    get_debug_state = _refuse_ir("get_debug_state")
    _debug_flush_compilation_cache = _refuse_ir("_debug_flush_compilation_cache")
    _set_ignore_amp = _refuse_ir("_set_ignore_amp")


ScriptFunction.__module__ = "torch._C"


def _resolve(expr, rcb):
    """The Python object a Var/Select chain names through the resolution callback, or None."""
    if isinstance(expr, Var):
        return rcb(expr.name.name)
    if isinstance(expr, Select):
        base = _resolve(expr.value, rcb)
        return None if base is None else getattr(base, expr.selector.name, None)
    return None


def _is_scripting_call(def_: Def, rcb):
    """The first call of ``torch.jit.is_scripting()`` in the body: True in compiled TorchScript,
    False in the Python this function runs as, so such a function would silently take the other
    branch."""
    import torch._jit_internal as ji
    todo = list(def_.body)
    while todo:
        node = todo.pop()
        if isinstance(node, Apply) and _resolve(node.callee, rcb) is ji.is_scripting:
            return node
        for v in vars(node).values():
            todo.extend(x for x in (v if isinstance(v, list) else [v]) if isinstance(x, TreeView))
    return None


def jit_script_compile(qualified_name: str, def_: Def, rcb, defaults: dict) -> ScriptFunction:
    """``torch._C._jit_script_compile``: the ScriptFunction for a Def the frontend built."""
    if not isinstance(def_, Def):
        raise TypeError(f"_jit_script_compile(): expected a torch._C._jit_tree_views.Def, "
                        f"got {type(def_).__name__}")
    return compile_def(qualified_name, def_, rcb, defaults)


def compile_def(qualified_name: str, def_: Def, rcb, defaults: dict) -> ScriptFunction:
    """The ScriptFunction of a Def whose names resolve through ``rcb``."""
    call = _is_scripting_call(def_, rcb)
    if call is not None:
        raise TorchnativeNotImplementedError(
            f"torch.jit.is_scripting() in scripted function {qualified_name}",
            "it is True in compiled TorchScript, and torchnative runs scripted functions as Python, "
            "where it is False:\n" + call.range().highlight())
    arguments, returns, casts = jit_signature.signature(def_.decl(), rcb, defaults, def_.range())
    return ScriptFunction._create(str(qualified_name), def_, arguments, returns, casts)


# The other ways into TorchScript build IR-backed objects; their entry points say so by name.
_MODULES_WHY = ("torch.jit.script of an nn.Module builds a TorchScript module type and its IR, "
                "which torchnative does not; scripted functions run")
_TRACE_WHY = "torch.jit.trace records a TorchScript graph, which torchnative does not build"
_CLASS_WHY = "torch.jit.script of a class compiles a TorchScript class type, which torchnative does not"


def torch_c_names() -> dict:
    surface = refusals.import_surface()["torch._C"]
    names = {
        "torch._C.ScriptFunction": ScriptFunction,
        "torch._C.JITException": jit_errors.JITException,
        "torch._C._jit_script_compile": jit_script_compile,
        "torch._C.ConcreteModuleTypeBuilder": refusing_class(
            "torch._C.ConcreteModuleTypeBuilder", _MODULES_WHY,
            members=surface["ConcreteModuleTypeBuilder"]["members"]),
        "torch._C._jit_script_class_compile": refusing_function(
            "torch._C._jit_script_class_compile", _CLASS_WHY),
    }
    for name in ("_create_function_from_trace", "_create_function_from_trace_with_dict"):
        names[f"torch._C.{name}"] = refusing_function(f"torch._C.{name}", _TRACE_WHY)
    return names
