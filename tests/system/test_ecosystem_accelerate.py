"""accelerate 1.15 on our torch: an Accelerator training loop (CPU, gradient accumulation,
shuffled loader, dropout, scheduler) with save_state/load_state resume, compared with upstream in
its own process; on each side the resumed run must continue exactly as the uninterrupted one."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "ecosystem_programs"))
import compare  # noqa: E402


runs = compare.runs_fixture("acc_loop")


def _weights(case: dict, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in case.items() if k.startswith(prefix)}


def test_training_loop_agrees_with_upstream(runs):
    compare.check(runs, "loop")


@pytest.mark.parametrize("side", [0, 1], ids=["ours", "upstream"])
def test_resumed_run_continues_exactly(runs, side):
    got = runs[side].case("loop")
    tail = got["resumed/losses"]
    assert len(tail) == 16 and len(got["losses"]) == 24
    assert np.array_equal(got["losses"][-len(tail):], tail)
    w, resumed = _weights(got, "w/"), _weights(got, "resumed/w/")
    assert w.keys() == resumed.keys() and len(w) == 4
    for k in w:
        assert np.array_equal(w[k], resumed[k]), k
    # 3 epochs of 8 batches, one optimizer step per 2 batches
    assert got["optimizer_steps"].tolist() == [12]


@pytest.mark.parametrize("side", [0, 1], ids=["ours", "upstream"])
def test_a_run_that_does_not_load_the_state_is_caught(runs, side):
    """Control: without load_state the second run starts from other weights, RNG and optimizer
    moments, and neither its losses nor its weights match the uninterrupted run."""
    got = runs[side].case("no_load_control")
    tail = got["resumed/losses"]
    assert not np.array_equal(got["losses"][-len(tail):], tail)
    w, resumed = _weights(got, "w/"), _weights(got, "resumed/w/")
    assert all(not np.array_equal(w[k], resumed[k]) for k in w)
