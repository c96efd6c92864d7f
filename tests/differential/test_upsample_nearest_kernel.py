"""Nearest-neighbour upsampling as kernels (upsample_nearest.py), against upstream torch 2.13.0 in
separate processes, bit for bit, under this machine's CPU capability and the others: 1-d, 2-d and
3-d, "nearest" and "nearest-exact", float32, float64, float16, bfloat16 and uint8; integer sizes,
non-integer scales (7 -> 10, scale 1.7, recompute_scale_factor), downsampling, both forward
kernels (channels-last: output twice the input is i >> 1 whatever the scale; generic: the scale
in the opmath type), channels-last and non-contiguous inputs, the refused dtypes and sizes with
their messages, the backwards (float16/bfloat16 summed in float32, NaN payloads, the vector and
scalar conversions' NaN bits) and F.interpolate's gradients with their autograd node names.
Controls: "nearest" indices where "nearest-exact" ones are expected, and a gradient summed in
bfloat16 instead of float32."""

from __future__ import annotations

import pytest

import sides
from test_glu_kernel import PROFILES, agree_under

PROGRAM = r"""
NAMES = {1: "upsample_nearest1d", 2: "upsample_nearest2d", 3: "upsample_nearest3d"}
EXACT = {1: "_upsample_nearest_exact1d", 2: "_upsample_nearest_exact2d",
         3: "_upsample_nearest_exact3d"}
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
SHAPES = {1: ((2, 3, 7), [(10,), (14,), (4,), (7,), (1,)]),
          2: ((2, 3, 5, 7), [(10, 14), (7, 10), (3, 4), (5, 7), (1, 1), (131, 9)]),
          3: ((1, 2, 3, 5, 7), [(6, 10, 14), (4, 7, 10), (2, 3, 4)])}

def op(k, exact, suffix=""):
    return getattr(A, (EXACT if exact else NAMES)[k] + suffix)

for k, (shape, sizes) in SHAPES.items():
    x = torch.randn(shape) * 4
    for exact in (False, True):
        tag = f"{k}d {'exact' if exact else 'nearest'}"
        for dt in DTYPES + (torch.uint8,):
            xd = (x.abs() * 30).to(dt) if dt is torch.uint8 else x.to(dt)
            for size in sizes:
                case(f"{tag} {dt} {size}", lambda: op(k, exact)(xd, list(size)))
        for size in sizes:
            sc = [size[d] / shape[2 + d] * 1.05 for d in range(k)]
            case(f"{tag} scales {size}", lambda: op(k, exact)(x, list(size), *sc))
            g = torch.randn(shape[:2] + tuple(size))
            for dt in DTYPES:
                case(f"{tag} backward {dt} {size}", lambda: op(k, exact, "_backward")(
                    g.to(dt), list(size), list(shape)))
            case(f"{tag} backward scales {size}", lambda: op(k, exact, "_backward")(
                g, list(size), list(shape), *sc))
        case(f"{tag} vec scale 1.7", lambda: op(k, exact).vec(x, None, [1.7] * k))
        case(f"{tag} vec scale 0.6", lambda: op(k, exact).vec(x, None, [0.6] * k))
        case(f"{tag} vec size", lambda: op(k, exact).vec(x, [9] * k, None))
        case(f"{tag} vec both", lambda: op(k, exact).vec(x, [9] * k, [2.0] * k))
        case(f"{tag} vec neither", lambda: op(k, exact).vec(x, None, None))
        case(f"{tag} vec short", lambda: op(k, exact).vec(x, None, [2.0] * (k + 1)))
        case(f"{tag} vec nan", lambda: op(k, exact).vec(x, None, [float("nan")] * k))
        case(f"{tag} vec huge", lambda: op(k, exact).vec(x, None, [1e30] * k))
        case(f"{tag} vec negative", lambda: op(k, exact).vec(x, None, [-2.0] * k))
        case(f"{tag} vec tiny", lambda: op(k, exact).vec(x, None, [0.01] * k))
        case(f"{tag} transposed", lambda: op(k, exact)(x.transpose(0, 1), list(sizes[0])))
        case(f"{tag} strided", lambda: op(k, exact)(x[..., ::2], list(sizes[1])))
        case(f"{tag} int", lambda: op(k, exact)(x.int(), list(sizes[0])))
        case(f"{tag} bool", lambda: op(k, exact)(x > 0, list(sizes[0])))
        case(f"{tag} long backward", lambda: op(k, exact, "_backward")(
            torch.ones(shape[:2] + sizes[0], dtype=torch.long), list(sizes[0]), list(shape)))
        case(f"{tag} uint8 backward", lambda: op(k, exact, "_backward")(
            torch.ones(shape[:2] + sizes[0], dtype=torch.uint8), list(sizes[0]), list(shape)))
        case(f"{tag} zero size", lambda: op(k, exact)(x, [0] * k))
        case(f"{tag} wrong rank", lambda: op(k, exact)(x[0], list(sizes[0])))
        case(f"{tag} wrong sizes", lambda: op(k, exact)(x, [3] * (k + 1)))
        case(f"{tag} empty batch", lambda: op(k, exact)(x[:0], list(sizes[0])))
        case(f"{tag} empty batch int", lambda: op(k, exact)(x[:0].int(), list(sizes[0])))
        case(f"{tag} no channels", lambda: op(k, exact)(x[:, :0], list(sizes[0])))
        case(f"{tag} backward grad shape", lambda: op(k, exact, "_backward")(
            torch.ones(shape[:2] + (3,) * k), list(sizes[0]), list(shape)))
        case(f"{tag} backward grad rank", lambda: op(k, exact, "_backward")(
            torch.ones(shape[:2]), list(sizes[0]), list(shape)))
        case(f"{tag} backward input rank", lambda: op(k, exact, "_backward")(
            torch.ones(shape[:2] + sizes[0]), list(sizes[0]), list(shape[1:])))
        case(f"{tag} backward zero input", lambda: op(k, exact, "_backward")(
            torch.ones(shape[:2] + sizes[0]), list(sizes[0]), list(shape[:2]) + [0] * k))
        case(f"{tag} backward empty batch", lambda: op(k, exact, "_backward")(
            torch.ones((0,) + shape[1:2] + sizes[0]), list(sizes[0]), [0] + list(shape[1:])))
        case(f"{tag} backward transposed", lambda: op(k, exact, "_backward")(
            torch.randn((shape[1], shape[0]) + sizes[0]).transpose(0, 1), list(sizes[0]),
            list(shape)))
        case(f"{tag} out=", lambda: op(k, exact, "")(x, list(sizes[0]), out=torch.empty(0)))
        case(f"{tag} out= double", lambda: op(k, exact, "")(
            x, list(sizes[0]), out=torch.empty(0, dtype=torch.float64)))
        case(f"{tag} grad_input= double", lambda: op(k, exact, "_backward").grad_input(
            torch.ones(shape[:2] + sizes[0]), list(sizes[0]), list(shape),
            grad_input=torch.empty(0, dtype=torch.float64)))
        # the generic kernel (2-d output wider than 128, or few channels) against the
        # channels-last one (output exactly twice the input, a scale given that says otherwise)
        ramp = torch.arange(5.0).reshape(1, 1, 1, 5)
        case(f"{tag} x2 by 2.1 small", lambda: op(2, exact)(ramp, [1, 10], None, 2.1))
        case(f"{tag} x2 by 2.1 wide", lambda: op(2, exact)(ramp, [120, 10], None, 2.1))
        case(f"{tag} x2 by 2.1 1d", lambda: op(1, exact)(ramp[0], [10], 2.1))
        case(f"{tag} 7 -> 10 double wide", lambda: op(2, exact)(
            torch.arange(7.0, dtype=torch.float64).reshape(1, 1, 1, 7), [130, 10], None, 1 / 0.7))

# channels-last inputs: the channels-last kernel for more than 3 channels, the generic one
# (keeping the layout) for fewer; the backward's channels-last kernel and its conversions
for c in (2, 4, 35):
    for exact in (False, True):
        tag = f"cl{c} {'exact' if exact else 'nearest'}"
        x4 = torch.randn(2, c, 5, 6).contiguous(memory_format=torch.channels_last)
        x5 = torch.randn(1, c, 3, 4, 5).contiguous(memory_format=torch.channels_last_3d)
        for dt in DTYPES + (torch.uint8,):
            case(f"{tag} 2d {dt}", lambda: op(2, exact)(x4.to(dt), [10, 9]))
            case(f"{tag} 2d wide {dt}", lambda: op(2, exact)(x4.to(dt), [70, 80]))
            case(f"{tag} 3d {dt}", lambda: op(3, exact)(x5.to(dt), [6, 7, 9]))
            g4 = torch.randn(2, c, 10, 12).to(dt).contiguous(memory_format=torch.channels_last)
            g5 = torch.randn(1, c, 6, 8, 10).to(dt).contiguous(
                memory_format=torch.channels_last_3d)
            if dt is not torch.uint8:
                case(f"{tag} 2d backward {dt}", lambda: op(2, exact, "_backward")(
                    g4, [10, 12], [2, c, 5, 6]))
                case(f"{tag} 3d backward {dt}", lambda: op(3, exact, "_backward")(
                    g5, [6, 8, 10], [1, c, 3, 4, 5]))
        case(f"{tag} 2d int", lambda: op(2, exact)(x4.int(), [10, 9]))
        case(f"{tag} 3d int", lambda: op(3, exact)(x5.int(), [6, 7, 9]))
        case(f"{tag} backward int", lambda: op(2, exact, "_backward")(
            torch.ones(2, c, 10, 12, dtype=torch.int32).contiguous(
                memory_format=torch.channels_last), [10, 12], [2, c, 5, 6]))
        case(f"{tag} 3d backward int", lambda: op(3, exact, "_backward")(
            torch.ones(1, c, 6, 8, 10, dtype=torch.int32).contiguous(
                memory_format=torch.channels_last_3d), [6, 8, 10], [1, c, 3, 4, 5]))

# NaN gradients: payloads, NaN + NaN into one input element, the float16/bfloat16 conversions
nan_a = torch.tensor([0x7FC00001], dtype=torch.int32).view(torch.float32)
nan_b = torch.tensor([-0x3FFFFFFE], dtype=torch.int32).view(torch.float32)  # 0xC0000002
for c, fmt in ((3, torch.contiguous_format), (37, torch.channels_last)):
    g = torch.randn(2, c, 8, 10)
    g[0, :, 0, 0] = nan_a[0]
    g[0, :, 0, 1] = nan_b[0]
    g[1, :, 2, 4] = nan_b[0]
    g[1, :, 3, 4] = float("inf")
    g[1, :, 3, 5] = -float("inf")
    g[1, :, 6, 6] = -0.0
    for dt in DTYPES:
        gd = g.to(dt).contiguous(memory_format=fmt)
        case(f"nan backward {c} {dt}", lambda: A.upsample_nearest2d_backward(
            gd, [8, 10], [2, c, 4, 5]))
        case(f"nan backward exact {c} {dt}", lambda: A._upsample_nearest_exact2d_backward(
            gd, [8, 10], [2, c, 3, 7]))
    case(f"nan forward {c}", lambda: A.upsample_nearest2d(g.contiguous(memory_format=fmt),
                                                          [11, 13]))
case("nan backward 1d", lambda: A.upsample_nearest1d_backward(g[0], [10], [3, 37, 5]))
# many terms per input element (an upsampling by 40 in every dimension)
case("backward x40", lambda: A.upsample_nearest2d_backward(torch.randn(1, 2, 80, 120),
                                                           [80, 120], [1, 2, 2, 3]))
case("backward x40 bf16", lambda: A._upsample_nearest_exact2d_backward(
    torch.randn(1, 2, 80, 120).bfloat16(), [80, 120], [1, 2, 2, 3]))
case("backward x40 nan", lambda: A.upsample_nearest1d_backward(
    torch.cat([nan_a, nan_b, torch.randn(78)]).reshape(1, 1, 80), [80], [1, 1, 2]))

# F.interpolate: the .vec composites, recompute_scale_factor, autograd's nodes and gradients
for mode in ("nearest", "nearest-exact"):
    for k, shape in ((1, (2, 3, 7)), (2, (1, 8, 16, 16)), (3, (1, 2, 3, 4, 5))):
        for kw in (dict(scale_factor=2), dict(size=(10,) * k), dict(scale_factor=1.7),
                   dict(scale_factor=1.7, recompute_scale_factor=True), dict(scale_factor=0.5)):
            for dt in (torch.float32, torch.bfloat16):
                tag = f"interpolate {mode} {k}d {kw} {dt}"
                xr = torch.randn(shape).to(dt).requires_grad_()
                case(tag, lambda: F.interpolate(xr, mode=mode, **kw))
                def grads():
                    y = F.interpolate(xr, mode=mode, **kw)
                    w = torch.randn(y.shape).to(dt)
                    return y.grad_fn.name(), torch.autograd.grad((y * w).sum(), xr)[0]
                case(tag + " grad", grads)
xcl = torch.randn(1, 8, 16, 16).contiguous(memory_format=torch.channels_last).requires_grad_()
case("interpolate channels-last grad", lambda: torch.autograd.grad(
    F.interpolate(xcl, scale_factor=2).pow(2).sum(), xcl)[0])
case("interpolate uint8", lambda: F.interpolate((torch.rand(1, 3, 7, 9) * 255).to(torch.uint8),
                                                size=(10, 4), mode="nearest-exact"))

# controls: "nearest" where "nearest-exact" is expected; a gradient summed in bfloat16
case("control-nearest", lambda: A.upsample_nearest1d(torch.arange(7.0).reshape(1, 1, 7), [10]))
case("control-exact", lambda: A._upsample_nearest_exact1d(
    torch.arange(7.0).reshape(1, 1, 7), [10]))
"""

