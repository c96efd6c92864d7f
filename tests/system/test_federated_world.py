"""A world of 17 processes (a coordinator and 16 participants) on our torch and on upstream's,
on a 2-core machine: every participant joins, trains and is averaged; with select=0.5 a seeded half takes
part in the later rounds. Slow (17 interpreters import torch): run with --slow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchnative.nn.federated import experiment
from torchnative.testing import upstream

ROOT = Path(__file__).resolve().parents[2]
OURS = str(ROOT / ".venv" / "bin" / "python")


@pytest.mark.slow
@pytest.mark.parametrize("side", ["ours", "upstream"])
def test_sixteen_participants(tmp_path, side):
    args = ["--rounds", "3", "--select", "0.5", "--min-participants", "8", "--first-timeout", "900",
            "--timeout", "300", "--alpha", "0.5", "--out", str(tmp_path)]
    if side == "ours":
        res = experiment.launch(17, args, python=OURS, timeout=2400)
    else:
        if not upstream.available():
            upstream.missing("upstream torch (.venv-upstream)")
        res = experiment.launch(17, args, python=str(upstream.UPSTREAM_PYTHON), timeout=2400,
                                env=upstream.upstream_env())
    assert {r: c for r, (c, _) in res.items()} == {r: 0 for r in range(17)}, res
    rows = json.loads((tmp_path / "rounds.json").read_text())
    assert len(rows) == 3
    for row in rows:
        assert len(row["selected"]) == 8 and row["reported"] == row["selected"], row
    seen = set().union(*(row["reported"] for row in rows))
    assert len(seen) > 8 and seen <= set(range(1, 17))
    assert rows[-1]["accuracy"] > rows[0]["accuracy"]
    served = [json.loads((tmp_path / f"participant_{r}.json").read_text()) for r in range(1, 17)]
    assert sum(len(h) for h in served) == 24   # 3 rounds x 8 participants, each counted once
