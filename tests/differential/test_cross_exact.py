"""linalg.cross / torch.cross against upstream, bit for bit: CrossKernel.cpp's contraction in
float and double, per-operation rounding in float16 and bfloat16, integers, broadcasting,
strided inputs, out=, non-finite values, the gradient, and upstream's errors."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = ep.program(r"""
g = torch.Generator().manual_seed(0)
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64):
    a = (torch.randn(4, 3, 5, generator=g) * 5).to(dt); b = (torch.randn(4, 3, 5, generator=g) * 5).to(dt)
    rec(f"{dt} dim1", lambda: torch.linalg.cross(a, b, dim=1))
    rec(f"{dt} cross", lambda: torch.cross(a, b, dim=1))
    rec(f"{dt} bcast", lambda: torch.linalg.cross(a[:1], b, dim=1))
    rec(f"{dt} transposed", lambda: torch.linalg.cross(a.transpose(0, 2), b.transpose(0, 2), dim=1))
    rec(f"{dt} out", lambda: torch.linalg.cross(a, b, dim=1, out=torch.empty(0, dtype=dt)))
a = torch.randn(2, 3, generator=g); b = torch.randn(2, 3, generator=g)
a[0, 0] = float("inf"); a[1, 1] = float("nan")
rec("nonfinite", lambda: torch.linalg.cross(a, b))
rec("bad dim", lambda: torch.linalg.cross(torch.randn(2, 4), torch.randn(2, 4)))
rec("mixed", lambda: torch.linalg.cross(torch.randn(2, 3), torch.randn(2, 3).double()))
rec("ndim", lambda: torch.linalg.cross(torch.randn(2, 3), torch.randn(3)))
rec("bcast bad", lambda: torch.linalg.cross(torch.randn(2, 3), torch.randn(3, 3)))
rec("dim range", lambda: torch.linalg.cross(torch.randn(2, 3), torch.randn(2, 3), dim=5))
rec("long float", lambda: torch.linalg.cross(torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3)))
ag = torch.randn(4, 3, generator=g, dtype=torch.float64, requires_grad=True)
bg = torch.randn(4, 3, generator=g, dtype=torch.float64, requires_grad=True)
torch.linalg.cross(ag, bg).pow(2).sum().backward()
rec("grad a", lambda: ag.grad)
rec("grad b", lambda: bg.grad)
""")

PROGRAM = ep.register(__name__, PROGRAM)


def test_cross_agrees_bit_for_bit():
    up = ep.agreeing(PROGRAM)
    # control: the operand order matters (cross(a, b) = -cross(b, a) is not what was asked)
    flipped = {"x": [[[-v for v in row] for row in m] for m in up["torch.float32 dim1"]]}
    assert ep.mismatches(flipped, {"x": up["torch.float32 dim1"]}) == ["x"]
