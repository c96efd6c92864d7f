"""smooth_l1_loss, huber_loss and their backward kernels (nn_loss_smooth.py) against upstream
torch 2.13.0 in separate processes, both sides under this CPU's capability and each other one
it runs. Bit for bit: values (reductions none/mean/sum through the mean and sum kernels; beta
0, fractional, larger than the data; float16/bfloat16 rounding as each measured loop rounds),
the SIMD/scalar split of the backward loops (``x / beta`` against ``x * grad / beta`` in double),
NaN/inf inputs and grads -- a NaN grad's sign as the compiled scalar remainder leaves it, at
every place of the runs --, transposed/broadcast/channels-last layouts, dtype promotion and its
refusals, out=/grad_input=, autograd through F.smooth_l1_loss/F.huber_loss. Control: the
backward's SIMD formula everywhere, caught on a layout the scalar loop runs."""

from __future__ import annotations

import sides

PROGRAM = r"""
torch.manual_seed(0)
A, out = torch.ops.aten, {}
case = lambda name, fn: out.__setitem__(name, outcome(fn, bits=True))  # noqa: E731
x = torch.randn(5, 37) * 2
t = torch.randn(5, 37) * 2
special = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 0.5, -0.5, 1.0, -1.0, 1e-30, 3.0]
x.view(-1)[:len(special)] = torch.tensor(special)
x.view(-1)[-len(special):] = torch.tensor(special)
g = torch.randn(5, 37)
g.view(-1)[20:23] = torch.tensor([float("nan"), 0.0, float("inf")])
g.view(-1)[-7:-4] = torch.tensor([float("nan"), -float("nan"), float("inf")])
for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    xd, td, gd = x.to(dt), t.to(dt), g.to(dt)
    for red in (0, 1, 2):
        gr = gd if red == 0 else gd[0, 0]
        for b in (1.0, 0.3, 0.0, 2.7):
            case(f"sl1 {dt} {red} {b}", lambda: A.smooth_l1_loss(xd, td, red, b))
            case(f"sl1b {dt} {red} {b}", lambda: A.smooth_l1_loss_backward(gr, xd, td, red, b))
            if b > 0:
                case(f"hub {dt} {red} {b}", lambda: A.huber_loss(xd, td, red, b))
                case(f"hubb {dt} {red} {b}", lambda: A.huber_loss_backward(gr, xd, td, red, b))
    xb, tb, gb = (v.repeat(9, 5).to(dt) for v in (x, t, g))
    case(f"sl1 big {dt}", lambda: A.smooth_l1_loss(xb, tb, 1, 0.7))
    case(f"hub big {dt}", lambda: A.huber_loss(xb, tb, 2, 0.7))
    case(f"sl1b big {dt}", lambda: A.smooth_l1_loss_backward(gb, xb, tb, 0, 0.7))
    case(f"hubb big {dt}", lambda: A.huber_loss_backward(gb, xb, tb, 0, 0.7))
    case(f"sl1 t {dt}", lambda: A.smooth_l1_loss(xd.t(), td.t(), 0, 0.7))
    case(f"hub t {dt}", lambda: A.huber_loss(xd.t(), td.t(), 0, 0.7))
    case(f"hub t-input {dt}", lambda: A.huber_loss(xd.t(), td.t().contiguous(), 0, 0.7))
    case(f"sl1b t {dt}", lambda: A.smooth_l1_loss_backward(gd.t(), xd.t(), td.t(), 0, 0.7))
    case(f"hubb t {dt}", lambda: A.huber_loss_backward(gd.t(), xd.t(), td.t(), 0, 0.7))
    case(f"sl1b t-grad {dt}", lambda: A.smooth_l1_loss_backward(gd.t().contiguous().t(), xd,
                                                                td, 0, 0.7))
    case(f"sl1 bcast {dt}", lambda: A.smooth_l1_loss(xd, td[:1], 0, 0.7))
    case(f"hub bcast {dt}", lambda: A.huber_loss(xd, td[:1], 0, 0.7))
    case(f"sl1b bcast {dt}", lambda: A.smooth_l1_loss_backward(gd[:, :1], xd, td[:1], 0, 0.7))
    case(f"hubb bcast {dt}", lambda: A.huber_loss_backward(gd[:, :1], xd, td[:1], 0, 0.7))
    for n in (1, 2, 3, 5, 7, 9, 18, 31, 33, 57, 70, 185):  # a NaN grad at every place of the runs
        xn = torch.linspace(-3, 3, n).to(dt)
        gn = torch.full((n,), float("nan")).to(dt)
        gn[::5] = 1.5
        case(f"sl1b nans {n} {dt}", lambda: A.smooth_l1_loss_backward(gn, xn, xn * 0, 0, 0.7))
        case(f"hubb nans {n} {dt}", lambda: A.huber_loss_backward(gn, xn, xn * 0, 0, 0.7))
        case(f"sl1b nan-x {n} {dt}", lambda: A.smooth_l1_loss_backward(
            gn * 0 + 1, torch.full((n,), float("nan")).to(dt), xn, 1, 0.7))
cl = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
c2 = torch.randn(2, 3, 4, 5)
for name, op in (("sl1", A.smooth_l1_loss), ("hub", A.huber_loss)):
    case(f"{name} cl", lambda: op(cl, c2, 0, 0.5))
    case(f"{name} cl both", lambda: op(cl, cl * 2, 0, 0.5))
    case(f"{name} empty mean", lambda: op(torch.randn(0, 3), torch.randn(0, 3), 1, 0.5))
    case(f"{name} empty sum", lambda: op(torch.randn(0, 3), torch.randn(0, 3), 2, 0.5))
    case(f"{name} 0dim", lambda: op(torch.tensor(1.5), torch.tensor(-0.25), 0, 0.5))
    case(f"{name} mixed", lambda: op(x.double(), t, 0, 0.5))
    case(f"{name} mixed2", lambda: op(x, t.double(), 1, 0.5))
    case(f"{name} mixed-reduced", lambda: op(x.half(), t.bfloat16(), 0, 0.5))
    case(f"{name} half-float", lambda: op(x.half(), t, 0, 0.5))
    case(f"{name} mismatch", lambda: op(torch.randn(3), torch.randn(4), 0, 0.5))
    case(f"{name} target bigger", lambda: op(torch.randn(3), torch.randn(2, 3), 0, 0.5))
    case(f"{name} negative", lambda: op(x, t, 1, -0.5))
    case(f"{name} zero", lambda: op(x, t, 1, 0.0))
    for dt in (torch.int64, torch.bool, torch.complex64):
        case(f"{name} {dt}", lambda: op(x.to(dt), t.to(dt), 0, 0.5))
    case(f"{name} int-float", lambda: op(x.long(), t, 0, 0.5))
    case(f"{name} out", lambda: op(x, t, 0, 0.5, out=torch.empty(0)) if name == "sl1" else
         A.huber_loss.out(x, t, 0, 0.5, out=torch.empty(0)))
    case(f"{name} out mean", lambda: A.smooth_l1_loss.out(x, t, 1, 0.5, out=torch.empty(3))
         if name == "sl1" else A.huber_loss.out(x, t, 1, 0.5, out=torch.empty(3)))
    case(f"{name} out double", lambda: A.smooth_l1_loss.out(x, t, 0, 0.5, out=torch.empty(
        0, dtype=torch.float64)) if name == "sl1" else A.huber_loss.out(
        x, t, 0, 0.5, out=torch.empty(0, dtype=torch.float64)))
for name, op in (("sl1b", A.smooth_l1_loss_backward), ("hubb", A.huber_loss_backward)):
    case(f"{name} mixed grad", lambda: op(g.double(), x, t, 0, 0.5))
    case(f"{name} mixed input", lambda: op(g, x.double(), t, 0, 0.5))
    case(f"{name} mixed target", lambda: op(g, x, t.double(), 0, 0.5))
    case(f"{name} mixed reduced", lambda: op(g.half(), x.half(), t.bfloat16(), 0, 0.5))
    case(f"{name} grad bigger", lambda: op(torch.randn(2, 5, 37), x, t, 0, 0.5))
    case(f"{name} empty", lambda: op(torch.randn(0, 3), torch.randn(0, 3), torch.randn(0, 3),
                                     1, 0.5))
    case(f"{name} 0dim", lambda: op(torch.tensor(2.0), torch.tensor(1.5), torch.tensor(-0.25),
                                    1, 0.5))
    case(f"{name} cl", lambda: op(torch.randn(2, 3, 4, 5), cl, c2, 0, 0.5))
    case(f"{name} big beta", lambda: op(g, x, t, 0, 1e300))
    for dt in (torch.int64, torch.int32, torch.bool, torch.complex64):
        case(f"{name} {dt}", lambda: op(g.to(dt), (x * 3).to(dt), t.to(dt), 0, 2.0))
        case(f"{name} {dt} mean", lambda: op(g.to(dt), (x * 3).to(dt), t.to(dt), 1, 2.0))
    # the out= overload: smooth_l1_loss_backward's is named grad_input, huber_loss_backward's out
    out_ = op.grad_input if name == "sl1b" else op.out
    case(f"{name} grad_input", lambda: out_(g, x, t, 1, 0.5, grad_input=torch.empty(0)))
    case(f"{name} grad_input double", lambda: out_(
        g, x, t, 0, 0.5, grad_input=torch.empty(0, dtype=torch.float64)))
for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    xr = (x.to(dt) * 1).requires_grad_()
    for red in ("none", "mean", "sum"):
        wt = g.to(dt) if red == "none" else None
        case(f"sl1 autograd {dt} {red}", lambda: torch.autograd.grad(
            F.smooth_l1_loss(xr, t.to(dt), reduction=red, beta=0.6), xr, wt)[0])
        case(f"hub autograd {dt} {red}", lambda: torch.autograd.grad(
            F.huber_loss(xr, t.to(dt), reduction=red, delta=0.6), xr, wt)[0])
        case(f"sl1 module {dt} {red}", lambda: torch.nn.SmoothL1Loss(reduction=red, beta=2.0)(
            x.to(dt), t.to(dt)))
        case(f"hub module {dt} {red}", lambda: torch.nn.HuberLoss(reduction=red, delta=2.0)(
            x.to(dt), t.to(dt)))
# control: the backward's SIMD formula (norm * (x / beta) * grad) everywhere, on a transposed
# layout that upstream's scalar loop runs (norm * x * grad / beta, in double)
xt, tt, gt = x.t(), t.t(), g.t()
d = xt - tt
case("control-simd-formula", lambda: torch.where(d.abs() >= 0.3, d.sign(), d / 0.3) * gt)
case("sl1b-transposed", lambda: A.smooth_l1_loss_backward(gt, xt, tt, 0, 0.3))
print(json.dumps(out))
"""

CONTROLS = {"control-simd-formula": "sl1b-transposed"}
# this file's kernels and test_shrink_kernels.py's (one check for both)
KERNELS = ("smooth_l1_loss", "smooth_l1_loss_backward", "huber_loss", "huber_loss_backward",
           "hardshrink", "softshrink", "hardshrink_backward", "softshrink_backward")


results = sides.under_each_profile(PROGRAM)


def test_bits_agree_with_upstream(results):
    """Both sides under one CPU capability (None: this machine's)."""
    ours, up = results
    sides.assert_same(ours, up, at_least=490, controls=CONTROLS)


def test_kernels_registered():
    """Each of them is served by its kernel, not by a decomposition."""
    served = sides.cpu_paths(KERNELS)
    assert {n for n, how in served.items() if how != "kernel"} == set(), served
