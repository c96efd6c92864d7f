"""grid_sampler_3d (F.grid_sample on 5-d inputs) against upstream, bit for bit: every
interpolation and padding mode, both align_corners, the four floating dtypes, coordinates out
of range, NaN and infinite, and the errors for bicubic and mismatched ranks."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = """
import json, torch, torch.nn.functional as F
out = {}
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 4, 5, 6, generator=g).to(dt)
    grid = (torch.rand(2, 3, 4, 2, 3, generator=g) * 2.6 - 1.3).to(dt)
    grid[0, 0, 0, 0, 0] = float("nan")
    grid[1, 0, 0, 0, 1] = float("inf")
    grid[1, 1, 0, 0, 2] = -float("inf")
    grid[1, 2, 0, 0, 0] = 300.0
    for mode in ("bilinear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            for ac in (False, True):
                r = F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=ac)
                out[f"{dt} {mode} {pad} {ac}"] = r.double().tolist()
    xt = x.transpose(2, 4)  # strided input
    out[f"{dt} strided"] = F.grid_sample(xt, grid, align_corners=False).double().tolist()
x = torch.randn(1, 2, 3, 3, 3)
for name, fn in [("bicubic", lambda: F.grid_sample(x, torch.zeros(1, 1, 1, 1, 3), mode="bicubic")),
                 ("grid rank", lambda: torch.grid_sampler_3d(x, torch.zeros(1, 1, 1, 3), 0, 0, False)),
                 ("last dim", lambda: torch.grid_sampler_3d(x, torch.zeros(1, 1, 1, 1, 2), 0, 0, False)),
                 ("batch", lambda: torch.grid_sampler_3d(x, torch.zeros(2, 1, 1, 1, 3), 0, 0, False))]:
    try:
        fn()
        out[name] = "no error"
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_grid_sampler_3d_agrees_bit_for_bit():
    up = ep.agreeing(PROGRAM)
    # control: the cases are not interchangeable (the comparison would see a wrong mode)
    assert ep.distinct(up, "torch.float32 bilinear zeros False", "torch.float32 bilinear zeros True")
    assert ep.distinct(up, "torch.float32 bilinear border False", "torch.float32 nearest border False")
    assert all(up[k] != "no error" for k in ("bicubic", "grid rank", "last dim", "batch"))
