"""monitored_barrier with a rank that never arrives, at world 3 in real processes, on ours and on
upstream's gloo: rank 0 names the missing rank, the rank that did arrive reports that it reached
the barrier but heard nothing from rank 0 — both as upstream's plain RuntimeError with upstream's
words, well inside the test's deadline."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from torchnative.testing import upstream

sys.path.insert(0, str(Path(__file__).parent))
from distributed_launch import check_ok, launch  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not upstream.available(), reason="needs .venv-upstream")]


def test_monitored_barrier_names_the_missing_rank_as_upstream():
    got = {}
    for side in ("ours", "upstream"):
        results = launch("monitored.py", [side] * 3, timeout=400)
        check_ok(results)
        got[side] = [json.loads(o.strip().splitlines()[-1]) for _, o, _ in results]
    assert got["ours"] == got["upstream"]
    assert got["ours"][0] == ["RuntimeError", "[Rank 0]: Ranks 2 failed to pass monitoredBarrier "
                              "in 3000 ms", True]
    assert got["ours"][1][0] == "RuntimeError" and "Rank 1 successfully reached" in got["ours"][1][1]
    assert got["ours"][2] is None
