"""Second derivatives through F.grid_sample (grid_sampler_2d_backward's own derivative,
GridSampler2DBackwardBackward0), against upstream torch 2.13.0 in a separate process: every mode
and padding records upstream's nodes, and the second derivatives in input and grid lie within
four times upstream's own float32-vs-float64 gap. The pass differentiates upstream's Python
decomposition of the sampler twice (upstream's FunctionsManual helper is not ported): with the
sampler's backward a kernel, this derivative refused before; nearest's refused from the start."""

from __future__ import annotations

import numpy as np

import sides

PROGRAM = r"""
F = torch.nn.functional
torch.manual_seed(0)
x0 = torch.randn(1, 2, 5, 6, dtype=torch.float64)
g0 = torch.rand(1, 4, 3, 2, dtype=torch.float64) * 2.4 - 1.2
out = {}
for dt in (torch.float32, torch.float64):
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            x = x0.to(dt).requires_grad_()
            g = g0.to(dt).requires_grad_()
            y = F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=False)
            gx, gg = torch.autograd.grad((y * y).sum(), (x, g), create_graph=True)
            hx, hg = torch.autograd.grad(gx.sum() + (gg * gg).sum(), (x, g), allow_unused=True)
            out[f"{mode} {pad} {dt}"] = {
                "nodes": [type(y.grad_fn).__name__, type(gx.grad_fn).__name__],
                "hx": None if hx is None else hx.double().reshape(-1).tolist(),
                "hg": None if hg is None else hg.double().reshape(-1).tolist()}
print(json.dumps(out))
"""


def test_second_derivatives_as_upstream():
    ours, up = sides.on_both(PROGRAM)
    for key, theirs in up.items():
        if not key.endswith("float32"):
            continue
        mine, exact = ours[key], up[key.replace("float32", "float64")]
        assert mine["nodes"] == theirs["nodes"] == ["GridSampler2DBackward0",
                                                    "GridSampler2DBackwardBackward0"], key
        for name in ("hx", "hg"):
            assert (mine[name] is None) == (theirs[name] is None), (key, name)
            if theirs[name] is None:
                continue
            truth = np.asarray(exact[name])
            gap = np.max(np.abs(np.asarray(theirs[name]) - truth))
            err = np.max(np.abs(np.asarray(mine[name]) - truth))
            assert err <= 4 * gap, (key, name, err, gap)
