"""``torch._C.Graph`` as torchnative holds one: the compiled function it stands for, no IR.

Upstream reads ``fn.graph`` to hand a compiled function to the JIT's registries
(``torch.jit._register_decomposition(op, torch.jit.script(decomp).graph)``). Here the graph of a
scripted function is that function: a registry can run it, and everything that would read or
rewrite TorchScript IR (nodes, inputs, printing, passes) refuses by name.
"""

from __future__ import annotations

from ..core.refuse import TorchnativeNotImplementedError
from . import refusals

_WHY = ("torchnative runs scripted functions as Python and builds no TorchScript IR; a Graph "
        "here only stands for its function (to register it, e.g. as a decomposition)")


def refusing_member(owner: str, what: str, why: str):
    """A method of ``owner`` that refuses by name, for what needs TorchScript IR."""
    def refuse(self, *args, **kwargs):
        raise TorchnativeNotImplementedError(f"torch._C.{owner}.{what}", why)
    refuse.__name__ = what
    return refuse


def _refuse(what: str):
    return refusing_member("Graph", what, _WHY)


class Graph:
    """The graph of one compiled function: the function, without IR."""

    def __init__(self, *args, **kwargs):
        raise TorchnativeNotImplementedError("torch._C.Graph()", _WHY)

    @classmethod
    def _of(cls, function) -> "Graph":
        self = object.__new__(cls)
        self._function = function
        return self

    def _run(self, *args, **kwargs):
        """Run the function this graph stands for, as a GraphFunction of it runs."""
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return (f"<torch._C.Graph of {self._function.qualified_name}: torchnative holds the "
                "function, no TorchScript IR>")

    __str__ = _refuse("__str__")


for _member in refusals.import_surface()["torch._C"]["Graph"]["members"]:
    if not hasattr(Graph, _member):
        setattr(Graph, _member, _refuse(_member))
Graph.__module__ = "torch._C"
