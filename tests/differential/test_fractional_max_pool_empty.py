"""fractional_max_pool2d/3d against upstream on empty batches and empty outputs (and one full
3-d case as the control that the same seeded windows are drawn), forward and backward."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = r"""
import json, torch, torch.nn.functional as F
out = {}
def rec(name, fn):
    try:
        r = fn()
        out[name] = [[t.double().tolist(), list(t.shape)] for t in (r if isinstance(r, tuple) else (r,))]
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    torch.manual_seed(0)
    rec(f"{dt} empty batch 3d", lambda: F.fractional_max_pool3d(torch.randn(0, 2, 5, 5, 5).to(dt), 2, output_size=3, return_indices=True))
    torch.manual_seed(0)
    rec(f"{dt} empty batch 2d", lambda: F.fractional_max_pool2d(torch.randn(0, 2, 5, 5).to(dt), 2, output_size=3, return_indices=True))
    torch.manual_seed(0)
    rec(f"{dt} 3d", lambda: F.fractional_max_pool3d(torch.randn(2, 2, 5, 6, 7).to(dt), 2, output_ratio=0.5, return_indices=True))
    torch.manual_seed(0)
    rec(f"{dt} 3d output 0", lambda: F.fractional_max_pool3d(torch.randn(2, 2, 5, 6, 7).to(dt), 2, output_size=(0, 2, 2), return_indices=True))
    x = torch.randn(0, 2, 5, 5, 5, dtype=dt, requires_grad=True)
    torch.manual_seed(0)
    y = F.fractional_max_pool3d(x, 2, output_size=3)
    y.sum().backward()
    rec(f"{dt} empty grad", lambda: x.grad)
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_fractional_max_pool_empty_agrees():
    up = ep.agreeing(PROGRAM)
    assert ep.distinct(up, "torch.float32 3d", "torch.float64 empty batch 3d")
    assert all(not isinstance(v, str) for v in up.values())  # upstream computes every case
