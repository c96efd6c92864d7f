"""rot90, channel_shuffle (and native_channel_shuffle) and block_diag as kernels, against upstream
torch 2.13.0 in a separate process, bit for bit: values, dtypes, strides, whether the result is a
view, errors, and the gradients through autograd with their nodes' names. They were served by
Python decompositions, which differed: channel_shuffle's channels-last result came out contiguous,
native_channel_shuffle was refused, block_diag promoted a 0-d tensor's dtype over the blocks', had
no result for no blocks, gave its errors without upstream's prefix and recorded cat's gradient
nodes instead of BlockDiagBackward0; rot90 named a wrapped dimension in its error. Controls: the
promotion that ignores the 0-d rule, and a contiguous shuffle of a channels-last input, differ
from upstream."""

from __future__ import annotations

import pytest

import sides

PROGRAM = r"""
F = torch.nn.functional
torch.manual_seed(0)
out = {}

def case(name, fn):
    out[name] = outcome(lambda: (fn(), fn()._is_view()), bits=True)

x = torch.randn(2, 3, 4, 5)
x[0, 0, 0, 0] = -0.0
xt = x.transpose(2, 3)
cl = x.contiguous(memory_format=torch.channels_last)
for k in (-5, -1, 0, 1, 2, 3, 4, 7):
    case(f"rot90 k={k}", lambda: torch.rot90(x, k, (2, 3)))
    case(f"rot90 transposed k={k}", lambda: torch.rot90(xt, k, (3, 1)))
    case(f"rot90 channels-last k={k}", lambda: torch.rot90(cl, k, (-1, 1)))
case("rot90 default", lambda: torch.rot90(x))
case("rot90 int", lambda: torch.rot90((x * 10).int(), 1, [0, 3]))
case("rot90 bool", lambda: torch.rot90(x > 0, 3, [0, 3]))
case("rot90 empty", lambda: torch.rot90(torch.randn(0, 3), 1))
for dims in ((1, 1), (0, -4), (1, -3), (0, 4), (4, 0), (-5, 0), (3, -4), (0, 1, 2), (0,)):
    case(f"rot90 dims {dims}", lambda: torch.rot90(x, 1, dims))
case("rot90 1-d", lambda: torch.rot90(torch.randn(3)))

for g in (1, 3, 2, 0, -1, 4):
    case(f"shuffle groups={g}", lambda: F.channel_shuffle(torch.randn(2, 6, 3, 2), g))
case("shuffle channels-last", lambda: F.channel_shuffle(
    torch.randn(2, 6, 3, 2).contiguous(memory_format=torch.channels_last), 3))
case("shuffle channels-last-3d", lambda: F.channel_shuffle(
    torch.randn(1, 4, 2, 2, 2).contiguous(memory_format=torch.channels_last_3d), 2))
case("shuffle transposed", lambda: F.channel_shuffle(torch.randn(2, 3, 6).transpose(1, 2), 2))
case("shuffle 2-d", lambda: F.channel_shuffle(torch.randn(2, 6), 2))
case("shuffle empty", lambda: F.channel_shuffle(torch.randn(0, 4, 2), 2))
case("shuffle int", lambda: F.channel_shuffle(torch.arange(24).view(1, 6, 4), 3))
case("native_channel_shuffle", lambda: torch.native_channel_shuffle(
    torch.arange(24.).view(1, 6, 4), 3))

a, b = torch.randn(2, 3), torch.randn(3)
case("block_diag", lambda: torch.block_diag(a, b, torch.tensor(5.), torch.randn(0, 2),
                                            torch.randn(2, 0)))
case("block_diag dtypes", lambda: torch.block_diag(
    torch.ones(2, 2, dtype=torch.int32), torch.tensor([1.5], dtype=torch.float16),
    torch.tensor(True)))
case("block_diag 0-d float64", lambda: torch.block_diag(
    torch.ones(2, 2), torch.tensor(2.0, dtype=torch.float64)))
case("block_diag complex", lambda: torch.block_diag(torch.ones(1, 2), torch.tensor([1j])))
case("block_diag none", lambda: torch.block_diag())
case("block_diag 3-d", lambda: torch.block_diag(a, torch.randn(1, 1, 1)))
case("block_diag transposed", lambda: torch.block_diag(a.t(), a))

xr = torch.randn(2, 4, 3, 3, requires_grad=True)
c = torch.randn(2, 2, dtype=torch.cfloat, requires_grad=True)
out["gradient"] = outcome(lambda: torch.autograd.grad(
    (torch.rot90(xr, 1, (2, 3)) * torch.arange(9.).view(3, 3)).sum()
    + (F.channel_shuffle(xr, 2) * torch.arange(4.).view(4, 1, 1)).sum()
    + (torch.block_diag(xr[0, 0], xr[1, 1, 0], xr[1, 0, 0, 0]) * 3).sum(), xr)[0], bits=True)
out["gradient complex"] = outcome(lambda: torch.autograd.grad(
    torch.block_diag(c, xr[0, 0]).abs().sum(), (c, xr)), bits=True)
out["nodes"] = [type(f().grad_fn).__name__ for f in (
    lambda: torch.rot90(xr, 1, (2, 3)), lambda: F.channel_shuffle(xr, 2),
    lambda: torch.block_diag(xr[0, 0], xr[1, 1, 0]))]

# controls: the dtype without the 0-d rule; a contiguous shuffle of a channels-last input
out["control-promotion"] = str(torch.promote_types(torch.float32, torch.float64))
shuffled = torch.randn(2, 6, 3, 2).contiguous(memory_format=torch.channels_last)
out["control-contiguous"] = list(F.channel_shuffle(shuffled, 3).contiguous().stride())
out["shuffle-strides"] = list(F.channel_shuffle(shuffled, 3).stride())
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results():
    return sides.on_both(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, at_least=60)
    assert up["nodes"] == ["Rot90Backward0", "ChannelShuffleBackward0", "BlockDiagBackward0"]


def test_controls_are_caught(results):
    _, up = results
    assert up["block_diag 0-d float64"]["v"][0]["dtype"] != \
        up["control-promotion"].replace("torch.", "")
    assert up["control-contiguous"] != up["shuffle-strides"]
