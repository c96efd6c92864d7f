"""nll_loss_backward and nll_loss2d_backward kernels against upstream torch 2.13.0 (separate
processes). Every element of these gradients is one or two correctly rounded scalar operations
(-(g / total_weight), then times weight[t]) or an exact zero, so upstream's float32 error against
float64 is the rounding of those operations itself and agreement is judged bit for bit, zeros'
signs included. Controls: a changed sign, ignored weights and a dropped ignore_index are caught
by the same comparison."""

from __future__ import annotations

import pytest

import sides

PROGRAM = r"""
A = torch.ops.aten
torch.manual_seed(0)
out = {}

def case(name, fn):
    out[name] = outcome(fn, bits=True)

for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    x = (torch.randn(7, 5) * 3).to(dt)
    t = torch.tensor([0, 4, 2, -100, 1, 1, 3])
    w = (torch.rand(5) + 0.3).to(dt)
    t3 = t.clamp(min=0)
    for red in (0, 1, 2):
        for weight in (None, w):
            for target, ign, label in ((t, -100, ""), (t3, 3, "ign3-")):
                y, _ = A.nll_loss_forward(x, target, weight, red, ign)
                # the forward's total weight is its own agreement question (a float32 cascade
                # sum upstream): the backward is given the same value on both sides
                tw = torch.tensor(2.6, dtype=dt)
                g = (torch.randn(y.shape) * 0.7 + 0.1).to(dt) if red == 0 else \
                    torch.tensor(-0.37, dtype=dt)
                case(f"nll-{label}{dt}-{red}-{weight is not None}",
                     lambda: A.nll_loss_backward(g, x, target, weight, red, ign, tw))
    # one item without a batch dimension, and a byte target
    x1 = x[0]
    y1, tw1 = A.nll_loss_forward(x1, torch.tensor(2), w, 1, -100)
    case(f"nll-1d-{dt}", lambda: A.nll_loss_backward(torch.tensor(1.3, dtype=dt), x1,
                                                    torch.tensor(2), w, 1, -100, tw1))
    case(f"nll-1d-none-{dt}", lambda: A.nll_loss_backward(torch.tensor(1.3, dtype=dt), x1,
                                                         torch.tensor(2), None, 0, -100, tw1))
    case(f"nll-byte-{dt}", lambda: A.nll_loss_backward(
        torch.tensor(0.5, dtype=dt), x, torch.tensor([0, 4, 2, 0, 1, 1, 3], dtype=torch.uint8),
        None, 2, -100, torch.tensor(7.0, dtype=dt)))
    # 2d
    x4 = torch.randn(2, 4, 3, 5).to(dt)
    t3 = torch.randint(0, 4, (2, 3, 5)); t3[0, 1, 2] = -100; t3[1, 0, 0] = -100
    w4 = (torch.rand(4) + 0.3).to(dt)
    for red in (0, 1, 2):
        for weight in (None, w4):
            y, _ = A.nll_loss2d_forward(x4, t3, weight, red, -100)
            tw = torch.tensor(9.3, dtype=dt)
            g = (torch.randn(y.shape) - 0.2).to(dt) if red == 0 else torch.tensor(0.81, dtype=dt)
            case(f"nll2d-{dt}-{red}-{weight is not None}",
                 lambda: A.nll_loss2d_backward(g, x4, t3, weight, red, -100, tw))

# zero total weight (every target ignored), a NaN incoming gradient, an empty batch
x = torch.randn(3, 4)
case("all-ignored", lambda: A.nll_loss_backward(torch.tensor(1.0), x, torch.tensor([-100] * 3),
                                                None, 1, -100, torch.tensor(0.0)))
case("nan-grad", lambda: A.nll_loss_backward(torch.tensor(float("nan")), x,
                                             torch.tensor([1, 2, 3]), None, 1, -100,
                                             torch.tensor(3.0)))
case("empty", lambda: A.nll_loss_backward(torch.tensor(1.0), torch.randn(0, 4),
                                          torch.zeros(0, dtype=torch.long), None, 1, -100,
                                          torch.tensor(0.0)))
# bad input: upstream's error types and messages
x = torch.randn(4, 3)
t = torch.tensor([0, 1, 2, 1])
one = torch.tensor(1.0)
case("err-target-range", lambda: A.nll_loss_backward(one, x, torch.tensor([0, 5, 1, 1]), None,
                                                     1, -100, torch.tensor(4.0)))
case("err-batch", lambda: A.nll_loss_backward(one, x, t[:3], None, 1, -100, one))
case("err-3d", lambda: A.nll_loss_backward(one, torch.randn(2, 3, 4), t, None, 1, -100, one))
case("err-multi-target", lambda: A.nll_loss_backward(one, x, t.view(2, 2), None, 1, -100, one))
case("err-total-weight", lambda: A.nll_loss_backward(one, x, t, None, 1, -100, torch.ones(2)))
case("err-weight", lambda: A.nll_loss_backward(one, x, t, torch.ones(4), 1, -100, one))
case("err-grad-shape", lambda: A.nll_loss_backward(torch.ones(2), x, t, None, 1, -100, one))
case("err-grad-none", lambda: A.nll_loss_backward(torch.ones(3), x, t, None, 0, -100, one))
case("err-int-input", lambda: A.nll_loss_backward(one, x.long(), t, None, 1, -100, one))
x4 = torch.randn(2, 3, 4, 4)
case("err2d-target-dim", lambda: A.nll_loss2d_backward(one, x4, t, None, 1, -100, one))
case("err2d-input-dim", lambda: A.nll_loss2d_backward(one, x, torch.zeros(2, 4, 4).long(), None,
                                                      1, -100, one))
case("err2d-size", lambda: A.nll_loss2d_backward(one, x4, torch.zeros(2, 4, 3).long(), None, 1,
                                                 -100, one))
case("err2d-range", lambda: A.nll_loss2d_backward(one, x4, torch.full((2, 4, 4), 3), None, 1,
                                                  -100, one))
case("err2d-grad-dim", lambda: A.nll_loss2d_backward(torch.ones(2, 4), x4,
                                                     torch.zeros(2, 4, 4).long(), None, 0, -100,
                                                     one))
case("err2d-channels-last", lambda: A.nll_loss2d_backward(
    one, x4.contiguous(memory_format=torch.channels_last), torch.zeros(2, 4, 4).long(), None, 1,
    -100, one))

# controls: what a wrong kernel would return, computed on this side
x = torch.randn(5, 4); t = torch.tensor([0, 3, 3, -100, 1]); w = torch.rand(4) + 0.5
g = torch.tensor(0.6); tw = torch.tensor(4.6226)
out["control-ref"] = encode(A.nll_loss_backward(g, x, t, w, 1, -100, tw), bits=True)
out["control-sign"] = encode(A.nll_loss_backward(-g, x, t, w, 1, -100, tw), bits=True)
out["control-no-weight"] = encode(A.nll_loss_backward(g, x, t, None, 1, -100, tw), bits=True)
out["control-no-ignore"] = encode(A.nll_loss_backward(g, x, t.clamp(min=0), w, 1, -100, tw),
                                 bits=True)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results():
    return sides.on_both(PROGRAM, profiles=True)


def test_cases_ran(results):
    ours, up = results
    assert set(ours) == set(up)
    assert len(up) > 90
    assert any("error" in v for v in up.values())


@pytest.mark.parametrize("prefix", ["nll-", "nll2d-", "all-ignored", "nan-grad", "empty", "err"])
def test_bits_agree_with_upstream(results, prefix):
    ours, up = results
    names = [n for n in up if n.startswith(prefix)]
    assert names
    for name in names:
        assert ours[name] == up[name], name


def test_controls_are_caught(results):
    """The bitwise comparison above separates the right gradient from a flipped sign, ignored
    weights and an ignore_index that was not honoured (upstream's own values)."""
    ours, up = results
    assert ours["control-ref"] == up["control-ref"]
    for wrong in ("control-sign", "control-no-weight", "control-no-ignore"):
        assert up[wrong] != up["control-ref"], wrong
        assert ours["control-ref"] != up[wrong], wrong
