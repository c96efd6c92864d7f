"""Lazy conjugate and negative views (core/conj_neg_bits.py, dispatch/math_bits.py) against
upstream torch 2.13.0, run in its own process (one run per module). The cases are in
complex_views_behaviour.py; PENDING lists what still disagrees, as strict xfails."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import complex_views_behaviour as behaviour  # noqa: E402
from behaviour_compare import (agreement_test, case_names, ours_fixture,  # noqa: E402
                               ran_on_upstream_test, same, upstream_fixture)

PENDING = {
    "grad_fn_of_a_conj_view_after_inplace":
        "a lazy conj view rebased by an in-place change is AsStridedBackward0 here "
        "(autograd/views.py rebases views with as_strided, carrying the bits across the "
        "gradient); upstream replays the view function (ConjBackward0). Gradients agree.",
}

CASES = case_names(behaviour)
theirs = upstream_fixture("complex_views_behaviour.py")
ours = ours_fixture(behaviour)
test_case_agrees = agreement_test(CASES, PENDING)
test_every_case_ran_on_upstream = ran_on_upstream_test(CASES)


def test_comparison_rejects_differences():
    base = [[True, False, True], [[1.0, -2.0], [3.0, 4.0]], "RuntimeError: boom"]
    assert same(base, json.loads(json.dumps(base)))
    for bad in ([[False, False, True], [[1.0, -2.0], [3.0, 4.0]], "RuntimeError: boom"],
                [[True, False, True], [[1.0, 2.0], [3.0, 4.0]], "RuntimeError: boom"],
                [[True, False, True], [[1.0, -2.0]], "RuntimeError: boom"],
                [[True, False, True], [[1.0, -2.0], [3.0, 4.0]], "no error"]):
        assert not same(bad, base)


def test_control_kernels_see_raw_memory_without_the_fallback(theirs, monkeypatch):
    """With the fallback made a pass-through, kernels read the unconjugated memory and the
    comparison catches it: the cases test the fallback, not only the views."""
    import torch
    from torchnative.csrc.dispatch import math_bits

    monkeypatch.setattr(math_bits, "fallback", lambda op, args, kwargs, run: run(op, args, kwargs))
    name = "operators_read_resolved_values"
    mine = json.loads(json.dumps(behaviour.cases(torch)[name]()))
    assert not same(mine, theirs[name])
