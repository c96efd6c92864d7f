"""The backward of views (slice_backward, select_backward, diagonal_backward, unfold_backward)
and the *_scatter operators as kernels, against upstream torch 2.13.0 in a separate process, bit
for bit: values, dtypes, strides and storage offsets, errors. Every sliced, selected or unfolded
tensor's gradient goes through them (they were served by Python decompositions, 20-60x
upstream's time). Overlapping windows' gradients are sums, in upstream's order (float16 and
bfloat16 show it); the scatters keep their input's strides and storage offset, as upstream's
clone_preserve_strides does (``as_strided_scatter`` wrote through a compact clone before, a
silently different result where the input had a storage offset). Controls: the windows summed in
the other order, and the plain clone, differ from upstream."""

from __future__ import annotations

import pytest

import sides

PROGRAM = r"""
A = torch.ops.aten
torch.manual_seed(0)
out = {}

def case(name, fn):
    out[name] = outcome(fn, bits=True)

def scatter(name, fn):  # the storage offset too: the scatters keep their input's
    out[name] = outcome(lambda: (fn(), fn().storage_offset()), bits=True)

g = torch.randn(4, 3)
g[0, 0] = -0.0
case("slice", lambda: A.slice_backward(g, [4, 8], 1, 2, 8, 2))
case("slice-negative", lambda: A.slice_backward(g, [4, 8], -1, -6, 100, 2))
case("slice-wrong-size", lambda: A.slice_backward(g, [4, 8], 1, 0, 3, 1))
case("slice-broadcast", lambda: A.slice_backward(g[:, :1], [4, 8], 1, 0, 3, 1))
case("slice-negative-size", lambda: A.slice_backward(g, [-4, 8], 1, 0, 3, 1))
case("slice-transposed", lambda: A.slice_backward(g.t(), [8, 4], 0, 1, 4, 1))
case("select", lambda: A.select_backward(g, [4, 5, 3], 1, -2))
case("select-out-of-range", lambda: A.select_backward(g, [4, 5, 3], 1, 7))
case("diagonal", lambda: A.diagonal_backward(g[0], [3, 5], 1, 0, 1))
case("diagonal-negative", lambda: A.diagonal_backward(g[0], [3, 5], -1, 1, 0))
for dt in (torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.bool, torch.cfloat):
    case(f"slice {dt}", lambda: A.slice_backward(g.to(dt), [4, 6], 1, 1, 4, 1))
c = torch.randn(4, 3, dtype=torch.cfloat)
case("slice-conj", lambda: A.slice_backward(c.conj(), [4, 6], 1, 0, 3, 1))

x = torch.randn(10, 3)
for size, step in ((3, 2), (2, 2), (4, 1), (1, 3), (3, 4), (10, 1)):
    gu = torch.randn(x.unfold(0, size, step).shape)
    gu[0, 0, 0] = -0.0
    for dt in (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.bool):
        case(f"unfold {size} {step} {dt}", lambda: A.unfold_backward(
            (gu * 10).to(dt) if dt is torch.int32 else gu.to(dt), [10, 3], 0, size, step))
case("unfold-middle-dim", lambda: A.unfold_backward(torch.randn(2, 4, 5, 3), [2, 10, 5], 1, 3, 2))
case("unfold-transposed-grad", lambda: A.unfold_backward(
    torch.randn(3, 4, 3).transpose(0, 1), [10, 3], 0, 3, 2))
case("unfold-step-0", lambda: A.unfold_backward(torch.randn(8, 3, 3), [10, 3], 0, 3, 0))
case("unfold-fewer-windows", lambda: A.unfold_backward(torch.randn(3, 3, 3), [10, 3], 0, 3, 1))
case("unfold-more-windows", lambda: A.unfold_backward(torch.randn(6, 3, 3), [6, 3], 0, 3, 1))
case("unfold-conj", lambda: A.unfold_backward(
    torch.randn(4, 2, 2, dtype=torch.cfloat).conj(), [4, 3], 1, 2, 1))

t = torch.randn(6, 5).t()
base = torch.randn(20)
z = base[3:15].view(3, 4)
scatter("slice_scatter-transposed", lambda: torch.slice_scatter(t, torch.ones(2, 6), 0, 1, 5, 2))
scatter("slice_scatter-offset", lambda: torch.slice_scatter(z, torch.ones(3, 2), 1, 0, 2))
scatter("slice_scatter-wrong-size", lambda: torch.slice_scatter(z, torch.ones(3, 3), 1, 0, 2))
scatter("slice_scatter-float64-src", lambda: torch.slice_scatter(
    z, torch.ones(3, 2, dtype=torch.float64), 1, 0, 2))
scatter("slice_scatter-expanded", lambda: torch.slice_scatter(
    torch.randn(1, 4).expand(3, 4), torch.ones(3, 2), 1, 0, 2))
cl = torch.randn(2, 3, 4, 4).contiguous(memory_format=torch.channels_last)
scatter("slice_scatter-channels-last", lambda: torch.slice_scatter(
    cl, torch.zeros(2, 3, 2, 4), 2, 0, 2))
scatter("select_scatter", lambda: torch.select_scatter(z, torch.ones(4), 0, 1))
scatter("select_scatter-wrong-size", lambda: torch.select_scatter(z, torch.ones(3), 0, 1))
scatter("diagonal_scatter", lambda: torch.diagonal_scatter(z, torch.ones(3), 1))
scatter("as_strided_scatter-offset-0", lambda: torch.as_strided_scatter(
    z, torch.ones(2), (2,), (1,), 0))
scatter("as_strided_scatter-own-offset", lambda: torch.as_strided_scatter(
    z, torch.ones(2), (2,), (1,)))
scatter("as_strided_scatter-transposed", lambda: torch.as_strided_scatter(
    torch.arange(12.).view(3, 4).t(), torch.ones(2), (2,), (4,), 1))

xr = torch.randn(4, 6, requires_grad=True)
case("gradient", lambda: torch.autograd.grad(
    (xr[:, 1:5:2] * 2).sum() + xr[1].sum() + xr.diagonal(1).sum() + xr.unfold(1, 3, 2).sum()
    + (xr.unfold(0, 2, 1) ** 2).sum(), xr)[0])

# controls: overlapping windows summed first position first; a scatter over a compact clone
gh = torch.randn(x.unfold(0, 4, 1).shape).half()
buf = torch.zeros(10, 3, dtype=torch.half)
for r in range(4):
    buf.unfold(0, 4, 1)[..., r] += gh[..., r]
case("control-order", lambda: buf)
case("unfold-control-reference", lambda: A.unfold_backward(gh, [10, 3], 0, 4, 1))
clone = z.clone()
clone.as_strided((2,), (1,)).copy_(torch.ones(2))
case("control-clone", lambda: clone)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results():
    return sides.on_both(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, at_least=65)


def test_controls_are_caught(results):
    _, up = results
    assert up["control-order"]["hex"] != up["unfold-control-reference"]["hex"]
    scattered = up["as_strided_scatter-offset-0"]["v"][0]["hex"]
    assert up["control-clone"]["hex"] != scattered
