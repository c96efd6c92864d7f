"""grid_sampler_2d and grid_sampler_2d_backward (F.grid_sample on 4-d inputs) as kernels,
against upstream torch 2.13.0 in a separate process under every CPU capability: bilinear and
nearest x zeros/border/reflection x align_corners, float32/float64, grids reaching far outside
[-1, 1] (several reflections), NaN and infinite coordinates, a channels-last input, strided
grids (the slice iterator's three cases), a dense grid on a small input (many scatter-adds into
each gradient element, so their order shows), the checks' messages, and the gradients through
F.grid_sample with the node autograd records. Bicubic stays on the decomposition (its fused
multiply-adds under AVX2 are not reproduced); its gradient node is checked, not its bits.
Control: the float32 sample computed in float64 and rounded once is caught."""

from __future__ import annotations

import pytest

import sides

PROGRAM = r"""
import math
import torch.nn.functional as F
A = torch.ops.aten
out = {}

def case(name, fn):
    out[name] = outcome(fn, bits=True)

def det(f, shape, dt):
    # inputs from Python's math in float64: upstream's own random and transcendental kernels
    # change bits between capabilities
    n = math.prod(shape)
    return torch.tensor([f(i) for i in range(n)], dtype=torch.float64).reshape(shape).to(dt)

MODES = {"bilinear": 0, "nearest": 1}
PADS = {"zeros": 0, "border": 1, "reflection": 2}
for dt in (torch.float32, torch.float64):
    x = det(lambda i: math.sin(1.7 * i) * 2, (2, 3, 5, 7), dt)
    grid = det(lambda i: 3.5 * math.sin(0.37 * i + 0.2), (2, 4, 6, 2), dt)
    wide = grid * 9
    odd = grid.clone()
    odd[0, 0, 0, 0] = float("nan")
    odd[0, 1, 1, 1] = float("inf")
    odd[1, 2, 3, 0] = -float("inf")
    odd[1, 3, 0, 1] = 1e10
    odd[1, 0, 5, 0] = 1.0
    odd[0, 2, 2, 1] = -1.0
    go = det(lambda i: math.cos(0.9 * i) - 0.3, (2, 3, 4, 6), dt)
    xl = x.contiguous(memory_format=torch.channels_last)
    gperm = grid.permute(0, 3, 1, 2).contiguous().permute(0, 2, 3, 1)
    grows = torch.cat([grid, grid], 2)[:, :, ::2]
    for mode, m in MODES.items():
        for pad, p in PADS.items():
            for ac in (False, True):
                k = f"{dt} {mode} {pad} {ac}"
                for gname, g in (("grid", grid), ("wide", wide), ("odd", odd)):
                    case(f"{k} fwd {gname}",
                         lambda: F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac))
                case(f"{k} fwd channels-last",
                     lambda: A.grid_sampler_2d(xl, wide, m, p, ac))
                # NaN (and, reflecting, inf) read out of bounds in upstream's backward when the
                # padding keeps the index inside: undefined there, so only zeros sees them
                for gname, g in (("grid", grid), ("wide", wide), ("perm", gperm),
                                 ("rows", grows)) + ((("odd", odd),) if pad == "zeros" else ()):
                    for mask in ([True, True], [False, True]):
                        case(f"{k} bwd {gname} {mask[0]}",
                             lambda: A.grid_sampler_2d_backward(go, x, g, m, p, ac, mask))
                case(f"{k} bwd channels-last",
                     lambda: A.grid_sampler_2d_backward(go, xl, grid, m, p, ac, [True, True]))
    small = det(lambda i: math.sin(i), (1, 2, 3, 3), dt)
    dense = det(lambda i: 1.01 * math.cos(-1.1 + 2.15 * i / 369), (1, 5, 37, 2), dt)
    gd = det(lambda i: math.exp(-3 + 5.9 * i / 369), (1, 2, 5, 37), dt)
    for mode, m in MODES.items():
        for pad, p in PADS.items():
            case(f"{dt} dense {mode} {pad}",
                 lambda: A.grid_sampler_2d_backward(gd, small, dense, m, p, False, [True, True]))
    # gradients through F.grid_sample, with the node autograd records
    for mode in ("bilinear", "nearest"):
        def grads():
            xi = x.clone().requires_grad_()
            gi = wide.clone().requires_grad_()
            y = F.grid_sample(xi, gi, mode=mode, padding_mode="reflection", align_corners=False)
            y.backward(go)
            return [y.grad_fn.name(), xi.grad, gi.grad]
        case(f"{dt} autograd {mode}", grads)

x = det(lambda i: math.sin(i), (1, 1, 3, 3), torch.float32)
z = torch.zeros
errors = {
    "rank": lambda: A.grid_sampler_2d(x, z(1, 1, 1, 1, 2), 0, 0, False),
    "batch": lambda: A.grid_sampler_2d(x, z(2, 1, 1, 2), 0, 0, False),
    "last dim": lambda: A.grid_sampler_2d(x, z(1, 1, 1, 3), 0, 0, False),
    "empty": lambda: A.grid_sampler_2d(z(1, 1, 0, 3), z(1, 1, 1, 2), 0, 0, False),
    "dtype": lambda: A.grid_sampler_2d(x, z(1, 1, 1, 2, dtype=torch.float64), 0, 0, False),
    "long": lambda: A.grid_sampler_2d(x.long(), z(1, 1, 1, 2).long(), 0, 0, False),
    "bwd dtype": lambda: A.grid_sampler_2d_backward(z(1, 1, 1, 1), x, z(1, 1, 1, 2).double(),
                                                    0, 0, False, [True, True]),
    "bwd grad dtype": lambda: A.grid_sampler_2d_backward(z(1, 1, 1, 1).double(), x,
                                                         z(1, 1, 1, 2), 0, 0, False, [True, True]),
    "bwd long": lambda: A.grid_sampler_2d_backward(z(1, 1, 1, 1).long(), x.long(),
                                                   z(1, 1, 1, 2).long(), 0, 0, False, [True, True]),
    "empty grid": lambda: A.grid_sampler_2d(x, z(1, 0, 2, 2), 0, 0, False),
    "empty grid bwd": lambda: A.grid_sampler_2d_backward(z(1, 1, 0, 2), x, z(1, 0, 2, 2),
                                                         0, 0, False, [True, True]),
}
for name, fn in errors.items():
    case(name, fn)
xb = det(lambda i: math.sin(i), (1, 2, 4, 5), torch.float32).requires_grad_()
gb = det(lambda i: math.cos(i), (1, 3, 3, 2), torch.float32).requires_grad_()
out["bicubic node"] = F.grid_sample(xb, gb, mode="bicubic").grad_fn.name()
# control: the float32 sample computed in float64 and rounded once
xf = det(lambda i: math.sin(1.7 * i) * 2, (2, 3, 5, 7), torch.float32)
gf = det(lambda i: 3.5 * math.sin(0.37 * i + 0.2), (2, 4, 6, 2), torch.float32)
case("control-float64",
     lambda: F.grid_sample(xf.double(), gf.double(), align_corners=False).float())
case("control-ref", lambda: F.grid_sample(xf, gf, align_corners=False))
print(json.dumps(out))
"""


@pytest.fixture(scope="module", params=sides.PROFILES)
def results(request):
    # both sides under each CPU profile: the fused multiply-adds come and go with the build
    return sides.on_both_under(PROGRAM, request.param)


def test_bits_agree_with_upstream_and_the_control_is_caught(results):
    ours, up = results
    sides.assert_same(ours, up, 350)
    assert up["control-float64"]["hex"] != up["control-ref"]["hex"]
    assert up["bicubic node"] == "GridSampler2DBackward0"
