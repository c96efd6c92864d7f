"""torchvision.transforms.v2 on our torch (tensors, PIL images, boxes), compared with upstream
running the same seeded program in its own process; uint8 results must be identical."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchnative.testing import upstream

sys.path.insert(0, str(Path(__file__).resolve().parent / "ecosystem_programs"))
import compare  # noqa: E402

AGREE = ["train_pipeline", "pil_pipeline", "geometry", "warps", "color", "random_erasing", "augment_policies", "boxes"]

@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not upstream.available():
        pytest.skip("upstream environment missing")
    d = tmp_path_factory.mktemp("tv_transforms")
    return compare.sides("tv_transforms", d)


def _check(runs, case):
    ours, up32, up64, moved = runs
    assert case not in up32.refused, up32.refused.get(case)
    assert case not in ours.refused, ours.refused[case]
    bad = compare.disagreements(ours.case(case), up32.case(case), up64.case(case),
                                moved=[m.case(case) for m in moved])
    assert not bad, bad


@pytest.mark.parametrize("case", AGREE)
def test_transforms_agree_with_upstream(runs, case):
    _check(runs, case)


UINT8_UPSAMPLE = """
import json, torch
x = torch.tensor([[[[86, 87, 185, 186]]]], dtype=torch.uint8)
y = torch.nn.functional.interpolate(x, size=(1, 8), mode="bilinear", align_corners=False)
print(json.dumps(y.flatten().tolist()))
"""


def test_uint8_bilinear_rounding():
    """Upstream rounds halves up under every CPU profile here. (The seeded RandomResizedCrop
    pipeline still agrees: torchvision resizes uint8 through float and rounds to even on CPUs
    without AVX2, and ours equals upstream's result there exactly, within upstream's own move.)"""
    assert upstream.run_json_ours(UINT8_UPSAMPLE) == upstream.run_json(UINT8_UPSAMPLE, env=upstream.ecosystem_env())


@pytest.mark.parametrize("case", ["train_pipeline_antialias", "resize_antialias"])
def test_antialiased_resize_agrees_with_upstream(runs, case):
    _check(runs, case)


def test_comparison_catches_a_wrong_pixel(runs):
    """Control: one uint8 pixel off by one is caught."""
    ours, up32, up64, _ = runs
    got = dict(ours.case("pil_pipeline"))
    pil = got["pil"].copy()
    pil.flat[7] = (int(pil.flat[7]) + 1) % 256
    got["pil"] = pil
    assert "pil" in compare.disagreements(got, up32.case("pil_pipeline"), up64.case("pil_pipeline"))


SUBCLASS = """
import json, torch
class T(torch.Tensor):
    pass
x = torch.ones(2).as_subclass(T)
with torch._C.DisableTorchFunctionSubclass():
    print(json.dumps([type(x.detach()).__name__, type(x.view(2)).__name__]))
"""


def test_subclass_views_under_disabled_torch_function():
    """torchvision's tv_tensors unwrap through this: ``BoundingBoxes.detach()`` under it is a plain
    Tensor (a BoundingBoxes without its format and canvas size would break the next operation)."""
    assert upstream.run_json_ours(SUBCLASS) == upstream.run_json(SUBCLASS, env=upstream.ecosystem_env()) == ["Tensor", "Tensor"]
