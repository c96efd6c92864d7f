"""torchvision 0.28 on our torch: its operators (supplied in Python by torchnative.ecosystem, since
its compiled library cannot load), compared with upstream torch running the same program.

Upstream's CPU torch cannot load PyPI's torchvision ``_C`` either (that build links
libtorch_cuda), so the comparison side runs the same Python operators on upstream's kernels: the
comparison checks our torch under them; ``test_kernels_against_references`` checks the operators
themselves against references that are not ours.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from torchnative.testing import upstream

sys.path.insert(0, str(Path(__file__).resolve().parent / "ecosystem_programs"))
import compare  # noqa: E402

FORWARD = ["nms", "batched_nms", "box_iou", "box_convert", "roi_align", "roi_pool", "ps_roi_align",
           "ps_roi_pool", "deform_conv2d", "multiscale_roi_align", "sigmoid_focal_loss"]
GRADS = ["grad_roi_align", "grad_roi_pool", "grad_ps_roi_align", "grad_ps_roi_pool", "grad_deform_conv2d"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not upstream.available():
        pytest.skip("upstream environment missing")
    d = tmp_path_factory.mktemp("tv_ops")
    return compare.sides("tv_ops", d, profiles=False)[:3]


def _check(runs, case):
    ours, up32, up64 = runs
    assert case not in up32.refused, up32.refused.get(case)
    assert case not in ours.refused, ours.refused[case]
    bad = compare.disagreements(ours.case(case), up32.case(case), up64.case(case))
    assert not bad, bad


@pytest.mark.parametrize("case", FORWARD)
def test_ops_agree_with_upstream(runs, case):
    _check(runs, case)


@pytest.mark.parametrize("case", GRADS)
def test_op_gradients_agree_with_upstream(runs, case):
    _check(runs, case)


def test_comparison_catches_a_wrong_value(runs):
    """Control: one element of roi_align moved by a thousandth of its size is caught, and the
    index lists of nms with another threshold are caught."""
    ours, up32, up64 = runs
    moved = dict(ours.case("roi_align"))
    a = moved["aligned"].copy()
    i = int(np.argmax(np.abs(a)))
    a.flat[i] *= 1.001
    moved["aligned"] = a
    assert "aligned" in compare.disagreements(moved, up32.case("roi_align"), up64.case("roi_align"))
    wrong = {"keep": ours.case("nms")["keep_03"], "keep_03": ours.case("nms")["keep_03"]}
    assert "keep" in compare.disagreements(wrong, up32.case("nms"), up64.case("nms"))


def test_kernels_against_references():
    """The Python operators against torchvision's own pure-Python RoIAlign, conv2d, and float64
    gradcheck of every backward operator (run on upstream, where the autograd key works)."""
    if not upstream.available():
        pytest.skip("upstream environment missing")
    prog = Path(__file__).resolve().parent / "ecosystem_programs/tv_kernels_check.py"
    proc = subprocess.run([str(upstream.UPSTREAM_PYTHON), str(prog)], capture_output=True, text=True,
                          env=upstream.ecosystem_env(), timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    for k, v in res.items():
        if k.startswith("gradcheck"):
            assert v is True, k
        else:
            assert v <= 1e-12, (k, v)


PLAIN_IMPORT = """
import json, torch, torchvision
from torchvision import ops
out = {"has_ops": torchvision.extension._has_ops(), "torch_C": torch._C.__file__}
for name, call in {"qnms": lambda: torch.ops.torchvision.qnms(torch.zeros(1, 4), torch.zeros(1), 0.5),
                   "box_iou_rotated": lambda: torch.ops.torchvision.box_iou_rotated(torch.zeros(1, 5), torch.zeros(1, 5))}.items():
    try:
        call()
        out[name] = "ran"
    except NotImplementedError as e:
        out[name] = str(e)
print(json.dumps(out))
"""


def test_plain_import_on_ours_registers_the_operators():
    """On our torch nothing but ``import torchvision`` is needed; what is left refuses by name."""
    out = upstream.run_json_ours(PLAIN_IMPORT)
    assert out["has_ops"] is True and out["torch_C"].endswith("torchnative/_C/__init__.py")
    for name in ("qnms", "box_iou_rotated"):
        assert f"torchvision::{name} is not implemented" in out[name]
