"""upsample_bicubic2d (float32, float64, float16, bfloat16) and upsample_bicubic2d_backward as
kernels, against upstream torch 2.13.0 in a separate process, both sides under this machine's CPU
profile and each other one (the forward's loop and weights are fused where the build contracts;
the backward's file is built once). Bits, dtypes, strides and errors agree: align_corners both
ways, explicit scales, downsampling, unchanged sizes, borders (taps clamped), special values,
layouts, the .vec overload through F.interpolate, argument checks, uint8 still on its own path,
and the gradient with its node's name. Control: the weights computed in float64 and the taps
summed there, rounded once, differ from upstream's."""

from __future__ import annotations

import pytest

from test_glu_kernel import PROFILES, agree_under

PROGRAM = r"""
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
BC = A.upsample_bicubic2d
x = torch.randn(2, 3, 7, 9)
for size in ((14, 18), (10, 13), (5, 4), (7, 9), (1, 1), (70, 90), (7, 20)):
    for ac in (False, True):
        for dt in DTYPES:
            case(f"fwd {size} ac{ac} {dt}", lambda: BC(x.to(dt), list(size), ac))
for dt in DTYPES:
    xd = x.to(dt)
    case(f"scales {dt}", lambda: BC(xd, [11, 15], False, 1.7, 1.7))
    case(f"scales ac {dt}", lambda: BC(xd, [11, 15], True, 1.7, 1.7))
    case(f"interp {dt}", lambda: F.interpolate(xd, scale_factor=2.5, mode="bicubic"))
    case(f"interp recompute {dt}", lambda: F.interpolate(xd, scale_factor=1.3, mode="bicubic",
                                                         recompute_scale_factor=True))
    case(f"down {dt}", lambda: F.interpolate(torch.randn(1, 2, 60, 50).to(dt), size=(13, 9),
                                             mode="bicubic", align_corners=True))
    case(f"channels-last {dt}", lambda: BC(
        torch.randn(2, 8, 5, 6).to(dt).contiguous(memory_format=torch.channels_last), [9, 11],
        False))
    case(f"transposed {dt}", lambda: BC(xd.transpose(2, 3), [12, 6], False))
s = torch.randn(1, 3, 5, 6)
s[0, 0, 1, 2], s[0, 1, 2, 3], s[0, 2, 0, 0] = float("nan"), float("inf"), -float("inf")
for dt in DTYPES:
    case(f"specials {dt}", lambda: BC(s.to(dt), [11, 13], False))
    case(f"specials same {dt}", lambda: BC(s.to(dt), [5, 6], False))
case("3-d", lambda: BC(torch.randn(3, 4, 5), [4, 4], False))
case("empty batch", lambda: BC(torch.randn(0, 3, 4, 5), [4, 4], False))
case("empty channels", lambda: BC(torch.randn(2, 0, 4, 5), [4, 4], False))
case("zero output", lambda: BC(x, [0, 4], False))
case("output length", lambda: BC(x, [4], False))
case("int", lambda: BC(x.int(), [4, 4], False))
case("complex", lambda: BC(x.cfloat(), [4, 4], False))
case("uint8", lambda: BC((x * 50 + 100).to(torch.uint8), [9, 7], False))
case("vec both", lambda: A.upsample_bicubic2d.vec(x, [6, 6], False, [2.0, 2.0]))
case("vec small", lambda: A.upsample_bicubic2d.vec(x, None, False, [2.0, 0.1]))
case("out=", lambda: A.upsample_bicubic2d.out(x, [6, 6], False, out=torch.empty(0)))
# backward
B = A.upsample_bicubic2d_backward
g = torch.randn(2, 3, 14, 18)
for dt in DTYPES:
    for ac in (False, True):
        case(f"bwd {dt} ac{ac}", lambda: B(g.to(dt), [14, 18], [2, 3, 7, 9], ac))
        case(f"bwd down {dt} ac{ac}", lambda: B(g.to(dt)[:, :, :3, :4], [3, 4], [2, 3, 7, 9],
                                                ac))
    case(f"bwd scales {dt}", lambda: B(g.to(dt)[:, :, :11, :15], [11, 15], [2, 3, 7, 9], False,
                                       1.7, 1.7))
    case(f"bwd channels-last {dt}", lambda: B(
        g.to(dt).contiguous(memory_format=torch.channels_last), [14, 18], [2, 3, 7, 9], False))
    case(f"bwd same {dt}", lambda: B(g.to(dt), [14, 18], [2, 3, 14, 18], False))
    case(f"bwd nan {dt}", lambda: B(g.masked_fill(g > 1.5, float("nan")).to(dt), [14, 18],
                                    [2, 3, 7, 9], False))
    case(f"bwd tall {dt}", lambda: B(torch.randn(1, 2, 40, 3).to(dt), [40, 3], [1, 2, 5, 2],
                                     True))
case("bwd shape", lambda: B(g, [14, 19], [2, 3, 7, 9], False))
case("bwd dim", lambda: B(g[0], [14, 18], [2, 3, 7, 9], False))
case("bwd input length", lambda: B(g, [14, 18], [2, 3, 7], False))
case("bwd int", lambda: B(g.int(), [14, 18], [2, 3, 7, 9], False))
case("bwd int same", lambda: B(g.int(), [14, 18], [2, 3, 14, 18], False))
case("bwd zero size", lambda: B(g, [14, 18], [2, 3, 0, 9], False))
case("bwd empty batch", lambda: B(torch.randn(0, 3, 14, 18), [14, 18], [0, 3, 7, 9], False))
for dt in (torch.float32, torch.float64, torch.bfloat16):
    for ac in (False, True):
        xr = torch.randn(2, 3, 6, 7).to(dt).requires_grad_()
        y = F.interpolate(xr, scale_factor=2.5, mode="bicubic", align_corners=ac)
        out[f"node {dt} {ac}"] = type(y.grad_fn).__name__
        w = torch.randn(y.shape).to(dt)
        case(f"grad {dt} {ac}", lambda: torch.autograd.grad((y * w).sum(), xr)[0])
# control: weights and sums in float64, rounded once
xc = torch.randn(1, 2, 7, 9)
def once():
    def taps(i, o):
        real = torch.tensor([(j + 0.5) * i / o - 0.5 for j in range(o)], dtype=torch.float64)
        idx = real.floor().long()
        t = (real - idx).clamp(0, 1)
        A_ = -0.75
        c1 = lambda z: ((A_ + 2) * z - (A_ + 3)) * z * z + 1
        c2 = lambda z: ((A_ * z - 5 * A_) * z + 8 * A_) * z - 4 * A_
        w = torch.stack([c2(t + 1), c1(t), c1(1 - t), c2(2 - t)], 1)
        k = (idx[:, None] + torch.arange(-1, 3)).clamp(0, i - 1)
        return k, w
    (kh, wh), (kw, ww) = taps(7, 14), taps(9, 18)
    x64 = xc.double()
    rows = (x64[:, :, :, kw] * ww).sum(-1)
    return (rows[:, :, kh] * wh[:, :, None]).sum(3).float()
case("control-once", once)
case("control-reference", lambda: BC(xc, [14, 18], False))
"""


@pytest.mark.parametrize("profile", PROFILES)
def test_bits_agree_with_upstream(profile):
    agree_under(profile, PROGRAM, "control-once", "control-reference", 155)
