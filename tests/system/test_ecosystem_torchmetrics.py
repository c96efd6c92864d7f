"""torchmetrics 1.9 on our torch: classification, regression and text metrics (modular metrics
updated batch by batch, and functional calls), compared with upstream in its own process."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "ecosystem_programs"))
import compare  # noqa: E402

CASES = ["classification", "regression", "text"]


runs = compare.runs_fixture("tm_metrics")


@pytest.mark.parametrize("case", CASES)
def test_metrics_agree_with_upstream(runs, case):
    compare.check(runs, case)
    assert len(runs[1].case(case)) > 10


def test_counts_are_identical(runs):
    """What is counted, not summed in floating point, is bit-identical: confusion matrices and
    the error rates' inputs."""
    ours, up32, _ = runs
    o, u = ours.case("classification"), up32.case("classification")
    for k in ("confusion", "b_confusion", "dropped/confusion"):
        assert np.array_equal(o[k], u[k]), k


def test_a_dropped_batch_is_caught(runs):
    """Control: each aggregated value computed without the last batch disagrees with upstream's
    full value (a metric that lost an update would not pass)."""
    ours, up32, up64 = runs
    for case in CASES:
        o, u, u64 = ours.case(case), up32.case(case), up64.case(case)
        swapped = {k: o[f"dropped/{k}"] for k in u if f"dropped/{k}" in o}
        assert len(swapped) > 3
        bad = compare.disagreements(swapped, {k: u[k] for k in swapped}, {k: u64[k] for k in swapped})
        assert set(bad) == set(swapped), sorted(set(swapped) - set(bad))
