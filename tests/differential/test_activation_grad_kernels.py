"""leaky_relu_backward, log_sigmoid_backward and silu_backward as kernels
(nn_activation_grads.py), against upstream torch 2.13.0 in separate processes, under this CPU's
capability and each other one it runs (ours and upstream both switched by ATEN_CPU_CAPABILITY).
Bit for bit: values (signed zeros, NaN/inf inputs and which NaN a loop keeps, bfloat16 NaN
patterns), dtypes, strides, errors. Controls: the slope applied on x >= 0 instead of x > 0 is
caught at the zeros; silu's gradient computed in float64 and rounded is caught."""

from __future__ import annotations

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r"""
A = torch.ops.aten
torch.manual_seed(0)
out = {}

def case(name, fn):
    out[name] = outcome(fn, bits=True)

x = torch.randn(5, 37) * 3
special = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 3.0, -3.0, 1.0, -1.0, 1e-30,
           -1e-30, 30.0, -30.0, 100.0, -100.0]
x.view(-1)[:len(special)] = torch.tensor(special)
x.view(-1)[-len(special):] = torch.tensor(special)
g = torch.randn(5, 37)
g.view(-1)[3:8] = torch.tensor([float("nan"), 0.0, -0.0, float("inf"), 1e-38])
buf = x.abs().clamp(max=1)


# log_sigmoid_backward's buffer for x: of x's shape and layout, as the forward's is
def buffer_of(x):
    return buf.to(x.dtype) if x.shape == buf.shape else x.abs().clamp(max=1)


OPS = {
    "leaky": lambda g, x: A.leaky_relu_backward(g, x, 0.01, False),
    "leaky-result": lambda g, x: A.leaky_relu_backward(g, x, 0.2, True),
    "leaky-negative": lambda g, x: A.leaky_relu_backward(g, x, -0.5, False),
    "logsigmoid": lambda g, x: A.log_sigmoid_backward(g, x, buffer_of(x)),
    "silu": lambda g, x: A.silu_backward(g, x),
}
# finite: complex results with NaNs are the decomposition's
xf, gf = torch.randn(5, 37) * 3, torch.randn(5, 37)
for name, op in OPS.items():
    for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        case(f"{name}-{dt}", lambda: op(g.to(dt), x.to(dt)))
    case(f"{name}-transposed", lambda: op(g.t(), x.t()))
    case(f"{name}-one-transposed", lambda: op(g.t().contiguous(), x.t()))
    case(f"{name}-broadcast", lambda: op(g[:, :1], x))
    case(f"{name}-broadcast-row", lambda: op(g[:1], x))
    case(f"{name}-0dim-grad", lambda: op(g[0, 0], x))
    case(f"{name}-mixed", lambda: op(g.double(), x))
    case(f"{name}-mixed-reduced", lambda: op(g.bfloat16(), x.half()))
    case(f"{name}-slice", lambda: op(g[:, 1:], x[:, 1:]))
    case(f"{name}-big", lambda: op(g.repeat(7, 3), x.repeat(7, 3)))
    case(f"{name}-big-bf16", lambda: op(g.repeat(7, 3).bfloat16(), x.repeat(7, 3).bfloat16()))
    cl = x.reshape(1, 5, 37, 1).expand(2, 5, 37, 3).contiguous(memory_format=torch.channels_last)
    gl = torch.randn(2, 5, 37, 3)
    case(f"{name}-channels-last", lambda: op(gl, cl))
    case(f"{name}-channels-last-both",
         lambda: op(gl.contiguous(memory_format=torch.channels_last), cl))
    case(f"{name}-empty", lambda: op(torch.randn(0, 3), torch.randn(0, 3)))
    case(f"{name}-0dim", lambda: op(torch.tensor(1.5), x[0, 3]))
    case(f"{name}-mismatch", lambda: op(torch.randn(3), torch.randn(4)))
    case(f"{name}-mixed-f16-f32", lambda: op(g, x.half()))
    case(f"{name}-big-f16", lambda: op(g.repeat(7, 3).half(), x.repeat(7, 3).half()))
    case(f"{name}-big-f64", lambda: op(g.repeat(7, 3).double(), x.repeat(7, 3).double()))
    for dt in (torch.int64, torch.int32, torch.bool, torch.complex64, torch.complex128):
        case(f"{name}-{dt}", lambda: op(*[(b if dt.is_complex else a).to(dt)
                                          for a, b in ((g, gf), (x, xf))]))
# complex: c10's products and Smith's division, fused in the scalar complex<float> loop of FMA
# builds, apart in the SIMD loop
cx, cg = torch.complex(xf, torch.randn(5, 37) * 2), torch.complex(gf, torch.randn(5, 37))
for dt in (torch.complex64, torch.complex128):
    case(f"silu-complex-{dt}", lambda: A.silu_backward(cg.to(dt), cx.to(dt)))
    case(f"silu-complex-big-{dt}",
         lambda: A.silu_backward(cg.repeat(3, 2).to(dt), cx.repeat(3, 2).to(dt)))
    case(f"silu-complex-transposed-{dt}", lambda: A.silu_backward(cg.t().to(dt), cx.t().to(dt)))
case("silu-complex-mixed", lambda: A.silu_backward(cg.to(torch.complex64), xf))
# each loop's NaN: x NaN or +-inf, g NaN, at every place of a vector (float16's DEFAULT loop
# keeps x's or -x's by quarter)
xn = torch.full((4, 64), 0.3)
gn = torch.full((4, 64), 0.5)
xn[0] = float("nan")
xn[1] = float("inf")
xn[2] = -float("inf")
gn[1:3, ::2] = float("nan")
gn[3, 1::3] = -float("nan")
xn[3, ::5] = -float("nan")
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    case(f"silu-nans-{dt}", lambda: A.silu_backward(gn.to(dt), xn.to(dt)))
    case(f"silu-nans-strided-{dt}", lambda: A.silu_backward(gn.to(dt).t(), xn.to(dt).t()))
case("leaky-result-negative", lambda: A.leaky_relu_backward(g, x, -0.5, True))
case("leaky-slope-overflow", lambda: A.leaky_relu_backward(g.half(), x.half(), 1e6, False))
case("logsigmoid-buffer-dtype", lambda: A.log_sigmoid_backward(g, x, buf.double()))
case("logsigmoid-grad-dtype", lambda: A.log_sigmoid_backward(g.double(), x, buf))
# where a user meets them: the gradient of the forward op through autograd
for dt in (torch.float32, torch.bfloat16):
    xr = x.to(dt).requires_grad_()
    case(f"leaky-autograd-{dt}",
         lambda: torch.autograd.grad((F.leaky_relu(xr, 0.1) * g.to(dt)).sum(), xr)[0])
# (log_sigmoid_forward's float32/float64 buffer, exp(-|x|), is not always upstream's bits -- its own
# kernel's matter -- so those dtypes reach the backward only in the direct cases above)
xs = torch.arange(-6, 6, 0.25).reshape(4, 12)
for dt in (torch.bfloat16,):
    xr = xs.to(dt).requires_grad_()
    case(f"logsigmoid-autograd-{dt}",
         lambda: torch.autograd.grad((F.logsigmoid(xr) * g[:4, :12].to(dt)).sum(), xr)[0])
for dt in (torch.float32, torch.bfloat16, torch.float16):
    xr = x.to(dt).requires_grad_()
    case(f"silu-autograd-{dt}",
         lambda: torch.autograd.grad((F.silu(xr) * g.to(dt)).sum(), xr)[0])
xr = x.requires_grad_()
case("leaky-inplace-autograd", lambda: torch.autograd.grad(
    (F.leaky_relu(xr * 1, 0.1, inplace=True) * g).sum(), xr)[0])
xr = x.double().requires_grad_()
case("leaky-double-backward", lambda: torch.autograd.grad(
    torch.autograd.grad((F.leaky_relu(xr, 0.1) ** 2).sum(), xr, create_graph=True)[0].sum(),
    xr)[0])
# control: the slope applied where x >= 0 is not upstream's kernel (x > 0)
case("control-ge", lambda: torch.where(x >= 0, g, g * 0.01))
case("silu-finite", lambda: A.silu_backward(gf, xf))
case("control-silu", lambda: A.silu_backward(gf.double(), xf.double()).float())
print(json.dumps(out))
"""

PROFILES = {"native": {}, **upstream.other_cpu_profiles()}


@pytest.fixture(scope="module", params=list(PROFILES))
def results(request):
    env = PROFILES[request.param]
    code = sides.program(PROGRAM)
    return upstream.concurrently(lambda: upstream.run_json_ours(code, 600, env),
                                 lambda: upstream.run_json(code, 600, env))


def test_bits_agree_with_upstream(results):
    ours, up = results
    assert set(ours) == set(up) and len(up) >= 90
    assert not sides.differing(ours, up)


def test_control_is_caught(results):
    _, up = results
    assert up["control-ge"]["hex"] != up["leaky-torch.float32"]["hex"]
    assert up["control-silu"]["hex"] != up["silu-finite"]["hex"]


def test_registered_as_kernels():
    paths = sides.cpu_paths(("leaky_relu_backward", "log_sigmoid_backward", "silu_backward"))
    assert set(paths.values()) == {"kernel"}, paths
