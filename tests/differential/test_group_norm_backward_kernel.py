"""native_group_norm_backward as a kernel (upstream's group_norm_kernel.cpp replayed in its
summation order), against upstream torch 2.13.0 in a separate process, under each CPU profile
this machine runs (ours and upstream both switched by ATEN_CPU_CAPABILITY). Bit for bit: the
contiguous and channels-last kernels (channels-last below and above 2,048 positions, where the
per-thread buffers decide the order), float32, float64, bfloat16/float16 with their own or
float32 parameters, with and without gamma, the output_mask combinations, the errors, and the
gradients through F.group_norm and nn.GroupNorm. Inputs come from numpy's generator, which does
not move with the CPU profile (torch.randn does). Control: dX with c1 * dY + c2 * X + c3
computed in float64 and rounded once, which upstream's float32 kernel does not do."""

from __future__ import annotations

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r"""
A = torch.ops.aten
rng = np.random.default_rng(0)
out = {}

def rn(*s):
    return torch.from_numpy(rng.standard_normal(s).astype(np.float32))

def case(name, fn):
    out[name] = outcome(fn, bits=True)

def stats(x, N, G, pdt):
    # in numpy: the two sides' mean and var kernels need not agree to the last bit
    xd = x.double().contiguous().numpy().reshape(N, G, -1)
    mean = torch.from_numpy(xd.mean(-1))
    return mean.to(pdt), torch.from_numpy(1 / np.sqrt(xd.var(-1) + 1e-5)).to(pdt)

SHAPES = [(2, 6, 3, (5,), "cf"), (3, 8, 2, (37,), "cf"), (2, 32, 4, (3, 7), "cf"),
          (2, 48, 3, (7,), "cf"), (1, 40, 2, (10, 13), "cf"), (2, 6, 3, (1, 5), "cl"),
          (3, 40, 2, (37, 1), "cl"), (2, 48, 4, (3, 3), "cl"), (2, 12, 3, (50, 42), "cl"),
          (1, 24, 3, (41, 100), "cl"), (2, 6, 3, (2, 2, 3), "cl3d")]
DTYPES = {"f32": (torch.float32, torch.float32), "f64": (torch.float64, torch.float64),
          "bf16": (torch.bfloat16, torch.bfloat16), "f16": (torch.float16, torch.float16),
          "bf16-mixed": (torch.bfloat16, torch.float32),
          "f16-mixed": (torch.float16, torch.float32)}
FORMATS = {"cf": torch.contiguous_format, "cl": torch.channels_last,
           "cl3d": torch.channels_last_3d}
for dname, (tdt, pdt) in DTYPES.items():
    for k, (N, C, G, sp, fmt) in enumerate(SHAPES):
        x = torch.from_numpy(rn(N, C, *sp).numpy() * 2 + 0.3).to(tdt)
        x = x.contiguous(memory_format=FORMATS[fmt])
        g = rn(N, C, *sp).to(tdt).contiguous(memory_format=FORMATS[fmt])
        w = rn(C).to(pdt)
        mean, rstd = stats(x, N, G, pdt)
        HW = x[0, 0].numel()
        case(f"{dname}-{k}-w", lambda: A.native_group_norm_backward(
            g, x, mean, rstd, w, N, C, HW, G, [True, True, True]))
        case(f"{dname}-{k}-nw", lambda: A.native_group_norm_backward(
            g, x, mean, rstd, None, N, C, HW, G, [True, False, False]))
        if k == 1:
            for mask in ([False, True, False], [False, False, True], [True, False, True],
                         [False, False, False]):
                case(f"{dname}-mask-{mask}", lambda: A.native_group_norm_backward(
                    g, x, mean, rstd, w, N, C, HW, G, mask))

x = rn(2, 6, 3, 3); g = rn(2, 6, 3, 3); w = rn(6)
m, r = stats(x, 2, 3, torch.float32)
def gnb(*args, mask=(True, True, True), N=2, C=6, HW=9, G=3):
    return lambda: A.native_group_norm_backward(*args, N, C, HW, G, list(mask))
case("err-dy-dtype", gnb(g.double(), x, m, r, w))
case("err-w-dtype", gnb(g.double(), x.double(), m.double(), r.double(), w))
case("err-mean-double", gnb(g, x, m.double(), r.double(), w))
case("err-bf16-w-float", gnb(g.bfloat16(), x.bfloat16(), m.bfloat16(), r.bfloat16(), w))
case("err-bf16-mixed-w-bf16", gnb(g.bfloat16(), x.bfloat16(), m, r, w.bfloat16()))
case("err-bf16-rstd-bf16", gnb(g.bfloat16(), x.bfloat16(), m, r.bfloat16(), w))
case("err-double-mean-float", gnb(g.double(), x.double(), m, r, w.double()))
case("err-long", gnb(g.long(), x.long(), m.long(), r.long(), w.long()))
case("err-numel", gnb(g, x, m, r, w, HW=8))
case("err-mean-numel", gnb(g, x, m[:, :2], r[:, :2], w))
case("err-w-numel", gnb(g, x, m, r, w[:5]))
case("err-no-gamma-mask", gnb(g, x, m, r, None))
case("w-2d", gnb(g, x, m, r, w.reshape(2, 3)))
# a dY (or X) not laid out in X's suggested format is read from its data pointer on
case("dy-transposed", gnb(g.transpose(2, 3), x, m, r, w))
case("x-cl-dy-contiguous", gnb(g, x.contiguous(memory_format=torch.channels_last), m, r, w))
case("empty-n", lambda: A.native_group_norm_backward(
    rn(0, 6, 3), rn(0, 6, 3), rn(0, 3), rn(0, 3), w, 0, 6, 3, 3, [True, True, True]))
case("empty-hw", lambda: A.native_group_norm_backward(
    rn(2, 6, 0), rn(2, 6, 0), m, r, w, 2, 6, 0, 3, [True, True, True]))
xs = x.clone(); xs[0, 0, 0, 0] = float("nan"); xs[1, 2, 1, 1] = float("inf")
case("nonfinite", gnb(g, xs, m, r, w))

# the gradients through F.group_norm and nn.GroupNorm: the forward's statistics are each side's
# own (ours are not upstream's to the last bit), so each side's gradients are checked against
# its own kernel call with those statistics; the node names are compared across the sides
def same(a, b):
    return all(torch.equal(p.contiguous().view(torch.uint8), q.contiguous().view(torch.uint8))
               and p.stride() == q.stride() for p, q in zip(a, b))

def through(xi, G, wi, bi, gy, fn):
    y = fn(xi)
    got = torch.autograd.grad(y, (xi, wi, bi), gy)
    N, C, HW = xi.shape[0], xi.shape[1], xi[0, 0].numel()
    _, mean, rstd = A.native_group_norm(xi.detach(), wi.detach(), bi.detach(), N, C, HW, G, 1e-5)
    fmt = torch.channels_last if xi.is_contiguous(memory_format=torch.channels_last) and \
        not xi.is_contiguous() else torch.contiguous_format
    want = A.native_group_norm_backward(gy.contiguous(memory_format=fmt), xi.detach(), mean,
                                        rstd, wi.detach(), N, C, HW, G, [True, True, True])
    return [y.grad_fn.name(), same(got, want), [t.stride() for t in got]]

for dname, dt in (("f32", torch.float32), ("f64", torch.float64)):
    for fmt in ("cf", "cl"):
        xi = rn(2, 8, 5, 6).to(dt).contiguous(memory_format=FORMATS[fmt]).requires_grad_()
        wi = rn(8).to(dt).requires_grad_(); bi = rn(8).to(dt).requires_grad_()
        gy = rn(2, 8, 5, 6).to(dt)
        case(f"F.group_norm-{dname}-{fmt}",
             lambda: through(xi, 4, wi, bi, gy, lambda t: F.group_norm(t, 4, wi, bi)))
mod = torch.nn.GroupNorm(2, 6)
with torch.no_grad():
    mod.weight.copy_(rn(6)); mod.bias.copy_(rn(6))
xm = rn(3, 6, 4, 4).requires_grad_()
case("nn.GroupNorm", lambda: through(xm, 2, mod.weight, mod.bias, rn(3, 6, 4, 4), mod))
# control: dX's c1 * dY + c2 * X + c3 in float64, rounded once (upstream's is float32)
def control():
    dx = A.native_group_norm_backward(g, x, m, r, w, 2, 6, 9, 3, [True, False, False])[0]
    dx64 = A.native_group_norm_backward(g.double(), x.double(), m.double(), r.double(),
                                        w.double(), 2, 6, 9, 3, [True, False, False])[0]
    return [dx, dx64.float()]
case("control", control)
print(json.dumps(out))
"""

PROFILES = {"native": {}, **upstream.other_cpu_profiles()}


@pytest.fixture(scope="module", params=list(PROFILES))
def results(request):
    return upstream.run_both(sides.program(PROGRAM), 900, PROFILES[request.param])


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, 170)
    assert all(up[k]["v"][1]["v"] == "True" for k in up if k.startswith(("F.", "nn.")))


def test_control_is_caught(results):
    _, up = results
    dx, dx64 = up["control"]["v"]
    assert dx["hex"] != dx64["hex"]


def test_registered_as_kernel():
    assert sides.cpu_paths(["native_group_norm_backward"]) == {
        "native_group_norm_backward": "kernel"}
