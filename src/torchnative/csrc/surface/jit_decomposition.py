"""``torch._C._jit_register_decomposition_for_schema``: the JIT's decomposition registry.

Upstream registers a compiled decomposition's graph under an operator's schema; the forward-AD
fallback of an operator without a forward formula runs it (``run_jit_decomposition_with_args_for
_jvp``), so the operators it is made of carry the tangents. Here the graph stands for its
compiled function (``jit_graph``), and the registry is the forward-AD layer's.
"""

from __future__ import annotations

from ..autograd.forward.dispatch import JIT_DECOMPOSITIONS
from ..ops.dispatcher import REGISTRY
from ..ops.schema import FunctionSchema
from ..platform.pybind_errors import incompatible_arguments
from .jit_graph import Graph


def register_decomposition_for_schema(schema, graph) -> None:
    if not isinstance(schema, FunctionSchema) or not isinstance(graph, Graph):
        raise incompatible_arguments(
            "_jit_register_decomposition_for_schema",
            ["(arg0: c10::FunctionSchema, arg1: torch::jit::Graph) -> None"], (schema, graph))
    name = f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name
    if REGISTRY.find(schema.name, schema.overload_name) is None:  # upstream looks it up too
        raise RuntimeError(f"_jit_register_decomposition_for_schema: no operator {name}")
    # a schema's first registration is the one that runs (upstream's registry keeps the function
    # it made first and only replaces the graph it prints)
    JIT_DECOMPOSITIONS.setdefault(name, graph._run)
