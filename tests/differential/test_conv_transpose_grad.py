"""Gradients of transposed convolutions whose output_padding makes the output one position longer
than the input's forward image (1-d, 2-d grouped and dilated, 3-d), against upstream torch
2.13.0 in separate processes: shapes exactly, float64 values to 1e-12 relative (the products'
order is BLAS's)."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, torch, torch.nn.functional as F
torch.manual_seed(0)
r = {}
cases = {
    "1d": (F.conv_transpose1d, (2, 2, 5), (2, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    "2d": (F.conv_transpose2d, (2, 2, 4, 5), (2, 2, 3, 3),
           dict(stride=(3, 2), padding=(1, 2), output_padding=(2, 3), groups=2, dilation=(4, 4))),
    "3d": (F.conv_transpose3d, (1, 2, 3, 3, 2), (2, 1, 2, 2, 2),
           dict(stride=(2, 3, 2), padding=1, output_padding=(1, 2, 1), dilation=(2, 2, 2))),
}
for name, (f, xs, ws, kw) in cases.items():
    x = torch.randn(xs, dtype=torch.float64, requires_grad=True)
    w = torch.randn(ws, dtype=torch.float64, requires_grad=True)
    out = f(x, w, **kw)
    gx, gw = torch.autograd.grad(out, (x, w), torch.randn_like(out))
    r[name] = {"shapes": [list(out.shape), list(gx.shape), list(gw.shape)],
               "gx": gx.flatten().tolist(), "gw": gw.flatten().tolist()}
print(json.dumps(r))
'''


def test_transposed_convolution_gradients_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    for name, up in theirs.items():
        assert ours[name]["shapes"] == up["shapes"], name
        for k in ("gx", "gw"):
            np.testing.assert_allclose(ours[name][k], up[k], rtol=1e-12, atol=1e-12, err_msg=name)
