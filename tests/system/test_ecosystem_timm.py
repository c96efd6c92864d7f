"""timm 1.0 on our torch: model families forward (random seeded weights) and fine-tuning steps
with timm's optimizer factory and loss, compared with upstream in its own process."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from torchnative.testing import upstream

sys.path.insert(0, str(Path(__file__).resolve().parent / "ecosystem_programs"))
import compare  # noqa: E402

FAST = ["mobilenetv3_small_050", "vit_tiny", "finetune_resnet10t"]
SLOW = ["resnet18", "efficientnet_b0", "convnext_atto", "deit_tiny"]


def _runs(d, cases):
    if not upstream.available():
        pytest.skip("upstream environment missing")
    return compare.three_runs("timm_models", d, cases)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return _runs(tmp_path_factory.mktemp("timm"), FAST)


@pytest.fixture(scope="module")
def slow_runs(tmp_path_factory):
    return _runs(tmp_path_factory.mktemp("timm_slow"), SLOW)


@pytest.mark.parametrize("case", FAST)
def test_timm_agrees_with_upstream(runs, case):
    compare.check(runs, case)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW)
def test_more_timm_families_agree(slow_runs, case):
    compare.check(slow_runs, case)


def test_finetune_moves_the_weights_and_a_frozen_run_is_caught(runs):
    """Controls: training moved the watched weights on both sides, and ours' initial weights do
    not pass for upstream's trained ones (an optimizer that did nothing is caught)."""
    ours, up32, up64 = runs
    o, u = ours.case("finetune_resnet10t"), up32.case("finetune_resnet10t")
    for k in ("fc.weight", "conv1.0.weight"):
        assert not np.array_equal(o[k], o[f"initial/{k}"])
        assert not np.array_equal(u[k], u[f"initial/{k}"])
    frozen = dict(o)
    frozen["fc.weight"] = o["initial/fc.weight"]
    assert "fc.weight" in compare.disagreements(frozen, u, up64.case("finetune_resnet10t"))
