"""PyTorch Lightning 2.6 on our torch: Trainer.fit of a small LightningModule on the CPU with
gradient accumulation and a checkpoint every epoch, then a resume from the first epoch's
checkpoint, compared with upstream in its own process; on each side the resumed run must continue
exactly as the uninterrupted one."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "ecosystem_programs"))
import compare  # noqa: E402


runs = compare.runs_fixture("pl_fit")


def test_fit_and_resume_agree_with_upstream(runs):
    compare.check(runs, "fit")


@pytest.mark.parametrize("side", [0, 1], ids=["ours", "upstream"])
def test_resumed_fit_continues_exactly(runs, side):
    got = runs[side].case("fit")
    tail = got["resumed/losses"]
    # 3 epochs of 8 batches; the resume starts after the first epoch's checkpoint
    assert len(got["losses"]) == 24 and len(tail) == 16 and int(got["checkpoint/epoch"]) == 0
    assert np.array_equal(got["losses"][-16:], tail)
    assert int(got["global_step"]) == int(got["resumed/global_step"]) == 12
    w = {k[2:]: v for k, v in got.items() if k.startswith("w/")}
    assert len(w) == 6
    for k, v in w.items():
        assert np.array_equal(v, got[f"resumed/w/{k}"]), k


def test_a_moved_weight_is_caught(runs):
    """Control: trained weights moved by 1e-3 (a step lost or a wrong learning rate would move
    them further) disagree with upstream's."""
    ours, up32, up64 = runs
    o = dict(ours.case("fit"))
    o["w/net.3.weight"] = o["w/net.3.weight"] + 1e-3
    assert "w/net.3.weight" in compare.disagreements(o, up32.case("fit"), up64.case("fit"))


def test_lightning_imports_on_ours():
    """pytorch_lightning reads torch.profiler.kineto_available() at import."""
    import pytorch_lightning as pl

    assert pl.__version__ == "2.6.6"
