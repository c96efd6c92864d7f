"""``upstream.concurrently``: the sides of a comparison run at once, results in call order, and
every call has ended before the first failure (in call order) is raised."""

from __future__ import annotations

import threading
import time

import pytest

from torchnative.testing.upstream import concurrently


def test_results_in_call_order_and_at_once():
    started = threading.Barrier(3, timeout=10)  # each call waits for the others to have started

    def call(value):
        def run():
            started.wait()
            time.sleep(0.05 * (3 - value))  # finish in reverse order
            return value
        return run

    assert concurrently(call(0), call(1), call(2)) == [0, 1, 2]


def test_first_failure_in_call_order_after_every_call_ended():
    ended = []

    def slow_ok():
        time.sleep(0.2)
        ended.append("slow")
        return 1

    def fails(name):
        def run():
            ended.append(name)
            raise RuntimeError(name)
        return run

    with pytest.raises(RuntimeError, match="^second$"):
        concurrently(slow_ok, fails("second"), fails("third"))
    assert sorted(ended) == ["second", "slow", "third"]
