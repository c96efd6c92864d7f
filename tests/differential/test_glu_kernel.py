"""glu and glu_backward as kernels (nn_glu.py), against upstream torch 2.13.0 in separate
processes, bit for bit: float32, float64, float16, bfloat16 (float32 opmath), NaN/inf, halves
along every dimension, transposed, strided and channels-last inputs, broadcast gradients, the
dtype refusals and messages, out= and grad_input=, and F.glu's gradient through autograd. exp is
SLEEF's in the SIMD lanes and glibc's in the scalar tail, so rows wider and narrower than the
vector step are covered; bfloat16 NaNs keep the lane's bit pattern. Control: the halves swapped.
"""

from __future__ import annotations

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r"""

x = torch.randn(6, 40) * 4
x[0, :6] = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 100.0])
x[1, 20:26] = torch.tensor([float("nan"), float("inf"), -float("inf"), -100.0, 90.0, -90.0])
g = torch.randn(6, 20)
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    xd, gd = x.to(dt), g.to(dt)
    case(f"glu {dt}", lambda: F.glu(xd))
    case(f"glu dim0 {dt}", lambda: F.glu(xd, 0))
    case(f"glu 3d {dt}", lambda: F.glu(torch.randn(3, 4, 34).to(dt), 1))
    case(f"glu big {dt}", lambda: F.glu(torch.randn(70, 130).to(dt) * 3, 0))
    case(f"glu_backward {dt}", lambda: A.glu_backward(gd, xd, -1))
    case(f"glu_backward dim0 {dt}", lambda: A.glu_backward(torch.randn(3, 40).to(dt), xd, 0))
    case(f"glu_backward big {dt}", lambda: A.glu_backward(torch.randn(35, 130).to(dt),
                                                          torch.randn(70, 130).to(dt), 0))
    xr = (torch.randn(4, 38) * 3).to(dt).requires_grad_()
    case(f"grad {dt}", lambda: torch.autograd.grad(F.glu(xr).sum() * 1.5, xr)[0])
    case(f"grad weighted {dt}", lambda: torch.autograd.grad(F.glu(xr, 1), xr,
                                                            torch.randn(4, 19).to(dt))[0])
case("transposed", lambda: F.glu(x.t(), 0))
case("transposed dim1", lambda: F.glu(x.t(), 1))
case("strided", lambda: F.glu(x[::2, ::3]))
cl = torch.randn(2, 6, 5, 3).contiguous(memory_format=torch.channels_last)
case("channels-last dim1", lambda: F.glu(cl, 1))
case("channels-last dim-1", lambda: F.glu(torch.randn(2, 3, 5, 6).contiguous(
    memory_format=torch.channels_last), -1))
case("channels-last backward", lambda: A.glu_backward(torch.randn(2, 3, 5, 3), cl, 1))
case("backward grad transposed", lambda: A.glu_backward(g.t().contiguous().t(), x, 1))
case("backward input transposed", lambda: A.glu_backward(torch.randn(20, 6), x.t(), 0))
case("backward broadcast grad", lambda: A.glu_backward(torch.randn(1, 20), x, 1))
case("backward grad too big", lambda: A.glu_backward(torch.randn(6, 40), x, 1))
case("backward grad double", lambda: A.glu_backward(g.double(), x, 1))
case("backward input double", lambda: A.glu_backward(g, x.double(), 1))
case("backward odd", lambda: A.glu_backward(g, torch.randn(6, 7), 1))
case("backward 0-d", lambda: A.glu_backward(g, torch.tensor(1.0), 0))
case("backward int", lambda: A.glu_backward(g.long(), x.long(), 1))
case("empty", lambda: F.glu(torch.randn(0, 4)))
case("empty rows", lambda: F.glu(torch.randn(3, 0, 4), 2))
case("empty backward", lambda: A.glu_backward(torch.randn(0, 2), torch.randn(0, 4), 1))
case("empty int", lambda: F.glu(torch.zeros(0, 4, dtype=torch.long)))
case("1-d", lambda: F.glu(torch.randn(8)))
case("0-d", lambda: F.glu(torch.tensor(1.0)))
case("odd", lambda: F.glu(torch.randn(3, 5)))
case("odd dim0", lambda: F.glu(torch.randn(3, 6), 0))
case("bad dim", lambda: F.glu(torch.randn(3, 6), 2))
case("long", lambda: F.glu(torch.ones(2, 4, dtype=torch.long)))
case("int", lambda: F.glu(torch.ones(2, 4, dtype=torch.int32)))
case("bool", lambda: F.glu(torch.ones(2, 4, dtype=torch.bool)))
case("complex", lambda: F.glu(torch.ones(2, 4, dtype=torch.complex64)))
case("out=", lambda: torch._C._nn.glu(x, 1, out=torch.empty(0)))
case("out= double", lambda: torch._C._nn.glu(x, 1, out=torch.empty(0, dtype=torch.float64)))
case("grad_input=", lambda: A.glu_backward.grad_input(g, x, 1, grad_input=torch.empty(3)))
case("grad_input= double", lambda: A.glu_backward.grad_input(g, x, 1,
                                                              grad_input=torch.empty(3).double()))
case("in-place out alias", lambda: torch._C._nn.glu(x, 1, out=x[:, :20].clone()))
case("3d odd runs", lambda: F.glu(torch.randn(3, 4, 34, dtype=torch.float64), 1))
case("bf16 nan runs", lambda: F.glu(torch.full((2, 4, 40), float("nan")).bfloat16(), 1))
case("bf16 nan rows", lambda: F.glu(torch.full((3, 160), float("nan")).bfloat16(), 1))
case("bf16 nan backward", lambda: A.glu_backward(torch.randn(2, 70).bfloat16(),
                                                 torch.full((4, 70), float("nan")).bfloat16(), 0))
# control: the halves swapped (sigmoid of the first half times the second)
case("control-swapped", lambda: F.glu(torch.cat([x[:, 20:], x[:, :20]], 1)))
"""


# What every kernel test of this series runs around its cases: ``case(name, fn)`` records a
# call's outcome bit for bit (prelude.outcome); the program prints them as one JSON document.
PREAMBLE = """
A = torch.ops.aten
torch.manual_seed(0)
out = {}

def case(name, fn):
    out[name] = outcome(fn, bits=True)
"""
PROFILES = [None, *upstream.other_cpu_profiles()]


def agree_under(profile, program, control, against, at_least):
    """Every case's bits, dtype, strides or error agree with upstream's, both sides run under
    ``profile`` (None: this machine's; else another CPU profile: the SIMD lanes, SLEEF against
    libm, fused multiply-adds); the control case differs from ``against`` upstream."""
    env = upstream.other_cpu_profiles()[profile] if profile else {}
    code = sides.program(PREAMBLE + program + "print(json.dumps(out))\n")
    ours, up = upstream.run_both(code, env=env)
    differ = [k for k in up if ours[k] != up[k]]
    assert set(ours) == set(up) and len(up) >= at_least and not differ, differ[:5]
    assert up[control] != up[against]


@pytest.mark.parametrize("profile", PROFILES)
def test_bits_agree_with_upstream(profile):
    agree_under(profile, PROGRAM, "control-swapped", "glu torch.float32", 60)
