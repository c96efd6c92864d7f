"""gelu_backward (both forms), softplus_backward, hardswish_backward, mish_backward and
logit_backward (nn_smooth_activation_grads.py) as kernels, against upstream torch 2.13.0 in
separate processes, both sides under this CPU's capability and each other one upstream runs
(ATEN_CPU_CAPABILITY).
Bit for bit: values (SLEEF's exp, tanhf, log1pf and ATen's polynomial erf in SIMD lanes, glibc's in
the scalar tail and in strided loops; NaN/inf/signed-zero inputs; a NaN x at every place of the
loops' vectors and tails, where the SIMD and scalar loops disagree; float16/bfloat16 NaN bits),
dtypes, strides, broadcasting, promotion, errors. gelu_backward's oneDNN path (contiguous
input) and float64 gelu/mish stay on the decomposition: not compared here. Control:
hardswish's scalar rule for a NaN x (grad passed on) applied in SIMD lanes is caught."""

from __future__ import annotations

import sides

PROGRAM = r"""
torch.manual_seed(0)
A, out = torch.ops.aten, {}
case = lambda name, fn: out.__setitem__(name, outcome(fn, bits=True))  # noqa: E731
x = torch.randn(5, 37) * 3
special = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 3.0, -3.0, 1.0, -1.0, 0.5,
           -0.5, 1e-30, -1e-30, 30.0, -30.0, 100.0, -100.0, 2.0, 20.0, 0.25, 6.0, -6.0, 1 - 1e-7]
x.view(-1)[:len(special)] = torch.tensor(special)
x.view(-1)[-len(special):] = torch.tensor(special)
g = torch.randn(5, 37)
g.view(-1)[3:8] = torch.tensor([float("nan"), 0.0, -0.0, float("inf"), 1e-38])
g.view(-1)[-9:-5] = torch.tensor([float("nan"), -float("nan"), -0.0, 1e-38])
p = torch.rand(5, 37)  # logit's domain
p.view(-1)[:12] = torch.tensor([0.0, 1.0, -0.0, float("nan"), 1e-6, 1 - 1e-6, 0.5, -0.1, 1.1,
                                0.01, 0.99, float("inf")])
gl = torch.randn(2, 5, 37, 3)
xw, gw = torch.randn(2, 4097) * 3, torch.randn(2, 4096)  # many values through both loops
pw = torch.rand(2, 4097)

OPS = {
    # a strided x (a contiguous one is oneDNN's upstream, left on the decomposition)
    "gelu": (lambda g, x: A.gelu_backward(g, x.repeat(1, 2)[:, ::2]), x),
    "gelu-tanh": (lambda g, x: A.gelu_backward(g, x, approximate="tanh"), x),
    "softplus": (lambda g, x: A.softplus_backward(g, x, 1.0, 20.0), x),
    "softplus-beta": (lambda g, x: A.softplus_backward(g, x, 0.7, 3.0), x),
    "hardswish": (lambda g, x: A.hardswish_backward(g, x), x),
    "mish": (lambda g, x: A.mish_backward(g, x), x),
    "logit": (lambda g, x: A.logit_backward(g, x), p),
    "logit-eps": (lambda g, x: A.logit_backward(g, x, 0.01), p),
    "logit-eps0": (lambda g, x: A.logit_backward(g, x, 0.0), p),
}
for name, (op, x) in OPS.items():
    for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        if name.startswith(("gelu", "mish")) and dt is torch.float64:
            continue  # (left on the decomposition)
        nan_x = not (name == "mish" and dt is torch.float16)  # (else on the decomposition)
        x = OPS[name][1] if nan_x else OPS[name][1].nan_to_num(0.25, 30.0, -30.0)
        case(f"{name}-{dt}", lambda: op(g.to(dt), x.to(dt)))
        w = pw if name.startswith("logit") else xw
        case(f"{name}-wide-{dt}", lambda: op(gw.to(dt), w.to(dt)[:, 1:]))
        case(f"{name}-wide-strided-{dt}",
             lambda: op(gw.to(dt), w.to(dt)[:, 1:].t().contiguous().t()))
        case(f"{name}-big-{dt}",
             lambda: op(g.repeat(3, 3).to(dt)[:, 1:], x.repeat(3, 3).to(dt)[:, 1:]))
        case(f"{name}-transposed-{dt}", lambda: op(g.t().to(dt), x.t().to(dt)))
        case(f"{name}-one-transposed-{dt}", lambda: op(g.t().contiguous().to(dt), x.t().to(dt)))
        case(f"{name}-slice-{dt}", lambda: op(g[:, 1:].to(dt), x.to(dt)[:, 1:]))
        case(f"{name}-0dim-grad-{dt}", lambda: op(g[0, 3].to(dt), x.to(dt)[:, 1:]))
        for n in (7, 31, 57, 185) if nan_x else ():  # a NaN x at every place of the loops
            xn = torch.full((n,), float("nan")).to(dt)
            xn[::3] = 0.5
            gn = torch.linspace(-1, 1, n).to(dt)
            gn[1::4] = float("nan")
            case(f"{name}-nans-strided-{n}-{dt}", lambda: op(gn, xn.repeat_interleave(2)[::2]))
            rows = torch.stack([xn, xn])[:, 1:]  # SIMD lanes along each row
            case(f"{name}-nans-rows-{n}-{dt}", lambda: op(torch.stack([gn, gn])[:, 1:], rows))
            if name == "gelu":
                continue
            case(f"{name}-nans-expanded-{n}-{dt}", lambda: op(gn[:1].expand(n), xn))
            case(f"{name}-nans-contiguous-{n}-{dt}", lambda: op(gn, xn))
    case(f"{name}-broadcast", lambda: op(g[:, :1], x))
    case(f"{name}-broadcast-row", lambda: op(g[:1], x))
    x = OPS[name][1] if name != "mish" else OPS[name][1].nan_to_num(0.25, 30.0, -30.0)
    case(f"{name}-mixed-reduced", lambda: op(g.bfloat16(), x.half()))
    case(f"{name}-mixed-f16-f32", lambda: op(g, x.half()))
    x = OPS[name][1]
    if not name.startswith(("gelu", "mish")):
        case(f"{name}-mixed", lambda: op(g.double(), x))
    cl = x.reshape(1, 5, 37, 1).expand(2, 5, 37, 3).contiguous(memory_format=torch.channels_last)
    for label, a, b in (("channels-last", gl, cl), ("empty", torch.randn(0, 3), torch.randn(0, 3)),
                        ("0dim", torch.tensor(1.5), x[0, 3]),
                        ("mismatch", torch.randn(3), torch.randn(4))):
        case(f"{name}-{label}", lambda: op(a, b))
    for dt in (torch.int64, torch.bool, torch.complex64):
        case(f"{name}-{dt}", lambda: op(g.to(dt), x.to(dt)))
case("gelu-bad-approximate", lambda: A.gelu_backward(g, x, approximate="fast"))
# out= of another dtype: the iterator casts into it (resized to its inputs' layout), except
# where the oneDNN path (float32, contiguous, exact form) cannot view it, after the resize; that
# path's values are not compared (see OPS)
def gelu_into(dt, g, x, values=True, **kw):
    o = torch.empty(0, dtype=dt)
    r = outcome(lambda: A.gelu_backward.grad_input(g, x, grad_input=o, **kw), bits=True)
    if not values and "error" not in r:
        r = "computed"
    return {"result": r, "out": [list(o.shape), list(o.stride())]}
for dt in (torch.float64, torch.complex64, torch.float16, torch.bfloat16, torch.float32):
    out[f"gelu-out-{dt}"] = gelu_into(dt, g, x, values=False)
    out[f"gelu-out-tanh-{dt}"] = gelu_into(dt, g.t(), x.t(), approximate="tanh")
    out[f"gelu-out-strided-{dt}"] = gelu_into(dt, g.t(), x.repeat(2, 1)[::2].t())
case("softplus-beta-overflow", lambda: A.softplus_backward(g.half(), x.half(), 1e40, 20.0))
case("logit-eps-overflow", lambda: A.logit_backward(g.half(), p.half(), 1e40))
case("logit-eps-negative", lambda: A.logit_backward(g, p, -0.5))
for dt in (torch.float32, torch.float64, torch.bfloat16):
    xr = x.t().to(dt).requires_grad_()  # (transposed: gelu's is not oneDNN's upstream)
    for label, f in (("gelu", F.gelu), ("softplus", F.softplus), ("hardswish", F.hardswish),
                     ("gelu-tanh", lambda v: F.gelu(v, approximate="tanh")), ("mish", F.mish)):
        if label.startswith(("gelu", "mish")) and dt is torch.float64:
            continue  # (its SIMD lanes are left on the decomposition)
        case(f"{label}-autograd-{dt}",
             lambda: torch.autograd.grad((f(xr) * g.t().to(dt)).sum(), xr)[0])
    pr = p.to(dt).requires_grad_()
    case(f"logit-autograd-{dt}",
         lambda: torch.autograd.grad((torch.logit(pr, 1e-3) * g.to(dt)).sum(), pr)[0])
# control: the scalar loop's rule for a NaN x (grad passed on) where the SIMD loop ran
xn = torch.full((64,), float("nan"))
gn = torch.linspace(-1, 1, 64)
case("control-hardswish", lambda: torch.where(xn.isnan(), gn, 0.0))
case("hardswish-nan-simd", lambda: A.hardswish_backward(gn, xn))
print(json.dumps(out))
"""

CONTROLS = {"control-hardswish": "hardswish-nan-simd"}
KERNELS = ("gelu_backward", "softplus_backward", "hardswish_backward", "logit_backward",
           "mish_backward")


results = sides.under_each_profile(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, at_least=850, controls=CONTROLS)


def test_each_is_served_by_its_kernel():
    paths = sides.cpu_paths(KERNELS)
    assert set(paths.values()) == {"kernel"}, paths
