"""upsample_linear1d, upsample_trilinear3d (float32, float64, float16, bfloat16) and their
backwards as kernels, against upstream torch 2.13.0 in a separate process, both sides under this
machine's CPU profile and each other one. Bits, dtypes, strides and errors agree: trilinear's
two forward loops (channels-last-3d inputs with more than 3 channels take the channels-last
one, channel counts on and off the vector width), align_corners both ways, explicit scales,
downsampling, unchanged sizes, special values, the .vec overloads through F.interpolate (a
scale giving an output below one reaches the kernel's size check, as upstream), argument checks,
and the gradients with their nodes' names. Control: the channels-last loop's eight corners summed
in float64 and rounded once differs from upstream's."""

from __future__ import annotations

import pytest

from test_glu_kernel import PROFILES, agree_under

PROGRAM = r"""
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
L1, T3 = A.upsample_linear1d, A.upsample_trilinear3d
x = torch.randn(2, 5, 9)
for size in (18, 13, 4, 9, 1, 200):
    for ac in (False, True):
        for dt in DTYPES:
            case(f"l1 {size} ac{ac} {dt}", lambda: L1(x.to(dt), [size], ac))
for dt in DTYPES:
    xd = x.to(dt)
    case(f"l1 scale {dt}", lambda: L1(xd, [15], False, 1.7))
    case(f"l1 scale ac {dt}", lambda: L1(xd, [15], True, 1.7))
    case(f"l1 interp {dt}", lambda: F.interpolate(xd, scale_factor=2.5, mode="linear"))
    case(f"l1 interp recompute {dt}", lambda: F.interpolate(xd, scale_factor=1.3, mode="linear",
                                                            recompute_scale_factor=True))
    case(f"l1 strided {dt}", lambda: L1(xd.transpose(0, 1), [20], False))
    case(f"l1 down {dt}", lambda: F.interpolate(torch.randn(1, 3, 100).to(dt), size=7,
                                                mode="linear", align_corners=True))
s1 = torch.randn(1, 3, 6)
s1[0, 0, 1], s1[0, 1, 2], s1[0, 2, 0] = float("nan"), float("inf"), -float("inf")
for dt in DTYPES:
    case(f"l1 specials {dt}", lambda: L1(s1.to(dt), [13], False))
    case(f"l1 specials same {dt}", lambda: L1(s1.to(dt), [6], False))
case("l1 scale below one", lambda: F.interpolate(x, scale_factor=0.1, mode="linear"))
case("l1 vec small", lambda: A.upsample_linear1d.vec(x, None, False, [0.1]))
case("l1 output length", lambda: L1(x, [4, 4], False))
case("l1 4-d", lambda: L1(x[None], [4], False))
case("l1 zero", lambda: L1(x, [0], False))
case("l1 empty batch", lambda: L1(torch.randn(0, 3, 5), [4], False))
case("l1 empty channels", lambda: L1(torch.randn(2, 0, 5), [4], False))
case("l1 empty width", lambda: L1(torch.randn(2, 3, 0), [4], False))
case("l1 int", lambda: L1(x.int(), [4], False))
case("l1 complex", lambda: L1(x.cfloat(), [4], False))
case("l1 out=", lambda: A.upsample_linear1d.out(x, [6], False, out=torch.empty(0)))
y = torch.randn(2, 3, 4, 5, 6)
for size in ((8, 10, 12), (3, 7, 5), (4, 5, 6), (1, 1, 1), (4, 9, 6)):
    for ac in (False, True):
        for dt in DTYPES:
            case(f"t3 {size} ac{ac} {dt}", lambda: T3(y.to(dt), list(size), ac))
for c in (3, 4, 8, 17, 33):
    yc = torch.randn(2, c, 3, 4, 5).contiguous(memory_format=torch.channels_last_3d)
    for size in ((6, 7, 9), (2, 4, 3)):
        for ac in (False, True):
            for dt in DTYPES:
                case(f"t3 cl c{c} {size} ac{ac} {dt}", lambda: T3(yc.to(dt), list(size), ac))
for dt in DTYPES:
    yd = y.to(dt)
    case(f"t3 scales {dt}", lambda: T3(yd, [6, 8, 9], False, 1.5, 1.7, 1.5))
    case(f"t3 interp {dt}", lambda: F.interpolate(yd, scale_factor=1.7, mode="trilinear"))
    case(f"t3 interp ac {dt}", lambda: F.interpolate(yd, size=(5, 3, 11), mode="trilinear",
                                                     align_corners=True))
    case(f"t3 strided {dt}", lambda: T3(yd.transpose(2, 4), [7, 7, 7], False))
    s3 = torch.randn(1, 5, 3, 4, 5)
    s3[0, 0, 1, 2, 3], s3[0, 1, 2, 0, 0], s3[0, 4, 0, 0, 0] = float("nan"), float("inf"), -1e30
    case(f"t3 specials {dt}", lambda: T3(s3.to(dt), [5, 6, 7], False))
    case(f"t3 specials cl {dt}", lambda: T3(
        s3.to(dt).contiguous(memory_format=torch.channels_last_3d), [5, 6, 7], False))
    case(f"t3 specials vector {dt}", lambda: T3(
        torch.randn(1, 32, 3, 3, 3).masked_fill(torch.rand(1, 32, 3, 3, 3) < 0.1, float("nan"))
        .to(dt).contiguous(memory_format=torch.channels_last_3d), [4, 5, 6], False))
case("t3 output length", lambda: T3(y, [4, 4], False))
case("t3 zero", lambda: T3(y, [4, 0, 3], False))
case("t3 empty channels", lambda: T3(torch.randn(2, 0, 4, 5, 6), [4, 4, 3], False))
case("t3 empty batch", lambda: T3(torch.randn(0, 3, 4, 5, 6), [4, 4, 3], False))
case("t3 int", lambda: T3(y.int(), [4, 4, 4], False))
case("t3 int cl", lambda: T3(torch.randn(2, 5, 4, 5, 6).int().contiguous(
    memory_format=torch.channels_last_3d), [4, 4, 4], False))
case("t3 vec both", lambda: A.upsample_trilinear3d.vec(y, [6, 6, 6], False, [2.0, 2.0, 2.0]))
case("t3 vec length", lambda: A.upsample_trilinear3d.vec(y, None, False, [2.0, 2.0]))
case("t3 vec small", lambda: A.upsample_trilinear3d.vec(y, None, False, [2.0, 0.1, 2.0]))
# backward
B1, B3 = A.upsample_linear1d_backward, A.upsample_trilinear3d_backward
g1 = torch.randn(2, 5, 18)
g3 = torch.randn(2, 5, 8, 10, 12)
for dt in DTYPES:
    for ac in (False, True):
        case(f"b1 {dt} ac{ac}", lambda: B1(g1.to(dt), [18], [2, 5, 9], ac))
        case(f"b1 down {dt} ac{ac}", lambda: B1(g1.to(dt)[..., :4], [4], [2, 5, 9], ac))
        case(f"b3 {dt} ac{ac}", lambda: B3(g3.to(dt), [8, 10, 12], [2, 5, 4, 5, 6], ac))
        case(f"b3 down {dt} ac{ac}", lambda: B3(g3.to(dt)[:, :, :3, :4, :5], [3, 4, 5],
                                                [2, 5, 4, 9, 6], ac))
    case(f"b1 scale {dt}", lambda: B1(g1.to(dt)[..., :15], [15], [2, 5, 9], False, 1.7))
    case(f"b3 scales {dt}", lambda: B3(g3.to(dt)[:, :, :6, :8, :9], [6, 8, 9], [2, 5, 4, 5, 6],
                                       False, 1.5, 1.7, 1.5))
    case(f"b3 cl {dt}", lambda: B3(g3.to(dt).contiguous(memory_format=torch.channels_last_3d),
                                   [8, 10, 12], [2, 5, 4, 5, 6], False))
    case(f"b3 nan {dt}", lambda: B3(g3.masked_fill(g3 > 1.5, float("nan")).to(dt),
                                    [8, 10, 12], [2, 5, 4, 5, 6], False))
    case(f"b3 nan cl {dt}", lambda: B3(
        torch.randn(1, 20, 4, 4, 4).masked_fill(torch.rand(1, 20, 4, 4, 4) < 0.2, float("nan"))
        .to(dt).contiguous(memory_format=torch.channels_last_3d), [4, 4, 4], [1, 20, 2, 3, 2],
        False))
    case(f"b1 nan {dt}", lambda: B1(g1.masked_fill(g1 > 1.5, float("nan")).to(dt), [18],
                                    [2, 5, 9], False))
case("b1 shape", lambda: B1(g1, [19], [2, 5, 9], False))
case("b1 dim", lambda: B1(g1[0], [18], [2, 5, 9], False))
case("b1 input length", lambda: B1(g1, [18], [2, 5], False))
case("b1 zero", lambda: B1(g1, [18], [2, 5, 0], False))
case("b1 int", lambda: B1(g1.int(), [18], [2, 5, 9], False))
case("b3 shape", lambda: B3(g3, [8, 10, 13], [2, 5, 4, 5, 6], False))
case("b3 dim", lambda: B3(g3[0], [8, 10, 12], [2, 5, 4, 5, 6], False))
case("b3 int", lambda: B3(g3.int(), [8, 10, 12], [2, 5, 4, 5, 6], False))
case("b3 int cl", lambda: B3(g3.int().contiguous(memory_format=torch.channels_last_3d),
                             [8, 10, 12], [2, 5, 4, 5, 6], False))
case("b3 empty batch", lambda: B3(torch.randn(0, 5, 8, 10, 12), [8, 10, 12], [0, 5, 4, 5, 6],
                                  False))
# the gradients through F.interpolate, and the nodes autograd records
for dt in (torch.float32, torch.float64, torch.bfloat16):
    for ac in (False, True):
        xr = torch.randn(2, 4, 7).to(dt).requires_grad_()
        z = F.interpolate(xr, scale_factor=2.5, mode="linear", align_corners=ac)
        out[f"node l1 {dt} {ac}"] = type(z.grad_fn).__name__
        w = torch.randn(z.shape).to(dt)
        case(f"grad l1 {dt} {ac}", lambda: torch.autograd.grad((z * w).sum(), xr)[0])
        yr = torch.randn(1, 3, 3, 4, 5).to(dt).requires_grad_()
        z = F.interpolate(yr, scale_factor=1.5, mode="trilinear", align_corners=ac)
        out[f"node t3 {dt} {ac}"] = type(z.grad_fn).__name__
        w = torch.randn(z.shape).to(dt)
        case(f"grad t3 {dt} {ac}", lambda: torch.autograd.grad((z * w).sum(), yr)[0])
# control: the channels-last loop's corners summed in float64, rounded once
yc = torch.randn(1, 17, 3, 4, 5).contiguous(memory_format=torch.channels_last_3d)
def once():
    def pos(i, o):
        p = torch.tensor([min(max((j + 0.5) * i / o - 0.5, 0.0), i - 1.0) for j in range(o)],
                         dtype=torch.float64)
        p0 = p.floor().long()
        return p0, (p0 + 1).clamp(max=i - 1), p - p0
    (d0, d1, ld), (h0, h1, lh), (w0, w1, lw) = pos(3, 6), pos(4, 7), pos(5, 9)
    ld, lh = ld[:, None, None], lh[None, :, None]
    y64 = yc.double()
    r = lambda a, b, c: y64[:, :, a][:, :, :, b][..., c]
    total = 0
    for a, la in ((d0, 1 - ld), (d1, ld)):
        for b, lb in ((h0, 1 - lh), (h1, lh)):
            for c, lc in ((w0, 1 - lw), (w1, lw)):
                total = total + la * lb * lc * r(a, b, c)
    return total.float()
case("control-once", once)
case("control-reference", lambda: T3(yc, [6, 7, 9], False))
"""


@pytest.mark.parametrize("profile", PROFILES)
def test_bits_agree_with_upstream(profile):
    agree_under(profile, PROGRAM, "control-once", "control-reference", 335)
