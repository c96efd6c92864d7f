"""upsample_bilinear2d (float32, float64, float16, bfloat16) and upsample_bilinear2d_backward as
kernels, against upstream torch 2.13.0 in a separate process, under this machine's CPU profile
and each other one (the fused multiply-adds of the AVX2 build, which AVX512 also runs, against
the DEFAULT build's separate roundings). Bits, dtypes, strides and errors agree: both of
upstream's forward loops (the channels-last one, taken for small outputs, channels-last inputs
and 3 channels on one thread; the generic one otherwise), channel counts on and off the vector
width, align_corners both ways, explicit scales, downsampling, layouts, and the gradient through
F.interpolate with its node's name. Control: the channels-last loop's four corners summed left
to right in float64 and rounded once differs from upstream's."""

from __future__ import annotations

import sides

PROGRAM = r"""
A = torch.ops.aten
torch.manual_seed(0)
out = {}
def case(name, fn):
    out[name] = outcome(fn, bits=True)

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
def img(n, c, h, w):
    return torch.randn(n, c, h, w)
for c in (1, 3, 4, 8, 17, 33):
    x = img(2, c, 7, 9)
    for size in ((14, 18), (10, 13), (5, 4), (70, 90), (7, 20)):
        for ac in (False, True):
            for dt in DTYPES:
                case(f"fwd c{c} {size} ac{ac} {dt}",
                     lambda: A.upsample_bilinear2d(x.to(dt), list(size), ac))
    xl = x.contiguous(memory_format=torch.channels_last)
    for size in ((14, 18), (70, 90)):
        for dt in DTYPES:
            case(f"fwd channels-last c{c} {size} {dt}",
                 lambda: A.upsample_bilinear2d(xl.to(dt), list(size), False))
x = img(2, 5, 7, 9)
for dt in DTYPES:
    xd = x.to(dt)
    case(f"scales {dt}", lambda: A.upsample_bilinear2d(xd, [11, 15], False, 1.7, 1.7))
    case(f"scales ac {dt}", lambda: A.upsample_bilinear2d(xd, [11, 15], True, 1.7, 1.7))
    case(f"7 -> 10 {dt}", lambda: F.interpolate(img(1, 4, 7, 7).to(dt), size=10, mode="bilinear"))
    case(f"scale 1.7 {dt}", lambda: F.interpolate(xd, scale_factor=1.7, mode="bilinear"))
    case(f"recompute {dt}", lambda: F.interpolate(xd, scale_factor=1.7, mode="bilinear",
                                                  recompute_scale_factor=True))
    case(f"down {dt}", lambda: F.interpolate(img(2, 6, 40, 50).to(dt), size=(13, 9),
                                             mode="bilinear"))
    case(f"down large {dt}", lambda: F.interpolate(img(1, 2, 200, 150).to(dt), scale_factor=0.6,
                                                   mode="bilinear", align_corners=True))
    case(f"x2 {dt}", lambda: F.interpolate(img(1, 8, 16, 16).to(dt), scale_factor=2,
                                           mode="bilinear"))
    case(f"transposed {dt}", lambda: A.upsample_bilinear2d(xd.transpose(2, 3), [12, 6], False))
    case(f"sliced {dt}", lambda: A.upsample_bilinear2d(xd[:, ::2, 1:], [64, 70], True))
    case(f"same size {dt}", lambda: A.upsample_bilinear2d(xd, [7, 9], False))
    case(f"to one {dt}", lambda: A.upsample_bilinear2d(xd, [1, 1], True))
    case(f"width one {dt}", lambda: A.upsample_bilinear2d(xd, [100, 1], False))
s = img(1, 3, 5, 6)
s[0, 0, 1, 2], s[0, 1, 2, 3], s[0, 2, 0, 0] = float("nan"), float("inf"), -float("inf")
for dt in DTYPES:
    case(f"specials {dt}", lambda: A.upsample_bilinear2d(s.to(dt), [11, 13], False))
    case(f"specials generic {dt}", lambda: A.upsample_bilinear2d(s.to(dt), [80, 90], False))
    case(f"specials vector {dt}", lambda: A.upsample_bilinear2d(
        img(1, 32, 5, 6).masked_fill(torch.rand(1, 32, 5, 6) < 0.1, float("nan")).to(dt),
        [11, 13], False))
# argument checks and dtypes
x = img(2, 3, 4, 5)
case("3-d", lambda: A.upsample_bilinear2d(torch.randn(3, 4, 5), [4, 4], False))
case("empty batch", lambda: A.upsample_bilinear2d(torch.randn(0, 3, 4, 5), [4, 4], False))
case("empty channels", lambda: A.upsample_bilinear2d(torch.randn(2, 0, 4, 5), [4, 4], False))
case("empty height", lambda: A.upsample_bilinear2d(torch.randn(2, 3, 0, 5), [4, 4], False))
case("zero output", lambda: A.upsample_bilinear2d(x, [0, 4], False))
case("output length", lambda: A.upsample_bilinear2d(x, [4], False))
case("int small", lambda: A.upsample_bilinear2d(x.int(), [4, 4], False))
case("int large", lambda: A.upsample_bilinear2d(x.int(), [100, 100], False))
case("bool", lambda: A.upsample_bilinear2d(x.bool(), [4, 4], False))
case("complex large", lambda: A.upsample_bilinear2d(x.cfloat(), [100, 100], False))
case("uint8", lambda: A.upsample_bilinear2d((x * 50 + 100).to(torch.uint8), [9, 7], False))
case("uint8 vec", lambda: F.interpolate((x * 50 + 100).to(torch.uint8), scale_factor=1.7,
                                        mode="bilinear"))
case("vec both", lambda: A.upsample_bilinear2d.vec(x, [6, 6], False, [2.0, 2.0]))
case("vec neither", lambda: A.upsample_bilinear2d.vec(x, None, False, None))
case("vec length", lambda: A.upsample_bilinear2d.vec(x, None, False, [2.0, 2.0, 2.0]))
case("out=", lambda: A.upsample_bilinear2d.out(x, [6, 6], False, out=torch.empty(0)))
# backward
g = torch.randn(2, 5, 14, 18)
B = A.upsample_bilinear2d_backward
for dt in DTYPES:
    for ac in (False, True):
        case(f"bwd {dt} ac{ac}", lambda: B(g.to(dt), [14, 18], [2, 5, 7, 9], ac))
    case(f"bwd channels-last {dt}",
         lambda: B(g.to(dt).contiguous(memory_format=torch.channels_last), [14, 18],
                   [2, 5, 7, 9], False))
    case(f"bwd scales {dt}", lambda: B(g.to(dt)[:, :, :11, :15], [11, 15], [2, 5, 7, 9], False,
                                       1.7, 1.7))
    case(f"bwd down {dt}", lambda: B(g.to(dt)[:, :, :3, :4], [3, 4], [2, 5, 7, 9], True))
    case(f"bwd strided {dt}", lambda: B(g.to(dt).transpose(2, 3).contiguous().transpose(2, 3),
                                        [14, 18], [2, 5, 7, 9], False))
    case(f"bwd nan {dt}", lambda: B(g.masked_fill(g > 1.5, float("nan")).to(dt), [14, 18],
                                    [2, 5, 7, 9], False))
    case(f"bwd nan channels-last {dt}", lambda: B(
        torch.randn(1, 20, 6, 6).masked_fill(torch.rand(1, 20, 6, 6) < 0.2, float("nan"))
        .to(dt).contiguous(memory_format=torch.channels_last), [6, 6], [1, 20, 3, 3], False))
case("bwd shape", lambda: B(g, [14, 19], [2, 5, 7, 9], False))
case("bwd dim", lambda: B(g[0], [14, 18], [2, 5, 7, 9], False))
case("bwd input length", lambda: B(g, [14, 18], [2, 5, 7], False))
case("bwd output length", lambda: B(g, [14], [2, 5, 7, 9], False))
case("bwd int", lambda: B(g.int(), [14, 18], [2, 5, 7, 9], False))
case("bwd int channels-last", lambda: B(g.int().contiguous(memory_format=torch.channels_last),
                                        [14, 18], [2, 5, 7, 9], False))
case("bwd zero size", lambda: B(g, [14, 18], [2, 5, 0, 9], False))
case("bwd empty batch", lambda: B(torch.randn(0, 5, 14, 18), [14, 18], [0, 5, 7, 9], False))
# the gradient through F.interpolate, and the node autograd records
for dt in (torch.float32, torch.float64, torch.bfloat16):
    for ac in (False, True):
        xr = img(2, 4, 6, 7).to(dt).requires_grad_()
        y = F.interpolate(xr, scale_factor=2.5, mode="bilinear", align_corners=ac)
        out[f"node {dt} {ac}"] = type(y.grad_fn).__name__
        w = torch.randn(y.shape).to(dt)
        case(f"grad {dt} {ac}", lambda: torch.autograd.grad((y * w).sum(), xr)[0])
xr = img(1, 8, 16, 16).contiguous(memory_format=torch.channels_last).requires_grad_()
case("grad channels-last", lambda: torch.autograd.grad(
    (F.interpolate(xr, size=(20, 40), mode="bilinear") ** 2).sum(), xr)[0])
# 3 channels on one thread take the channels-last loop
torch.set_num_threads(1)
for dt in DTYPES:
    case(f"one thread c3 {dt}", lambda: A.upsample_bilinear2d(img(2, 3, 7, 9).to(dt), [70, 90],
                                                              False))
torch.set_num_threads(2)
# control: the channels-last loop's corners summed in float64, rounded once
xc = img(2, 17, 7, 9)
def once():
    h = torch.tensor([min(max((i + 0.5) * 0.5 - 0.5, 0.0), 6.0) for i in range(14)],
                     dtype=torch.float64)
    w = torch.tensor([min(max((i + 0.5) * 0.5 - 0.5, 0.0), 8.0) for i in range(18)],
                     dtype=torch.float64)
    h0, w0 = h.floor().long(), w.floor().long()
    h1, w1 = (h0 + 1).clamp(max=6), (w0 + 1).clamp(max=8)
    lh, lw = (h - h0)[:, None], (w - w0)[None, :]
    x64 = xc.double()
    r = lambda a, b: x64[:, :, a][:, :, :, b]
    return ((1 - lh) * (1 - lw) * r(h0, w0) + (1 - lh) * lw * r(h0, w1) +
            lh * (1 - lw) * r(h1, w0) + lh * lw * r(h1, w1)).float()
case("control-once", once)
case("control-reference", lambda: A.upsample_bilinear2d(xc, [14, 18], False))
print(json.dumps(out))
"""


results = sides.under_each_profile(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, 425)


def test_node_is_the_kernels(results):
    _, up = results
    assert up["node torch.float32 False"] == "UpsampleBilinear2DBackward0"


def test_control_is_caught(results):
    _, up = results
    assert up["control-once"]["hex"] != up["control-reference"]["hex"]
