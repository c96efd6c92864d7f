"""im2col (F.unfold) and col2im (F.fold) as kernels, against upstream torch 2.13.0 in a separate
process (and its other CPU profiles). im2col copies and col2im sums overlapping patches in the
order of upstream's loop (kernel offsets row-major) in the tensor's dtype, so agreement is bit for
bit; float16/bfloat16 sums over several binades show the order. Control: the float16 fold summed
in float32 and rounded once differs."""

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

x = spread(2, 3, 6, 7)
x.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), -0.0])
GEOMETRY = {"plain": ([2, 3], [1, 1], [0, 0], [1, 1]), "padded": ([3, 3], [1, 1], [1, 2], [1, 1]),
            "strided": ([2, 2], [1, 1], [1, 0], [2, 3]), "dilated": ([2, 3], [2, 1], [1, 1], [1, 2])}
for geo, (k, d, p, s) in GEOMETRY.items():
    cols = A.im2col(x, k, d, p, s)
    base = spread(*cols.shape)
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64,
               torch.bool):
        case(f"im2col-{geo}-{dt}", lambda: A.im2col(x.to(dt), k, d, p, s))
        case(f"col2im-{geo}-{dt}", lambda: A.col2im(base.to(dt), [6, 7], k, d, p, s))
    case(f"col2im-{geo}-control-f32-once",
         lambda: A.col2im(base.half().float(), [6, 7], k, d, p, s).half())
    case(f"im2col-{geo}-unbatched", lambda: A.im2col(x[0], k, d, p, s))
    case(f"col2im-{geo}-unbatched", lambda: A.col2im(cols[0], [6, 7], k, d, p, s))
k, d, p, s = GEOMETRY["padded"]
cols = A.im2col(x, k, d, p, s)
case("im2col-channels-last", lambda: A.im2col(x.contiguous(memory_format=torch.channels_last),
                                              k, d, p, s))
case("im2col-transposed", lambda: A.im2col(x.transpose(2, 3), k, d, p, s))
case("col2im-transposed", lambda: A.col2im(cols.transpose(1, 2).contiguous().transpose(1, 2),
                                           [6, 7], k, d, p, s))
case("col2im-nan-pairs", lambda: A.col2im(
    torch.full(cols.shape, float("nan")).index_fill(2, torch.tensor([0]), -float("nan")),
    [6, 7], k, d, p, s))
case("im2col-zero-batch", lambda: A.im2col(torch.randn(0, 3, 6, 7), k, d, p, s))
case("col2im-zero-batch", lambda: A.col2im(torch.randn(0, 27, 42), [6, 7], k, d, p, s))
for dt in (torch.int32, torch.int64, torch.uint8):
    case(f"im2col-{dt}", lambda: A.im2col(x.to(dt), k, d, p, s))
    case(f"col2im-{dt}", lambda: A.col2im(cols.to(dt), [6, 7], k, d, p, s))
# argument checks, in upstream's order
case("im2col-kernel", lambda: A.im2col(x, [0, 3], d, p, s))
case("im2col-dilation", lambda: A.im2col(x, k, [1, 0], p, s))
case("im2col-padding", lambda: A.im2col(x, k, d, [-1, 0], s))
case("im2col-stride", lambda: A.im2col(x, k, d, p, [0, 0]))
case("im2col-length", lambda: A.im2col(x, [2], d, p, s))
case("im2col-too-big", lambda: A.im2col(x, [9, 3], d, [0, 0], s))
case("im2col-2d", lambda: A.im2col(x[0, 0], k, d, p, s))
case("im2col-empty-dim", lambda: A.im2col(torch.randn(2, 0, 6, 7), k, d, p, s))
case("col2im-output-size", lambda: A.col2im(cols, [6], k, d, p, s))
case("col2im-kernel", lambda: A.col2im(cols, [6, 7], [3, -3], d, p, s))
case("col2im-stride", lambda: A.col2im(cols, [6, 7], k, d, p, [1, 0]))
case("col2im-divisible", lambda: A.col2im(cols[:, :26], [6, 7], k, d, p, s))
case("col2im-blocks", lambda: A.col2im(cols[:, :, :41], [6, 7], k, d, p, s))
case("col2im-1d", lambda: A.col2im(torch.randn(12), [6, 7], [2, 2], d, [0, 0], s))
case("col2im-non-positive", lambda: A.col2im(torch.randn(2, 9, 0), [1, 1], [3, 3], d, [0, 0], s))
# gradients through autograd
for dt in (torch.float32, torch.float64, torch.float16):
    xr = x.to(dt).nan_to_num().requires_grad_()
    w = spread(*cols.shape).to(dt)
    case(f"F.unfold-grad-{dt}", lambda: torch.autograd.grad(
        (F.unfold(xr, k, d, p, s) * w).sum(), xr)[0])
    cr = spread(*cols.shape).to(dt).requires_grad_()
    wf = spread(2, 3, 6, 7).to(dt)
    case(f"F.fold-grad-{dt}", lambda: torch.autograd.grad(
        (F.fold(cr, (6, 7), k, d, p, s) * wf).sum(), cr)[0])
print(json.dumps(out))
"""


results = sides.under_each_profile(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, at_least=80)


def test_control_is_caught(results):
    _, up = results
    for geo in ("padded", "dilated"):  # (the strided patches do not overlap)
        assert up[f"col2im-{geo}-control-f32-once"]["hex"] != \
            up[f"col2im-{geo}-torch.float16"]["hex"], geo
