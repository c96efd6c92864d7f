"""``F.interpolate(mode="linear")`` (``upsample_linear1d.vec``) against upstream: sizes, scale
factors, align_corners, the gradient, and the argument errors; the float64 rerun gives the
derived tolerance (SAM's vision encoder interpolates its position embeddings so)."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp

PROGRAM = """
import json, torch, torch.nn.functional as F
DT = torch.DTYPE
torch.manual_seed(0)
x = torch.randn(2, 3, 7).to(DT).requires_grad_()
out = {}
for kw in [dict(scale_factor=2.0), dict(scale_factor=1.7, align_corners=True), dict(size=11),
           dict(size=4, align_corners=False), dict(scale_factor=0.5)]:
    y = F.interpolate(x, mode="linear", **kw)
    g, = torch.autograd.grad(y.square().sum(), x)
    out[str(kw)] = [y.tolist(), g.tolist()]
errors = []
for f in [lambda: torch._C._nn.upsample_linear1d(x, [4], False, [2.0]),
          lambda: torch._C._nn.upsample_linear1d(x, None, False, None),
          lambda: torch._C._nn.upsample_linear1d(x, [4, 5], False, None),
          lambda: torch._C._nn.upsample_linear1d(x, None, False, [2.0, 2.0])]:
    try:
        f()
        errors.append("no error")
    except Exception as e:
        errors.append(type(e).__name__ + ": " + str(e).splitlines()[0])
out["errors"] = errors
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def runs():
    if not upstream.available():
        pytest.skip(upstream.missing("upsample_linear1d.vec comparison"))
    return upstream.run_with_float64_rerun(PROGRAM)


def test_values_and_gradients_agree(runs):
    ours, up32, up64 = runs
    for key in up32:
        if key == "errors":
            continue
        for i, name in enumerate(("output", "gradient")):
            problem = cmp.elementwise(np.array(ours[key][i]), np.array(up32[key][i]),
                                      np.array(up64[key][i]), summed=i == 1)
            assert problem is None, f"{key} {name}: {problem}"


def test_resolves_the_size_as_upstream(runs):
    """Shapes are the composite's own work (the values are upsample_linear1d's)."""
    ours, up32, _ = runs
    for key in up32:
        if key != "errors":
            assert np.array(ours[key][0]).shape == np.array(up32[key][0]).shape, key


def test_errors_are_upstreams(runs):
    ours, up32, _ = runs
    assert ours["errors"] == up32["errors"]
    assert "no error" not in up32["errors"]
