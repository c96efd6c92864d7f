"""torchvision models on our torch: constructors with seeded random weights, forward in eval and
train mode, compared with upstream torch running the same program in its own process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchnative.testing import upstream

sys.path.insert(0, str(Path(__file__).resolve().parent / "ecosystem_programs"))
import compare  # noqa: E402

# in the default suite: one classifier with dropout and the detection model; the rest with --slow
FAST = ["mobilenet_v3_small", "fasterrcnn_mobilenet_v3_fpn"]
SLOW = ["resnet18", "efficientnet_b0", "convnext", "swin"]


def _runs(d, cases):
    if not upstream.available():
        pytest.skip("upstream environment missing")
    return compare.sides("tv_models", d, cases, profiles=False)[:3]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return _runs(tmp_path_factory.mktemp("tv_models"), FAST)


@pytest.fixture(scope="module")
def slow_runs(tmp_path_factory):
    return _runs(tmp_path_factory.mktemp("tv_models_slow"), SLOW + ["vit"])


def _check(runs, case):
    ours, up32, up64 = runs
    assert case not in up32.refused, up32.refused.get(case)
    assert case not in ours.refused, ours.refused[case]
    u32 = up32.case(case)
    # train-mode outputs with dropout carry masks drawn differently in float64: the same pass
    # without them sets their tolerance
    tol_from = {"train": "train_without_dropout"} if "train_without_dropout" in u32 else {}
    bad = compare.disagreements(ours.case(case), u32, up64.case(case), tol_from)
    assert not bad, bad


@pytest.mark.parametrize("case", FAST)
def test_model_forward_agrees_with_upstream(runs, case):
    _check(runs, case)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW)
def test_more_models_agree_with_upstream(slow_runs, case):
    _check(slow_runs, case)


@pytest.mark.slow
def test_vit_forward_agrees_with_upstream(slow_runs):
    """ViT's forward, whose attention is nn.MultiheadAttention (a strict xfail while its eval
    fast path, _native_multi_head_attention, had no kernel)."""
    _check(slow_runs, "vit")


def test_comparison_catches_a_wrong_train_mode(runs):
    """Control: the eval-mode output of ours does not pass for upstream's train-mode output."""
    ours, up32, up64 = runs
    swapped = dict(ours.case("mobilenet_v3_small"))
    swapped["train"] = swapped["eval"]
    assert "train" in compare.disagreements(swapped, up32.case("mobilenet_v3_small"),
                                            up64.case("mobilenet_v3_small"),
                                            {"train": "train_without_dropout"})
