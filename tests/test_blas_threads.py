"""The BLAS thread policy: per range of product sizes, the current choice runs, the other is
tried for a window now and then (less often the worse it did), and the faster one is kept.
Checked with a simulated clock and a recording stand-in for the BLAS library's thread setting."""

from __future__ import annotations

import pytest

from torchnative.csrc.kernels.support import blas_threads as bt


@pytest.fixture
def sim(monkeypatch):
    """(cost, applied, run): seconds per product by thread count, the counts applied, and a
    driver running n products of a shape."""
    clock = [0.0]
    cost = {1: 1.0, 2: 1.0}
    applied = []

    def fake_apply(n):
        applied.append(n)
        bt._state["current"] = n

    # the process's real thread state comes back after the test (monkeypatch restores both keys)
    monkeypatch.setitem(bt._state, "current", bt._state["current"])
    monkeypatch.setattr(bt, "_apply", fake_apply)
    monkeypatch.setattr(bt.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(bt, "_tuners", {"small": bt._Tuner(1), "large": bt._Tuner(0)})
    monkeypatch.setitem(bt._state, "budget", 2)

    def run(n_calls, m=1, k=576, n=1536):
        for _ in range(n_calls):
            token = bt.for_product(m, k, n)
            clock[0] += cost[bt._state["current"]]
            bt.done(token)

    return cost, applied, run


def test_small_products_stay_single_threaded_when_two_threads_lose(sim):
    cost, applied, run = sim
    cost[1], cost[2] = 1.0, 10.0  # a busy machine: the second thread spins
    run(20000)
    assert applied[0] == 1
    share = applied.count(2) / len(applied)
    assert share < 0.02, share  # explored, then backed off
    assert bt._tuners["small"].choice == 1 and bt._tuners["small"].every == bt.EXPLORE_MAX


def test_small_products_take_the_budget_when_it_wins_and_leave_it_when_it_loses(sim):
    cost, applied, run = sim
    cost[1], cost[2] = 1.0, 0.4  # a quiet machine: a memory-bound gemv splits well
    run(200)
    assert applied[-50:].count(2) == 50
    cost[2] = 5.0  # the machine got busy: the next window on one thread wins back
    run(800)
    assert applied[-50:].count(1) == 50


def test_large_products_start_on_the_budget(sim):
    cost, applied, run = sim
    run(1, m=512, k=512, n=512)
    assert applied == [2]
    cost[1], cost[2] = 1.0, 10.0
    run(300, m=512, k=512, n=512)
    assert applied[-50:].count(1) == 50


def test_single_budget_is_not_timed(sim):
    _, applied, _ = sim
    bt._state["budget"] = 1
    assert bt.for_product(1, 576, 1536) is None and applied[-1] == 1