# a gradient summed in bfloat16 (rounded after every add) instead of float32
CONTROL = r"""
gb = (torch.randn(1, 1, 1, 64) * 100).bfloat16()
def bf16_sum():
    acc = torch.zeros(1, 1, 1, 2).bfloat16()
    for j in range(32):
        acc = acc + gb.view(1, 1, 1, 2, 32)[..., j]
    return acc
print(json.dumps({"bf16": outcome(bf16_sum, bits=True), "f32": outcome(
    lambda: torch.ops.aten.upsample_nearest2d_backward(gb, [1, 64], [1, 1, 1, 2]), bits=True)}))
"""


@pytest.mark.parametrize("profile", PROFILES)
def test_bits_agree_with_upstream(profile):
    agree_under(profile, PROGRAM, "control-nearest", "control-exact", 700)


def test_bf16_control_is_caught():
    """Summing the bfloat16 gradient in bfloat16 (rounding after every add) would differ."""
    ours, up = sides.on_both("torch.manual_seed(0)\n" + CONTROL)
    assert ours == up and up["bf16"] != up["f32"]


def test_interpolate_records_upstream_nodes():
    import torch
    import torch.nn.functional as F

    x = torch.randn(1, 8, 16, 16, requires_grad=True)
    assert F.interpolate(x, scale_factor=2).grad_fn.name() == "UpsampleNearest2DBackward0"
    assert F.interpolate(x[0], scale_factor=2, mode="nearest-exact").grad_fn.name() == \
        "UpsampleNearestExact1DBackward0"
    assert F.interpolate(x[None], scale_factor=2).grad_fn.name() == "UpsampleNearest3DBackward0"
