"""hardtanh_backward and elu_backward (nn_activation_grads.py) as kernels, against upstream
torch 2.13.0 in separate processes under this CPU's capability and each other one it runs (ours and upstream
both switched by ATEN_CPU_CAPABILITY). Bit for bit: values (signed zeros, NaN/inf inputs, which
loop a NaN x took -- the scalar loop keeps grad there, the SIMD loop and an AVX512 build's
compiler-vectorized remainder give 0 --, elu's SLEEF exp in SIMD lanes and libm's in the
scalar tail, float16/bfloat16 NaN patterns), dtypes, strides,
broadcasting, errors. Control: grad kept only where min < x < max everywhere (the SIMD loop's
rule) is caught on a layout that runs the scalar loop."""

from __future__ import annotations

import sides

PROGRAM = r"""
torch.manual_seed(0)
A, out = torch.ops.aten, {}
case = lambda name, fn: out.__setitem__(name, outcome(fn, bits=True))  # noqa: E731
x = torch.randn(5, 37) * 3
special = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 3.0, -3.0, 1.0, -1.0, 0.5,
           -0.5, 1e-30, -1e-30, 30.0, -30.0, 100.0, -100.0, 2.0, 20.0, 0.25, 6.0, -6.0]
x.view(-1)[:len(special)] = torch.tensor(special)
x.view(-1)[-len(special):] = torch.tensor(special)
g = torch.randn(5, 37)
g.view(-1)[3:8] = torch.tensor([float("nan"), 0.0, -0.0, float("inf"), 1e-38])
g.view(-1)[-9:-5] = torch.tensor([float("nan"), -float("nan"), -0.0, 1e-38])
gl = torch.randn(2, 5, 37, 3)
gl_cl = gl.contiguous(memory_format=torch.channels_last)

OPS = {
    "hardtanh": lambda g, x: A.hardtanh_backward(g, x, -1, 1),
    "hardtanh-relu6": lambda g, x: A.hardtanh_backward(g, x, 0.0, 6.0),
    "elu": lambda g, x: A.elu_backward(g, 1.0, 1.0, 1.0, False, x),
    "elu-selu": lambda g, x: A.elu_backward(g, 1.6732632423543772, 1.0507009873554805, 1.0,
                                            False, x),
    "elu-result": lambda g, x: A.elu_backward(g, 1.5, 1.0, 0.7, True, x),
}
for name, op in OPS.items():
    for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        case(f"{name}-{dt}", lambda: op(g.to(dt), x.to(dt)))
        case(f"{name}-big-{dt}", lambda: op(g.repeat(7, 3).to(dt), x.repeat(7, 3).to(dt)))
        case(f"{name}-one-transposed-{dt}", lambda: op(g.t().contiguous().to(dt), x.t().to(dt)))
        case(f"{name}-0dim-grad-{dt}", lambda: op(g[0, 3].to(dt), x.to(dt)))
        for n in (7, 31, 57, 185):  # a NaN x at every place of the loops' vectors and tails
            xn = torch.full((n,), float("nan")).to(dt)
            xn[::3] = 0.5
            gn = torch.linspace(-1, 1, n).to(dt)
            gn[1::4] = float("nan")
            case(f"{name}-nans-{n}-{dt}", lambda: op(gn, xn))
            case(f"{name}-nans-expanded-{n}-{dt}", lambda: op(gn[:1].expand(n), xn))
    case(f"{name}-transposed", lambda: op(g.t(), x.t()))
    case(f"{name}-broadcast", lambda: op(g[:, :1], x))
    case(f"{name}-broadcast-row", lambda: op(g[:1], x))
    case(f"{name}-mixed", lambda: op(g.double(), x))
    case(f"{name}-mixed-reduced", lambda: op(g.bfloat16(), x.half()))
    case(f"{name}-mixed-f16-f32", lambda: op(g, x.half()))
    case(f"{name}-slice", lambda: op(g[:, 1:], x[:, 1:]))
    cl = x.reshape(1, 5, 37, 1).expand(2, 5, 37, 3).contiguous(memory_format=torch.channels_last)
    for label, a, b in (("channels-last", gl, cl), ("channels-last-both", gl_cl, cl),
                        ("empty", torch.randn(0, 3), torch.randn(0, 3)),
                        ("0dim", torch.tensor(1.5), x[0, 3]),
                        ("mismatch", torch.randn(3), torch.randn(4))):
        case(f"{name}-{label}", lambda: op(a, b))
    for dt in (torch.int64, torch.int32, torch.bool, torch.complex64):
        case(f"{name}-{dt}", lambda: op(g.to(dt), x.to(dt)))
case("hardtanh-bound-overflow-f16", lambda: A.hardtanh_backward(g.half(), x.half(), -1e40, 1))
case("hardtanh-bound-overflow-f32", lambda: A.hardtanh_backward(g, x, -1, 1e300))
case("hardtanh-bound-bf16", lambda: A.hardtanh_backward(g.bfloat16(), x.bfloat16(), -1.001, 1.001))
for dt in (torch.float32, torch.bfloat16):
    xr = x.to(dt).requires_grad_()
    case(f"hardtanh-autograd-{dt}",
         lambda: torch.autograd.grad((F.hardtanh(xr) * g.to(dt)).sum(), xr)[0])
    case(f"relu6-autograd-{dt}", lambda: torch.autograd.grad((F.relu6(xr) * g.to(dt)).sum(), xr)[0])
case("elu-result-negative", lambda: A.elu_backward(g, -1.0, 1.0, 1.0, True, x))
case("elu-alpha-overflow", lambda: A.elu_backward(g.half(), 1e40, 1.0, 1.0, False, x.half()))
for dt in (torch.float32, torch.bfloat16):
    xr = x.to(dt).requires_grad_()
    for f in (F.elu, F.selu, F.celu):
        case(f"{f.__name__}-autograd-{dt}",
             lambda: torch.autograd.grad((f(xr) * g.to(dt)).sum(), xr)[0])
# (F.elu(inplace=True)'s gradient reads our forward elu's result, which is not always upstream's
# bits: the result-based backward is checked directly above)
# control: the SIMD loop's rule everywhere, on a layout run by the scalar loop
xt = x.t()
case("control-hardtanh", lambda: torch.where((xt > -1) & (xt < 1), g.t().contiguous(), 0.0))
case("hardtanh-strided", lambda: A.hardtanh_backward(g.t().contiguous(), xt, -1, 1))
print(json.dumps(out))
"""

CONTROLS = {"control-hardtanh": "hardtanh-strided"}
KERNELS = ("hardtanh_backward", "elu_backward")


results = sides.under_each_profile(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, at_least=230, controls=CONTROLS)


def test_kernels_registered():
    paths = sides.cpu_paths(KERNELS)
    assert set(paths.values()) == {"kernel"}, paths
