"""torch.func.functionalize against upstream torch 2.13.0, each in its own process: make_fx graphs
of functionalize(f) compared as generated code, eager results and the mutated inputs as float64
values (tests/functionalize_behaviour.py holds the programs).

Cases in PENDING need a change outside functionalization (named in the reason); they are strict
xfails, so they fail loudly once that change lands and the entry must go.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import functionalize_behaviour as behaviour  # noqa: E402
from behaviour_compare import (agreement_test, case_names, ours_fixture, ran_on_upstream_test,  # noqa: E402
                               same, upstream_fixture)

_SETITEM = ("Tensor.__setitem__ with a Python number: ours' graph has one more select of the "
            "base than upstream's (unused; the lifted value, its copy and the scatters agree)")
PENDING = {
    "setitem_number__mutations": _SETITEM,
    "setitem_number__mutations_and_views": _SETITEM,
}

CASES = case_names(behaviour)
theirs = upstream_fixture("functionalize_behaviour.py")
ours = ours_fixture(behaviour)
test_case_agrees = agreement_test(CASES, PENDING)
test_every_case_ran_on_upstream = ran_on_upstream_test(CASES)


def _trace(f, functional: bool):
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.func import functionalize

    return make_fx(functionalize(f) if functional else f)(torch.ones(2, 3)).code


def test_comparison_catches_a_mutation_left_in_place():
    # control: the graph of the unfunctionalized program (its add_ kept) is not taken for the
    # functionalized one
    def f(a):
        b = a.clone()
        b[0].add_(1)
        return b

    functional, raw = _trace(f, True), _trace(f, False)
    assert "add_" in raw and "add_" not in functional and "select_scatter" in functional
    assert not same(raw, functional)


def test_functionalized_program_leaves_inputs_alone_unless_it_mutates_them():
    import torch
    from torch.func import functionalize

    a = torch.ones(3)
    out = functionalize(lambda t: t.clone().add_(1))(a)
    assert a.tolist() == [1.0, 1.0, 1.0] and out.tolist() == [2.0, 2.0, 2.0]
    functionalize(lambda t: t[1:].mul_(3))(a)
    assert a.tolist() == [1.0, 3.0, 3.0]


def test_refuses_out_variants_by_name():
    import torch
    from torch.func import functionalize

    def f(a):
        out = torch.empty(3)
        torch.add(a, 1, out=out)
        return out

    with pytest.raises(NotImplementedError, match="functionalize: aten::add"):
        functionalize(f)(torch.ones(3))
