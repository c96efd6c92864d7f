"""reflection_pad{1,2,3}d_backward as kernels, against upstream torch 2.13.0 in a separate process
(and its other CPU profiles). Each input element sums up to 3**k gradients in the tensor's dtype,
in the row-major order of their output positions, so float16/bfloat16 show the order: agreement
is bit for bit. Control: the float16 gradient summed in float32 and rounded once differs."""

from __future__ import annotations

import sides

PROGRAM = r"""
A = torch.ops.aten
torch.manual_seed(0)
out = {}

def case(name, fn):
    out[name] = outcome(fn, bits=True)

def spread(*shape):  # magnitudes over several binades: float16 sums round differently by order
    return torch.randn(*shape) * torch.exp2(torch.randint(-6, 7, shape).float())

PADS = {1: [2, 3], 2: [2, 3, 1, 2], 3: [1, 2, 2, 1, 1, 1]}
for k, shape in ((1, (2, 3, 4)), (2, (2, 3, 3, 4)), (3, (2, 2, 3, 3, 4))):
    x = torch.randn(*shape)
    y = getattr(A, f"reflection_pad{k}d")(x, PADS[k])
    g = spread(*y.shape)
    g.view(-1)[:4] = torch.tensor([float("nan"), float("inf"), -0.0, -float("inf")])
    bw = getattr(A, f"reflection_pad{k}d_backward")
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64):
        case(f"{k}d-{dt}", lambda: bw(g.to(dt), x.to(dt), PADS[k]))
    case(f"{k}d-unbatched", lambda: bw(g[0], x[0], PADS[k]))
    case(f"{k}d-int", lambda: bw(g.int(), x.int(), PADS[k]))
    case(f"{k}d-bool", lambda: bw(g > 0, x > 0, PADS[k]))
    case(f"{k}d-mixed", lambda: bw(g, x.double(), PADS[k]))
    case(f"{k}d-mixed-int", lambda: bw(g.int(), x, PADS[k]))
    case(f"{k}d-negative-pad", lambda: bw(
        getattr(A, f"reflection_pad{k}d")(x, [-1, 2] + PADS[k][2:]), x, [-1, 2] + PADS[k][2:]))
    case(f"{k}d-zero-batch", lambda: bw(torch.randn(0, *y.shape[1:]), torch.randn(0, *shape[1:]),
                                        PADS[k]))
    case(f"{k}d-width", lambda: bw(torch.randn(*y.shape[:-1], y.shape[-1] + 1), x, PADS[k]))
    if k > 1:
        case(f"{k}d-height", lambda: bw(torch.randn(*y.shape[:-2], y.shape[-2] + 1,
                                                    y.shape[-1]), x, PADS[k]))
    case(f"{k}d-transposed", lambda: bw(g.transpose(-1, -2).contiguous().transpose(-1, -2),
                                        x.transpose(-1, -2).contiguous().transpose(-1, -2),
                                        PADS[k]))
    case(f"{k}d-control-f32-once", lambda: bw(g.float(), x.float(), PADS[k]).half())

x = torch.randn(2, 3, 5, 5)
g = spread(2, 3, 8, 9)
cl = torch.channels_last
case("2d-cl-input", lambda: A.reflection_pad2d_backward(g, x.contiguous(memory_format=cl),
                                                        [2, 2, 1, 2]))
case("2d-cl-grad", lambda: A.reflection_pad2d_backward(g.contiguous(memory_format=cl).half(),
                                                       x.half(), [2, 2, 1, 2]))
case("2d-cl-int", lambda: A.reflection_pad2d_backward(g.contiguous(memory_format=cl).int(),
                                                      x.int(), [2, 2, 1, 2]))
case("2d-1d-input", lambda: A.reflection_pad2d_backward(torch.randn(6), torch.randn(5),
                                                        [1, 1, 1, 1]))
x5 = torch.randn(2, 3, 4, 5, 5)
g5 = spread(2, 3, 6, 7, 9)
cl3 = torch.channels_last_3d
case("3d-cl", lambda: A.reflection_pad3d_backward(g5.bfloat16(),
                                                  x5.contiguous(memory_format=cl3).bfloat16(),
                                                  [2, 2, 1, 1, 1, 1]))
case("3d-cl-grad", lambda: A.reflection_pad3d_backward(g5.contiguous(memory_format=cl3), x5,
                                                       [2, 2, 1, 1, 1, 1]))
case("3d-unbatched-cl", lambda: A.reflection_pad3d_backward(
    g5[0], x5[0].contiguous(memory_format=cl), [2, 2, 1, 1, 1, 1]))
case("3d-pad-length", lambda: A.reflection_pad3d_backward(g5, x5, [2, 2, 1, 1]))
case("3d-3d-input", lambda: A.reflection_pad3d_backward(g5[0, 0], x5[0, 0], [2, 2, 1, 1, 1, 1]))
case("3d-dims", lambda: A.reflection_pad3d_backward(g5[0], x5, [2, 2, 1, 1, 1, 1]))
case("3d-depth", lambda: A.reflection_pad3d_backward(spread(2, 3, 7, 7, 9), x5,
                                                     [2, 2, 1, 1, 1, 1]))
case("1d-pad-too-big", lambda: A.reflection_pad1d_backward(torch.randn(2, 3, 15),
                                                           torch.randn(2, 3, 5), [5, 5]))
# NaN bits: two NaNs meeting in one element (which one upstream's compiled add keeps), the
# bfloat16 vector lanes' 0xFFFF against the scalar tail's 0x7FC0; 37 channels leave a tail
for k, fmt in ((2, torch.channels_last), (3, torch.channels_last_3d)):
    spatial = (5, 5) if k == 2 else (3, 5, 5)
    pad = [1, 1, 1, 1] + [0, 0] * (k - 2)
    for dt, it in ((torch.float32, torch.int32), (torch.float64, torch.int64),
                   (torch.float16, torch.int16), (torch.bfloat16, torch.int16)):
        gn = torch.zeros(1, 37, *spatial, dtype=dt)  # NaNs made from bits: no conversion
        gn[(0, slice(None)) + (0,) * k] = torch.tensor(-1, dtype=it).view(dt)
        gn[(0, slice(None)) + (0,) * (k - 2) + (2, 2)] = torch.tensor(
            0x7FC00000, dtype=torch.int64).to(torch.int32).view(torch.float32).to(dt)
        for f in (torch.contiguous_format, fmt):
            case(f"nan-{k}d-{dt}-{f}", lambda: getattr(A, f"reflection_pad{k}d_backward")(
                gn.contiguous(memory_format=f),
                torch.zeros(1, 37, *[s - 2 for s in spatial[-2:]] if k == 2 else (3, 3, 3),
                            dtype=dt), pad))

# gradients through autograd
for mode_shape, pad in (((2, 3, 6), (2, 3)), ((2, 3, 6, 5), (2, 3, 1, 2)),
                        ((1, 2, 4, 5, 6), (1, 2, 2, 1, 3, 1))):
    for dt in (torch.float32, torch.float16, torch.float64):
        xr = torch.randn(*mode_shape, dtype=dt, requires_grad=True)
        w = spread(*F.pad(xr, pad, mode="reflect").shape).to(dt)
        case(f"F.pad-{len(mode_shape)}-{dt}", lambda: torch.autograd.grad(
            (F.pad(xr, pad, mode="reflect") * w).sum(), xr)[0])
xr = torch.randn(2, 3, 6, 5, dtype=torch.float64, requires_grad=True)
case("double-backward", lambda: torch.autograd.grad(torch.autograd.grad(
    (F.pad(xr, (2, 1, 1, 2), mode="reflect") ** 2).sum(), xr, create_graph=True)[0].sum(), xr)[0])
print(json.dumps(out))
"""


results = sides.under_each_profile(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, at_least=60)


def test_control_is_caught(results):
    _, up = results
    for k in (1, 2, 3):
        assert up[f"{k}d-control-f32-once"]["hex"] != up[f"{k}d-torch.float16"]["hex"], k


def test_kernels_are_registered():
    import torch
    from torchnative.csrc.ops.kernel_registry import KERNELS, ensure_loaded

    assert torch.ops.aten.reflection_pad1d_backward  # ours is loaded

    ensure_loaded()
    for k in (1, 2, 3):
        assert f"reflection_pad{k}d_backward" in KERNELS
