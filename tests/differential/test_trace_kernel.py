"""trace as a kernel (reduction_trace.py), against upstream torch 2.13.0 in separate processes,
bit for bit: the diagonal summed in order in the accumulate type (double for float32, float for
float16/bfloat16, int64 for every integer type, whose result is int64), rectangular, transposed
and strided matrices, NaN/inf, -0.0, the refused dtypes and the dimension error, out=, and the
gradient. Control: the float32 pairwise sum of the diagonal differs from upstream's.
"""

from __future__ import annotations

import pytest

from test_glu_kernel import PROFILES, agree_under

PROGRAM = r"""

m = torch.randn(40, 40) * 1e3
m.diagonal()[:5] = torch.tensor([1e8, 1.0, -1e8, 3e-5, 7.0])
for dt in (torch.float32, torch.float64, torch.complex64, torch.complex128):
    case(f"trace {dt}", lambda: torch.trace(m.to(dt)))
for dt in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
    case(f"trace {dt}", lambda: torch.trace((m * 1000).to(torch.int64).to(dt)))
case("int overflow", lambda: torch.trace(torch.full((3, 3), 2 ** 62, dtype=torch.int64)))
case("uint8 wide", lambda: torch.trace(torch.full((5, 5), 200, dtype=torch.uint8)))
for dt in (torch.float16, torch.bfloat16):
    case(f"trace {dt}", lambda: torch.trace(m.to(dt)))
    case(f"trace small {dt}", lambda: torch.trace((m[:9, :9] / 1000).to(dt)))
for dt in (torch.bool,):
    case(f"refused {dt}", lambda: torch.trace(torch.ones(3, 3).to(dt)))
case("refused 3-d bool", lambda: torch.trace(torch.ones(2, 2, 2, dtype=torch.bool)))
case("3-d half", lambda: torch.trace(torch.ones(2, 2, 2, dtype=torch.float16)))
case("bf16 nan", lambda: torch.trace(torch.full((3, 3), float("nan")).bfloat16()))
case("1-d", lambda: torch.trace(torch.ones(3)))
case("3-d", lambda: torch.trace(torch.ones(2, 2, 2)))
case("0-d", lambda: torch.trace(torch.tensor(2.0)))
case("rectangular", lambda: torch.trace(m[:7, :30]))
case("tall", lambda: torch.trace(m[:30, :3]))
case("transposed", lambda: torch.trace(m.t()))
case("strided", lambda: torch.trace(m[::3, 1::2]))
case("empty", lambda: torch.trace(torch.ones(0, 3)))
case("empty int", lambda: torch.trace(torch.ones(0, 3, dtype=torch.int32)))
case("nan inf", lambda: torch.trace(torch.tensor([[float("inf"), 1.0], [2.0, float("nan")]])))
case("neg zero", lambda: torch.trace(torch.tensor([[-0.0, 1.0], [2.0, -0.0]])))
case("cancel", lambda: torch.trace(torch.diag(torch.tensor([1e20, 1.0, -1e20, 1.0]))))
case("out=", lambda: torch.ops.aten.trace.out(m, out=torch.empty(3)))
case("out= int from float", lambda: torch.ops.aten.trace.out(m, out=torch.empty(0).long()))
case("method", lambda: m[:5, :5].trace())
mr = m[:6, :6].clone().requires_grad_()
case("grad", lambda: torch.autograd.grad(torch.trace(mr) * 2, mr)[0])
# control: a pairwise (numpy-style) float32 sum of the diagonal
case("control-float32-acc", lambda: m.diagonal().sum())
"""


@pytest.mark.parametrize("profile", PROFILES)
def test_bits_agree_with_upstream(profile):
    agree_under(profile, PROGRAM, "control-float32-acc", "trace torch.float32", 30)
