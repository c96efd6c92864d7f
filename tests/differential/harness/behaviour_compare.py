"""Shared shape of the tests that run a behaviour script (``probes(torch)`` -> {case: JSON}) on
upstream torch in its own process and on ours, and compare case by case
(test_autograd_views.py, test_autograd_hooks.py). A test module assigns what it needs:

    CASES = case_names(behaviour)
    theirs = upstream_fixture("autograd_views_behaviour.py")
    ours = ours_fixture(behaviour)
    test_case_agrees = agreement_test(CASES, PENDING)
    test_every_case_ran_on_upstream = ran_on_upstream_test(CASES)
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import sides
from torchnative.testing import upstream

needs_upstream = pytest.mark.skipif(not upstream.available(), reason="no upstream environment")


def same(a, b) -> bool:
    """Equal structure and strings; floats (float64 computations) within 1e-12 relative."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b)) + 1e-14 or \
            (np.isnan(a) and np.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def case_names(behaviour) -> list:
    import torch

    return list(behaviour.cases(torch))


def upstream_fixture(script: str):
    @pytest.fixture(scope="module")
    def theirs():
        return sides.script_on_upstream(sides.DIFFERENTIAL / script)

    return theirs


def ours_fixture(behaviour):
    @pytest.fixture(scope="module")
    def ours():
        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return json.loads(json.dumps(behaviour.probes(torch)))

    return ours


def agreement_test(cases: list, pending: dict):
    """Each case agrees; a case in ``pending`` (it needs a change outside the module under test,
    named in the reason) is a strict xfail, so it fails loudly once that change lands."""

    @needs_upstream
    @pytest.mark.parametrize("name", cases)
    def test_case_agrees(name, ours, theirs, request):
        if name in pending:
            request.applymarker(pytest.mark.xfail(strict=True, reason=pending[name]))
        assert same(ours[name], theirs[name]), f"ours:   {ours[name]}\nupstream: {theirs[name]}"

    return test_case_agrees


def ran_on_upstream_test(cases: list):
    @needs_upstream
    def test_every_case_ran_on_upstream(theirs):
        assert set(theirs) == set(cases)
        escaped = {k: v for k, v in theirs.items() if isinstance(v, str) and v.startswith("EXC")}
        assert not escaped, escaped

    return test_every_case_ran_on_upstream
