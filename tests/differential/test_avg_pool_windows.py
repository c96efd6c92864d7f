"""avg_pool2d against upstream where windows reach far past the input: ceil_mode windows, padding,
and a kernel thousands of times larger than its input (EfficientNet's pooler is
``AvgPool2d(hidden_dim, ceil_mode=True)`` over a 1x1 map). Only the kernel offsets that reach the
input are summed, in upstream's order; the float64 rerun gives the derived tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp

PROGRAM = """
import json, torch, torch.nn.functional as F
DT = torch.DTYPE
torch.manual_seed(0)
x = torch.randn(2, 3, 9, 7).to(DT)
out = {}
for k, st, p, ceil, cip in [(3, 2, 1, False, True), (3, 2, 1, True, False), (4, 3, 2, True, True),
                            (5, 2, 2, True, True), (7, 20, 0, True, True), (3, 3, 1, True, False),
                            (9, 1, 0, True, True)]:
    try:
        out[f"k{k} s{st} p{p} ceil{ceil} cip{cip}"] = F.avg_pool2d(x, k, st, p, ceil, cip).tolist()
    except RuntimeError as e:
        out[f"k{k} s{st} p{p} ceil{ceil} cip{cip}"] = str(e)
out["kernel 2560 over 1x1"] = F.avg_pool2d(torch.randn(1, 4, 1, 1).to(DT), 2560,
                                           ceil_mode=True).tolist()
out["kernel 300x200 over 5x3"] = F.avg_pool2d(x[..., :5, :3], (300, 200), ceil_mode=True).tolist()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def runs():
    if not upstream.available():
        pytest.skip(upstream.missing("avg_pool2d comparison"))
    return upstream.run_with_float64_rerun(PROGRAM)


def test_avg_pool2d_agrees(runs):
    ours, up32, up64 = runs
    assert set(ours) == set(up32)
    for key, want in up32.items():
        if isinstance(want, str):  # an error: the same message
            assert ours[key] == want, key
            continue
        problem = cmp.elementwise(np.array(ours[key]), np.array(want), np.array(up64[key]))
        assert problem is None, f"{key}: {problem}"
