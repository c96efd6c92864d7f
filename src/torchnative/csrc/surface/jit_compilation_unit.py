"""``torch._C.CompilationUnit``: TorchScript source text compiled into ScriptFunctions.

``define(src)`` parses the source as TorchScript's frontend does (Python's parser, then upstream's
``torch.jit.frontend.build_def`` into tree views, so unsupported syntax fails with upstream's
errors), reads each function's signature into its schema (``jit_function``), and runs the
function's own Python, executed with names resolved as TorchScript resolves them: the unit's
functions first, then the resolution callback (by default the caller's frame, as upstream's
``createResolutionCallbackFromFrame``). Nothing builds IR.
"""

from __future__ import annotations

import __future__
import ast

from ..core.refuse import TorchnativeNotImplementedError
from .jit_decomposition import register_decomposition_for_schema
from .jit_function import ScriptFunction, compile_def
from .jit_graph import Graph

_NO_IR = "torchnative runs TorchScript functions as Python and builds no TorchScript IR"


class _Names(dict):
    """The globals the unit's Python runs with: what it defines, then the resolution callback."""

    def __init__(self, unit: "CompilationUnit", rcb):
        super().__init__()
        self._unit, self._rcb = unit, rcb

    def __missing__(self, name):
        fn = self._unit._functions.get(name)
        if fn is not None:
            return fn
        value = self._rcb(name)
        if value is None:
            raise KeyError(name)  # the builtins come next, as for any Python global
        return value


class CompilationUnit:
    """A container of compiled functions (and, upstream, classes: none here)."""

    def __init__(self, lang: str = "", _frames_up: int = 0):
        self._functions: dict[str, ScriptFunction] = {}
        if lang:
            self.define(lang, None, _frames_up + 1)

    def define(self, script: str, rcb=None, _frames_up: int = 0):
        from torch._jit_internal import createResolutionCallbackFromFrame
        from torch._sources import SourceContext
        from torch.jit.annotations import get_type_line
        from torch.jit.frontend import build_def, get_default_args

        if rcb is None:  # the caller of define (of the constructor, counting its frame)
            rcb = createResolutionCallbackFromFrame(_frames_up + 1)
        tree = ast.parse(script)
        for stmt in tree.body:
            if not isinstance(stmt, ast.FunctionDef):
                raise TorchnativeNotImplementedError(
                    f"torch._C.CompilationUnit.define of a {type(stmt).__name__} statement",
                    "only function definitions compile here (TorchScript classes do not)")
        names = _Names(self, rcb)
        flags = __future__.annotations.compiler_flag  # annotations are types, read from the tree
        exec(compile(tree, "<torchnative CompilationUnit>", "exec", flags=flags, dont_inherit=True),
             names)
        ctx = SourceContext(script, None, 0, 0, True)
        for stmt in tree.body:
            segment = ast.get_source_segment(script, stmt) or ""
            def_ = build_def(ctx, stmt, get_type_line(segment), stmt.name)
            python = names.pop(stmt.name)
            fn = compile_def(stmt.name, def_, rcb, get_default_args(python))
            fn._torchdynamo_inline = python
            self._functions[stmt.name] = fn

    def find_function(self, name: str):
        return self._functions.get(name)

    def get_functions(self) -> list:
        return list(self._functions.values())

    def __getattr__(self, name: str):
        fn = self.__dict__.get("_functions", {}).get(name)
        if fn is None:
            raise AttributeError(f"'CompilationUnit' has no attribute '{name}'")
        return fn

    def get_class(self, name: str):
        return None

    def get_interface(self, name: str):
        return None

    def drop_all_functions(self) -> None:
        self._functions.clear()

    def create_function(self, name: str, graph, shouldMangle: bool = False):
        raise TorchnativeNotImplementedError("torch._C.CompilationUnit.create_function", _NO_IR)

    def set_optimized(self, *args, **kwargs):
        raise TorchnativeNotImplementedError("torch._C.CompilationUnit.set_optimized", _NO_IR)


CompilationUnit.__module__ = "torch._C"


TORCH_C = {
    "torch._C.CompilationUnit": CompilationUnit,
    "torch._C.Graph": Graph,
    "torch._C._jit_register_decomposition_for_schema": register_decomposition_for_schema,
}
