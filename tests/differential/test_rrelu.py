"""rrelu, rrelu_ and rrelu_with_noise against upstream, bit for bit: training draws follow the
generator's stream (checked again by the draw that comes after), NaN, signed zeros, equal
bounds, a strided in-place input, evaluation mode, the gradient, and upstream's refusals
(float16 training, integer input, lower > upper)."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = r"""
import json, torch, torch.nn.functional as F
out = {}
def rec(name, fn):
    try:
        r = fn()
        out[name] = r.double().tolist() if isinstance(r, torch.Tensor) else r
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
for dt in (torch.float32, torch.float64, torch.bfloat16):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 6, generator=g).to(dt)
    x[0, 0] = float("nan"); x[0, 1] = 0.0; x[0, 2] = -0.0
    for lo, hi in ((0.125, 1 / 3), (0.0, 1.0), (0.2, 0.2)):
        torch.manual_seed(7)
        rec(f"{dt} {lo} {hi} train", lambda: F.rrelu(x, lo, hi, training=True))
        rec(f"{dt} {lo} {hi} after", lambda: torch.rand(3))  # the stream position after
        rec(f"{dt} {lo} {hi} eval", lambda: F.rrelu(x, lo, hi, training=False))
        gg = torch.Generator().manual_seed(11)
        noise = torch.empty_like(x)
        rec(f"{dt} {lo} {hi} noise out", lambda: torch.ops.aten.rrelu_with_noise(x, noise, lo, hi, True, gg))
        rec(f"{dt} {lo} {hi} noise", lambda: noise)
        y = x.t().clone().t()  # strided
        torch.manual_seed(7)
        rec(f"{dt} {lo} {hi} inplace strided", lambda: F.rrelu(y, lo, hi, training=True, inplace=True))
        rec(f"{dt} {lo} {hi} inplace value", lambda: y)
rec("bounds", lambda: F.rrelu(torch.randn(3), 0.3, 0.1, training=True))
rec("int", lambda: torch.rrelu(torch.ones(3, dtype=torch.long), training=True))
rec("half eval", lambda: F.rrelu(torch.linspace(-2, 2, 9).half()))
rec("half train", lambda: F.rrelu(torch.linspace(-2, 2, 9).half(), training=True))
for training in (True, False):
    xg = torch.randn(3, 5, generator=torch.Generator().manual_seed(5), requires_grad=True)
    torch.manual_seed(9)
    F.rrelu(xg, 0.1, 0.6, training=training).sum().backward()
    rec(f"grad {training}", lambda: xg.grad)
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_rrelu_agrees_bit_for_bit():
    up = ep.agreeing(PROGRAM)
    # controls: the draws depend on the seed's stream and the bounds (a kernel that ignored the
    # generator or the range would not match), and evaluation is deterministic
    key = "torch.float32 0.125 0.3333333333333333"
    assert ep.distinct(up, f"{key} train", f"{key} noise out")
    assert ep.distinct(up, f"{key} train", "torch.float32 0.0 1.0 train")
    assert ep.distinct(up, f"{key} train", f"{key} eval")
    assert up["half train"].startswith("NotImplementedError")
