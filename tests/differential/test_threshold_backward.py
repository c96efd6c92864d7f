"""threshold_backward (relu's gradient) as a kernel, against upstream torch 2.13.0 in a separate
process and against the decomposition it replaced. Each element is a selection (0 or the
incoming gradient), so agreement is bit for bit: dtypes, strides, signed zeros and NaN inputs
included. Control: a kernel comparing with < instead of <= is caught at inputs equal to the
threshold."""

from __future__ import annotations

import pytest

import sides

PROGRAM = r"""
A = torch.ops.aten
torch.manual_seed(0)
out = {}

def case(name, fn):
    out[name] = outcome(fn, bits=True)

x = torch.randn(6, 7)
x[0, :3] = torch.tensor([0.0, -0.0, float("nan")])
x[1, :2] = 0.25
g = torch.randn(6, 7)
g[2, :2] = -0.0
for th in (0.0, 0.25, -1.0):
    case(f"f32-{th}", lambda: A.threshold_backward(g, x, th))
for dt in (torch.float64, torch.bfloat16, torch.float16):
    case(f"{dt}", lambda: A.threshold_backward(g.to(dt), x.to(dt), 0.25))
case("mixed", lambda: A.threshold_backward(g.double(), x, 0.1))
case("int", lambda: A.threshold_backward((g * 10).int(), (x * 10).int(), 2))
case("broadcast", lambda: A.threshold_backward(g[:, :1], x, 0))
case("transposed", lambda: A.threshold_backward(g.t(), x.t(), 0))
case("channels-last", lambda: A.threshold_backward(
    torch.randn(2, 3, 4, 4).contiguous(memory_format=torch.channels_last),
    torch.randn(2, 3, 4, 4).contiguous(memory_format=torch.channels_last), 0))
case("empty", lambda: A.threshold_backward(torch.randn(0, 3), torch.randn(0, 3), 0))
case("shape-mismatch", lambda: A.threshold_backward(torch.randn(3), torch.randn(4), 0))
b = torch.ones(3, dtype=torch.bool)
case("bool", lambda: A.threshold_backward(b, b, 0))
case("complex", lambda: A.threshold_backward(torch.randn(3, dtype=torch.cfloat),
                                             torch.randn(3, dtype=torch.cfloat), 0))
xr = torch.randn(5, 4, requires_grad=True)
case("relu-grad", lambda: torch.autograd.grad(torch.relu(xr).sum() * 1.5, xr)[0])
case("relu-double-backward", lambda: torch.autograd.grad(
    torch.autograd.grad((torch.relu(xr) ** 2).sum(), xr, create_graph=True)[0].sum(), xr)[0])
# control: a strict comparison at the threshold
case("control-lt", lambda: torch.where(x < 0.25, 0, g))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results():
    return sides.on_both(PROGRAM, profiles=True)


def test_bits_agree_with_upstream(results):
    ours, up = results
    assert set(ours) == set(up) and len(up) >= 15
    for name in up:
        assert ours[name] == up[name], name


def test_control_is_caught(results):
    _, up = results
    assert up["control-lt"]["hex"] != up["f32-0.25"]["hex"]


def test_same_bits_as_the_decomposition_it_replaced():
    import torch
    from torch._decomp.decompositions import threshold_backward as decomposition

    torch.manual_seed(1)
    x, g = torch.randn(5, 6), torch.randn(5, 6)
    x[0, 0], g[1, 1] = 0.0, -0.0
    for args in ((g, x, 0.0), (g, x, 0.3), (g[:, :1], x, 0), (g.t(), x.t(), -0.5),
                 (g.bfloat16(), x.bfloat16(), 0.1), (g.double(), x, 0), (g.int(), x.int(), 1)):
        ours, ref = torch.ops.aten.threshold_backward(*args), decomposition(*args)
        assert ours.dtype == ref.dtype and ours.stride() == ref.stride()
        assert torch.equal(ours.contiguous().view(torch.uint8), ref.contiguous().view(torch.uint8))
