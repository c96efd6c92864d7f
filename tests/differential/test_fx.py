"""torch.fx and make_fx against upstream torch 2.13.0, each in its own process: generated code and
node lists compared as text, results as float64 values (tests/differential/fx_behaviour.py holds the programs).

Cases in PENDING need a change outside the fx support (named in the reason); they are strict
xfails, so they fail loudly once that change lands and the entry must go.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import fx_behaviour as behaviour  # noqa: E402
from behaviour_compare import (agreement_test, case_names, ours_fixture, ran_on_upstream_test,  # noqa: E402
                               same, upstream_fixture)

PENDING = {
}

CASES = case_names(behaviour)
theirs = upstream_fixture("fx_behaviour.py")
ours = ours_fixture(behaviour)
test_case_agrees = agreement_test(CASES, PENDING)
test_every_case_ran_on_upstream = ran_on_upstream_test(CASES)


def test_comparison_rejects_a_different_graph():
    code = "\n\n\ndef forward(self, x):\n    relu = torch.relu(x);  x = None\n    return relu\n    "
    assert same([code, [1.0, 2.0]], json.loads(json.dumps([code, [1.0, 2.0]])))
    assert not same([code.replace("relu(x)", "sigmoid(x)"), [1.0, 2.0]], [code, [1.0, 2.0]])
    assert not same([code, [1.0, 2.0 + 1e-9]], [code, [1.0, 2.0]])


def test_map_arg_maps_only_nodes_and_rebuilds_containers():
    import torch.fx as fx
    from torch.fx.immutable_collections import immutable_dict, immutable_list

    g = fx.Graph()
    a = g.placeholder("a")
    out = torch_c()._fx_map_arg([a, {"k": (a, 2)}, slice(a, None)], lambda n: n.name)
    assert out == ["a", {"k": ("a", 2)}, slice("a", None, None)]
    assert type(out) is immutable_list and type(out[1]) is immutable_dict
    empty = ()
    assert torch_c()._fx_map_aggregate(empty, str) is empty
    with pytest.raises(TypeError, match="map_arg\\(\\) takes exactly two arguments"):
        torch_c()._fx_map_arg(1)


def test_node_links_and_sort_keys_stay_consistent_under_moves():
    import torch
    import torch.fx as fx

    g = fx.Graph()
    a = g.placeholder("a")
    nodes = [g.call_function(torch.neg, (a,)) for _ in range(5)]
    g.output(tuple(nodes))
    # move every node before the first one, one by one, and check both link directions
    for n in nodes[1:]:
        nodes[0].prepend(n)
    forward = list(g.nodes)
    backward = list(reversed(g.nodes))
    assert forward == backward[::-1]
    assert all(p < q and not q < p for p, q in zip(forward, forward[1:]))
    g.lint()
    with pytest.raises(AssertionError, match="different Graph"):
        fx.Graph().placeholder("b").prepend(a)


def test_compile_and_export_refuse_by_name():
    import torch

    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    def f(x):
        return x.sin() + 1

    with pytest.raises(TorchnativeNotImplementedError):
        torch.compile(f)(torch.ones(2))
    with pytest.raises(TorchnativeNotImplementedError):
        torch.export.export(torch.nn.Linear(2, 2), (torch.ones(1, 2),))


def test_pre_dispatch_tracing_refuses_by_name_and_leaves_tracing_working():
    # the door does not dispatch on PreDispatch: a mode pushed there would see no call, and the
    # graph would hold the result as a constant. Refused before the mode is pushed, so a plain
    # make_fx afterwards still traces every call
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    def f(x):
        return x.sin() + 1

    for _ in range(2):
        with pytest.raises(TorchnativeNotImplementedError, match="PreDispatch"):
            make_fx(f, pre_dispatch=True)(torch.ones(2))
        code = make_fx(f)(torch.ones(2)).code
        assert "aten.sin.default" in code and "aten.add.Tensor" in code


def torch_c():
    import torch

    return torch._C


def test_symbolic_trace_does_not_specialize_sizes():
    # a size read or sliced with must stay a SymInt: converting it to an int would bake the
    # example's size into the graph (and add a guard replacing the symbol by it)
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    g = make_fx(lambda a: a[: a.shape[0] - 1].reshape(-1) * a.numel(),
                tracing_mode="symbolic")(torch.ones(3, 2))
    assert not g.shape_env.replacements, g.shape_env.replacements
    out = g(torch.ones(5, 4))
    assert out.shape == (16,) and float(out[0]) == 20.0

