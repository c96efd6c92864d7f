"""``torch.jit.CompilationUnit`` and the JIT decomposition registry, against upstream in separate
processes (``tests/differential/jit_compilation_unit_program.py`` runs once on each torch).

Values agree at the tolerance derived from upstream's own float32-vs-float64 error; names,
schemas, call-contract errors and the registry's behaviour (a decomposition registered for an
operator without a forward formula computes its tangent; a flipped one is caught) are identical.
What needs TorchScript IR refuses by name on ours."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import torch

from torchnative.testing import upstream
from torchnative.testing.golden import compare

PROGRAM = Path(__file__).with_name("jit_compilation_unit_program.py")


@pytest.fixture(scope="module")
def both():
    if not upstream.available():
        upstream.missing("upstream torch for the CompilationUnit comparison")
    proc = subprocess.run([upstream.ours_python(), str(PROGRAM)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    theirs = upstream.run_script(PROGRAM, timeout=600)  # a file: TorchScript reads its source
    return (json.loads(proc.stdout.strip().splitlines()[-1]),
            json.loads(theirs.stdout.strip().splitlines()[-1]))


def test_values_agree(both):
    ours, up = both
    assert set(ours["values"]) == set(up["values"])
    bad = {}
    for k, u in up["values"].items():
        why = compare.elementwise(ours["values"][k]["torch.float32"], u["torch.float32"],
                                  u["torch.float64"], "float32")
        if why:
            bad[k] = why
    assert not bad, bad


def test_facts_as_upstream(both):
    ours, up = both
    assert up["facts"]["flipped_decomposition_used"] is True  # the control bites upstream too
    assert ours["facts"] == up["facts"]


def test_errors_as_upstream(both):
    ours, up = both
    assert ours["errors"] == up["errors"]


def _unit():
    return torch.jit.CompilationUnit("def f(x: Tensor) -> Tensor:\n    return x * 2\n")


@pytest.mark.parametrize("read", [
    lambda g: str(g), lambda g: g.nodes(), lambda g: g.inputs(), lambda g: g.findNode("aten::mul")])
def test_graph_contents_refuse_by_name(read):
    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    graph = _unit().f.graph
    assert isinstance(graph, torch._C.Graph)
    with pytest.raises(TorchnativeNotImplementedError, match=r"torch\._C\.Graph\.\w+"):
        read(graph)


@pytest.mark.parametrize("what, call", [
    ("torch._C.Graph()", lambda: torch._C.Graph()),
    ("inlined_graph", lambda: _unit().f.inlined_graph),
    ("create_function", lambda: _unit().create_function("g", _unit().f.graph)),
    ("ClassDef", lambda: torch.jit.CompilationUnit("class A:\n    pass\n")),
])
def test_ir_refuses_by_name(what, call):
    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    with pytest.raises(TorchnativeNotImplementedError, match=what.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_register_needs_a_graph():
    with pytest.raises(TypeError, match="incompatible function arguments"):
        torch._C._jit_register_decomposition_for_schema(torch.ops.aten.trace.default._schema,
                                                        lambda x: x)
