"""sigmoid_backward and tanh_backward as kernels (BinaryOpsKernel.cpp: grad * (1 - y) * y and
grad * (1 - y * y), the latter one fused multiply-add, complex values conjugated), against
upstream torch 2.13.0 in a separate process on this machine's CPU capability, AVX2 and DEFAULT:
real dtypes (float32, float64, float16 step by step in its own type, bfloat16, mixed) bit for
bit, layouts, broadcasting, refusals and the gradients of torch.sigmoid / torch.tanh through
autograd included; complex results within four times upstream's own complex64-vs-complex128
gap (c10's complex products are not reproduced to the last bit). They were Python
decompositions, ~40x upstream's time. Control: 1 - y * y rounded twice (no fused multiply-add)
differs from upstream on this machine's capability."""

from __future__ import annotations

import numpy as np
import pytest

import sides

PROGRAM = r"""
A = torch.ops.aten
torch.manual_seed(0)
out, cplx = {}, {}
g = torch.randn(5, 37)
g.view(-1)[3:8] = torch.tensor([float("nan"), 0.0, -0.0, float("inf"), 1e-38])
y = torch.rand(5, 37)
y.view(-1)[:8] = torch.tensor([0.0, -0.0, 1.0, float("nan"), 0.5, 1e-7, 1 - 1e-7, 2.0])
t = torch.rand(5, 37) * 2 - 1  # (exact on both sides: no transcendental)
t.view(-1)[8:12] = torch.tensor([1.0, -1.0, float("inf"), -0.0])
for name, op, b in (("sigmoid", A.sigmoid_backward, y), ("tanh", A.tanh_backward, t)):
    def case(label, fn):
        out[f"{name} {label}"] = outcome(fn, bits=True)
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        case(dt, lambda: op(g.to(dt), b.to(dt)))
    case("transposed", lambda: op(g.t(), b.t()))
    case("half-transposed", lambda: op(g.t().contiguous(), b.t()))
    case("broadcast", lambda: op(g[:, :1], b))
    case("scalar grad", lambda: op(g[0, 0], b))
    case("mixed float64", lambda: op(g.double(), b))
    case("slice", lambda: op(g[:, 1:], b[:, 1:]))
    case("big", lambda: op(g.repeat(7, 3), b.repeat(7, 3)))
    case("channels-last", lambda: op(
        torch.randn(2, 5, 37, 3), b.reshape(1, 5, 37, 1).expand(2, 5, 37, 3).contiguous(
            memory_format=torch.channels_last)))
    case("empty", lambda: op(torch.randn(0, 3), torch.randn(0, 3)))
    case("mismatch", lambda: op(torch.randn(3), torch.randn(4)))
    for dt in (torch.int64, torch.bool, torch.int32):
        case(dt, lambda: op(g.to(dt), b.to(dt)))
    xr = torch.randn(40, requires_grad=True)
    fwd = torch.sigmoid if name == "sigmoid" else torch.tanh
    case("autograd", lambda: torch.autograd.grad((fwd(xr) * torch.arange(40.)).sum(), xr)[0])
    for dt in (torch.complex64, torch.complex128):
        gc = (g.nan_to_num() + 0.5j * torch.randn(5, 37)).to(dt)
        bc = (b.nan_to_num() + 0.3j * torch.rand(5, 37)).to(dt)
        cplx[f"{name} {dt}"] = torch.view_as_real(op(gc, bc)).reshape(-1).tolist()
out["control twice rounded"] = outcome(lambda: g * (1 - t * t), bits=True)
out["reference"] = outcome(lambda: A.tanh_backward(g, t), bits=True)
print(json.dumps({"exact": out, "complex": cplx}))
"""


@pytest.mark.parametrize("profile", sides.PROFILES)
def test_agree_with_upstream(profile):
    ours, up = sides.on_both_under(PROGRAM, profile)
    sides.assert_same(ours["exact"], up["exact"], at_least=36)
    for name in ("sigmoid", "tanh"):
        exact = np.asarray(up["complex"][f"{name} torch.complex128"])
        gap = np.max(np.abs(np.asarray(up["complex"][f"{name} torch.complex64"]) - exact))
        err = np.max(np.abs(np.asarray(ours["complex"][f"{name} torch.complex64"]) - exact))
        assert err <= 4 * gap, (name, err, gap)
        err64 = np.max(np.abs(np.asarray(ours["complex"][f"{name} torch.complex128"]) - exact))
        assert err64 <= 4 * np.finfo(np.float64).eps * np.max(np.abs(exact)), (name, err64)


def test_control_is_caught():
    _, up = sides.on_both(PROGRAM)
    assert up["exact"]["control twice rounded"] != up["exact"]["reference"]
