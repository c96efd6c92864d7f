"""torch.func against upstream torch 2.13.0, each in its own process: the programs in
tests/differential/func_programs/func_behaviour.py (vmap batch rules, fallback, nesting, randomness, grad
transforms, per-sample gradients, ensembling, errors) compared case by case, float64 values
within 1e-12 relative (behaviour_compare.same). A batch rule made wrong on purpose must be
caught by the same comparison."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "func_programs"))

import func_behaviour as behaviour  # noqa: E402
from behaviour_compare import (agreement_test, case_names, needs_upstream, ours_fixture,  # noqa: E402
                               ran_on_upstream_test, same, upstream_fixture)

PENDING: dict = {}

CASES = case_names(behaviour)
theirs = upstream_fixture("func_programs/func_behaviour.py")
ours = ours_fixture(behaviour)
test_case_agrees = agreement_test(CASES, PENDING)
test_every_case_ran_on_upstream = ran_on_upstream_test(CASES)


def _rerun(name):
    import torch

    torch.set_default_dtype(torch.float64)
    try:
        return behaviour.cases(torch)[name]()
    finally:
        torch.set_default_dtype(torch.float32)


def _summed_over_batch(orig):
    from torchnative.csrc.functorch import batching

    def rule(op, level, args, kwargs):
        p = batching.front(orig(op, level, args, kwargs), level)
        return batching.wrap(p.sum(0, keepdim=True).expand_as(p), level, 0)

    return rule


@needs_upstream
@pytest.mark.parametrize("rule_name, case, wrong", [
    # a reduction that forgets to shift the logical dim past the batch dim
    ("sum.dim_IntList", "vmap_sum_dim",
     lambda orig: lambda op, level, args, kwargs: orig(op, level, (args[0], [0]) + args[2:], kwargs)),
    # a matmul rule off by one ulp-scale factor
    ("mm.default", "vmap_mm_right",
     lambda orig: lambda op, level, args, kwargs: orig(op, level, args, kwargs) * (1 + 1e-9)),
    # per-sample gradients that come out summed over the batch (each element given the batch's
    # total, what a rule that reduced over the physical batch dim would give)
    ("nll_loss_backward.default", "per_sample_mlp", lambda orig: _summed_over_batch(orig)),
])
def test_a_wrong_batch_rule_is_caught(rule_name, case, wrong, theirs, monkeypatch):
    from torchnative.csrc.functorch import batching
    from torchnative.csrc.ops.dispatcher import REGISTRY

    orig = batching.RULES[rule_name]
    monkeypatch.setitem(batching.RULES, rule_name, wrong(orig))
    qual, _, overload = rule_name.partition(".")
    op = REGISTRY.find(f"aten::{qual}", "" if overload == "default" else overload)
    monkeypatch.setitem(op.cache, "functorch_rule", wrong(orig))
    assert not same(_rerun(case), theirs[case])
    monkeypatch.setitem(op.cache, "functorch_rule", orig)
    assert same(_rerun(case), theirs[case])


def test_a_vmap_in_one_thread_does_not_batch_another_threads_calls():
    import threading

    import torch
    from torch.func import vmap

    started, release, seen = threading.Event(), threading.Event(), {}

    def inside(a):
        started.set()
        release.wait(30)
        return a.sin()

    def other():
        started.wait(30)
        seen["shape"] = tuple(torch.randn(3).shape)  # random: the batching layer's first test
        seen["sum"] = float(torch.ones(2, 2).sum())
        release.set()

    t = threading.Thread(target=other)
    t.start()
    out = vmap(inside, randomness="error")(torch.zeros(4, 3))
    t.join()
    assert seen == {"shape": (3,), "sum": 4.0} and out.shape == (4, 3)


def test_level_stack_refuses_leaving_the_wrong_kind():
    from torchnative.csrc.functorch import levels

    lvl = levels.push("grad")
    try:
        with pytest.raises(RuntimeError, match="leave a vmap level but the innermost level is grad"):
            levels.pop("vmap")
        assert levels.current() is lvl and levels.by_number(lvl.number) is lvl
    finally:
        levels.pop("grad")
    assert not lvl.alive
