"""hardshrink, softshrink, hardshrink_backward and softshrink_backward (nn_shrink.py) against
upstream torch 2.13.0 in separate processes, both sides under this CPU's capability and each
other one it runs. Bit for bit: values (the dead zone's zero: +0 from the SIMD loop and an
AVX512 build's compiler-vectorized remainder, ``x * 0`` -- signed, a NaN passed on -- from the
scalar loop; which loop a NaN x took in the backward: the scalar loop keeps grad there),
float16/bfloat16 NaN patterns, lambd's conversion and range checks with their messages, dtypes,
promotion, strides, out=/grad_input=, autograd. Control: softshrink's dead zone as +0 everywhere
(the SIMD loop's rule), caught on a run the scalar loop computes."""

from __future__ import annotations

import pytest

import sides

PROGRAM = r"""
torch.manual_seed(0)
A, out = torch.ops.aten, {}
case = lambda name, fn: out.__setitem__(name, outcome(fn, bits=True))  # noqa: E731
x = torch.randn(5, 37)
special = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 0.5, -0.5, 0.49999997, 1.0,
           -1.0, -0.3, 0.3]
x.view(-1)[:len(special)] = torch.tensor(special)
x.view(-1)[-len(special):] = torch.tensor(special)
g = torch.randn(5, 37)
g.view(-1)[3:8] = torch.tensor([float("nan"), 0.0, -0.0, float("inf"), 1e-38])
g.view(-1)[-9:-6] = torch.tensor([float("nan"), -float("nan"), -0.0])
for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    xd, gd = x.to(dt), g.to(dt)
    for lam in (0.5, 0.0, 1.1, 3):
        case(f"hs {dt} {lam}", lambda: F.hardshrink(xd, lam))
        case(f"ss {dt} {lam}", lambda: F.softshrink(xd, lam))
        case(f"hsb {dt} {lam}", lambda: A.hardshrink_backward(gd, xd, lam))
        case(f"ssb {dt} {lam}", lambda: A.softshrink_backward(gd, xd, lam))
    case(f"hs inf {dt}", lambda: F.hardshrink(xd, float("inf")))
    case(f"ss big {dt}", lambda: F.softshrink(x.repeat(7, 3).to(dt), 0.4))
    case(f"hs big {dt}", lambda: F.hardshrink(x.repeat(7, 3).to(dt), 0.4))
    case(f"hsb big {dt}", lambda: A.hardshrink_backward(g.repeat(7, 3).to(dt),
                                                        x.repeat(7, 3).to(dt), 0.4))
    case(f"ss t {dt}", lambda: F.softshrink(xd.t(), 0.4))
    case(f"hsb t {dt}", lambda: A.softshrink_backward(gd.t().contiguous(), xd.t(), 0.4))
    for n in (1, 3, 7, 17, 31, 33, 57, 65, 185):  # every place of the loops' vectors and tails
        xn = torch.full((n,), float("nan")).to(dt)
        xn[::3] = 0.7
        xn[1::3] = -0.3
        gn = torch.linspace(-1, 1, n).to(dt)
        gn[1::4] = float("nan")
        case(f"hsb nans {n} {dt}", lambda: A.hardshrink_backward(gn, xn, 0.5))
        case(f"ssb nans-exp {n} {dt}", lambda: A.softshrink_backward(gn[:1].expand(n), xn, 0.5))
        case(f"hs nans {n} {dt}", lambda: F.hardshrink(xn, 0.5))
        case(f"ss nans {n} {dt}", lambda: F.softshrink(xn, 0.5))
        case(f"ss 2d {n} {dt}", lambda: F.softshrink(xn.repeat(3, 1), 0.5))
        case(f"ss 2d-t {n} {dt}", lambda: F.softshrink(xn.repeat(3, 1).t(), 0.5))
for dt in (torch.int64, torch.bool, torch.complex64):
    case(f"hs {dt}", lambda: F.hardshrink(x.to(dt)))
    case(f"ss {dt}", lambda: F.softshrink(x.to(dt)))
    case(f"ss neg {dt}", lambda: F.softshrink(x.to(dt), -1))
    case(f"hsb {dt}", lambda: A.hardshrink_backward(g.to(dt), x.to(dt), 0.5))
for lam in (-0.5, -1, -1e-5, float("inf"), float("nan")):
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        case(f"ss lambd {lam} {dt}", lambda: F.softshrink(x.to(dt), lam))
case("ss lambd over half", lambda: F.softshrink(x.half(), 70000))
case("ss lambd over half2", lambda: F.softshrink(x.half(), 1e6))
case("ss lambd half max", lambda: F.softshrink(x.half(), 65504))
case("ss lambd f32 over", lambda: F.softshrink(x, 1e300))
case("hs overflow", lambda: F.hardshrink(x.half(), 1e6))
case("hs overflow f32", lambda: F.hardshrink(x, 1e300))
case("hs negative", lambda: F.hardshrink(x, -0.5))
case("hsb overflow", lambda: A.hardshrink_backward(g.half(), x.half(), 1e6))
case("hsb negative", lambda: A.softshrink_backward(g, x, -0.5))
case("hsb mixed", lambda: A.hardshrink_backward(g.double(), x, 0.5))
case("hsb mixed2", lambda: A.hardshrink_backward(g.half(), x.bfloat16(), 0.5))
case("hsb mixed3", lambda: A.hardshrink_backward(g, x.half(), 0.5))
case("hsb bcast", lambda: A.hardshrink_backward(g[:, :1], x, 0.5))
case("hsb bcast-x", lambda: A.hardshrink_backward(g, x[:1], 0.5))
case("hsb 0dim", lambda: A.hardshrink_backward(g[0, 0], x, 0.5))
case("hsb transposed", lambda: A.hardshrink_backward(g.t(), x.t(), 0.5))
case("hsb mismatch", lambda: A.hardshrink_backward(torch.randn(3), torch.randn(4), 0.5))
case("hs transposed", lambda: F.hardshrink(x.t(), 0.5))
case("ss 0dim", lambda: F.softshrink(torch.tensor(-0.25), 0.5))
case("hs 0dim", lambda: F.hardshrink(torch.tensor(-0.25), 0.5))
cl = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
case("hs cl", lambda: F.hardshrink(cl))
case("ss cl", lambda: F.softshrink(cl))
case("hsb cl", lambda: A.softshrink_backward(torch.randn(2, 3, 4, 5), cl, 0.5))
case("hs empty", lambda: F.hardshrink(torch.randn(0, 3)))
case("ss empty", lambda: F.softshrink(torch.randn(0, 3)))
case("hs out", lambda: torch.hardshrink(x, 0.5, out=torch.empty(0)))
case("ss out", lambda: A.softshrink.out(x, 0.5, out=torch.empty(0)))
case("hs out double", lambda: A.hardshrink.out(x, 0.5, out=torch.empty(3, dtype=torch.float64)))
case("ss out half", lambda: A.softshrink.out(x, 0.5, out=torch.empty(0, dtype=torch.half)))
case("ssb grad_input", lambda: A.softshrink_backward.grad_input(g, x, 0.5,
                                                                grad_input=torch.empty(0)))
case("hsb grad_input", lambda: A.hardshrink_backward.grad_input(g, x, 0.5,
                                                                grad_input=torch.empty(0)))
case("ss inplace", lambda: F.softshrink(x.clone(), 0.5))
xf = torch.randn(5, 37)   # NaNs in both loops: autograd runs the shrink_backward kernels
xf.view(-1)[:6] = torch.tensor([0.0, -0.0, 0.5, -0.5, float("inf"), -float("inf")])
xf.view(-1)[[7, 40, 183, 184]] = float("nan")
for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    xr = xf.to(dt).requires_grad_()
    case(f"hs autograd {dt}", lambda: torch.autograd.grad((F.hardshrink(xr) * g.to(dt)).sum(),
                                                          xr)[0])
    case(f"ss autograd {dt}", lambda: torch.autograd.grad(
        (F.softshrink(xr, 0.3) * g.to(dt)).sum(), xr)[0])
    if dt is torch.float64:   # double backward: the shrink_backward formulas' own gradients
        case(f"hs gradgrad {dt}", lambda: torch.autograd.grad(torch.autograd.grad(
            (F.hardshrink(xr) ** 2 * g.to(dt)).sum(), xr, create_graph=True)[0].sum(), xr)[0])
        case(f"ss gradgrad {dt}", lambda: torch.autograd.grad(torch.autograd.grad(
            (F.softshrink(xr, 0.3) ** 2 * g.to(dt)).sum(), xr, create_graph=True)[0].sum(),
            xr)[0])
    case(f"hs module {dt}", lambda: torch.nn.Hardshrink(0.7)(x.to(dt)))
    case(f"ss module {dt}", lambda: torch.nn.Softshrink(0.7)(x.to(dt)))
# control: the dead zone as +0 everywhere, on a short run the scalar loop computes
xs = torch.tensor([-0.3, 0.3, -0.0, 0.7, -0.7])
case("control-softshrink-zero", lambda: torch.where(xs.abs() > 0.5, xs - xs.sign() * 0.5,
                                                    torch.zeros(5)))
case("softshrink-short", lambda: F.softshrink(xs, 0.5))
print(json.dumps(out))
"""

@pytest.mark.parametrize("profile", sides.PROFILES)
def test_bits_agree_with_upstream(profile):
    """Both sides under one CPU capability (None: this machine's); the kernels' registration is
    checked in test_loss_smooth_kernels.py."""
    ours, up = sides.on_both_under(PROGRAM, profile)
    sides.assert_same(ours, up, at_least=380)
    assert up["control-softshrink-zero"]["hex"] != up["softshrink-short"]["hex"]
