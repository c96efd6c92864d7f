"""``torch._grouped_mm`` (the mixture-of-experts GEMM transformers calls on CPU) against upstream:
its four forms, output strides, its input checks, and its gradients (row- and column-major
weights, whose backward takes the transposed route). Upstream's kernel takes no float64, so the
derived tolerance comes from the same per-group products in float64 through upstream's ``mm``."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp

PROGRAM = """
import json, torch
torch.manual_seed(0)
a = torch.randn(10, 8); b = torch.randn(3, 8, 8)
offs = torch.tensor([3, 3, 10], dtype=torch.int32)
offs12 = torch.tensor([3, 3, 12], dtype=torch.int32)
a3 = torch.randn(3, 5, 8); b2 = torch.randn(8, 12)
a2 = torch.randn(5, 12); b22 = torch.randn(12, 8)
x3 = torch.randn(3, 5, 8); y3 = torch.randn(3, 8, 4)
out = {}
def both(name, y, ref):
    out[name] = [y.tolist(), ref.tolist(), list(y.stride())]
d = lambda t: t.double()
ref = torch.cat([d(a[0:3]) @ d(b[0]), d(a[3:3]) @ d(b[1]), d(a[3:10]) @ d(b[2])])
both("2d x 3d", torch._grouped_mm(a, b, offs), ref)
ref = torch.cat([d(a3[0]) @ d(b2[:, 0:3]), d(a3[1]) @ d(b2[:, 3:3]), d(a3[2]) @ d(b2[:, 3:12])], 1)
both("3d x 2d", torch._grouped_mm(a3, b2, offs12), ref)
ref = torch.stack([d(a2[:, 0:3]) @ d(b22[0:3]), d(a2[:, 3:3]) @ d(b22[3:3]),
                   d(a2[:, 3:12]) @ d(b22[3:12])])
both("2d x 2d", torch._grouped_mm(a2, b22, offs12), ref)
both("3d x 3d", torch._grouped_mm(x3, y3), d(x3) @ d(y3))
errors = []
for f in [lambda: torch._grouped_mm(a.double(), b.double(), offs),
          lambda: torch._grouped_mm(a, b, offs.long()),
          lambda: torch._grouped_mm(a, b),
          lambda: torch._grouped_mm(a, b[:, :4], offs),
          lambda: torch._grouped_mm(a, torch.randn(3, 8, 6), offs),
          lambda: torch._grouped_mm(a, b[:2], offs),
          lambda: torch._grouped_mm(a, b, offs, bias=torch.zeros(8)),
          lambda: torch._grouped_mm(a, b, offs, out_dtype=torch.bfloat16),
          lambda: torch._grouped_mm(a[None, None], b, offs)]:
    try:
        f()
        errors.append("no error")
    except Exception as e:
        errors.append(f"{type(e).__name__}: {str(e).splitlines()[0]}")
out["errors"] = errors
print(json.dumps(out))
"""
GRAD_PROGRAM = """
import json, torch
torch.manual_seed(0)
out = {}
a = torch.randn(10, 8, requires_grad=True); b = torch.randn(3, 8, 8, requires_grad=True)
offs = torch.tensor([3, 3, 10], dtype=torch.int32)
y = torch._grouped_mm(a, b, offs)
w = torch.randn(10, 8)
(y * w).sum().backward()
out["g"] = [a.grad.tolist(), b.grad.tolist()]
# column-major weights (as transformers' transposed expert weights)
bt = torch.randn(3, 8, 8).transpose(-2, -1).requires_grad_()
y = torch._grouped_mm(a, bt, offs)
ga, gb = torch.autograd.grad((y * w).sum(), (a, bt))
out["gcol"] = [ga.tolist(), gb.tolist(), list(gb.stride())]
x3 = torch.randn(3, 5, 8, requires_grad=True); y3 = torch.randn(3, 8, 4, requires_grad=True)
g = torch.autograd.grad(torch._grouped_mm(x3, y3).square().sum(), (x3, y3))
out["g3"] = [t.tolist() for t in g]
# float64 reference via bmm/mm
d = lambda t: t.detach().double().requires_grad_()
a64, b64 = d(a), d(b)
y = torch.cat([a64[0:3] @ b64[0], a64[3:3] @ b64[1], a64[3:10] @ b64[2]])
(y * w.double()).sum().backward()
out["ref_g"] = [a64.grad.tolist(), b64.grad.tolist()]
a64, bt64 = d(a), d(bt)
y = torch.cat([a64[0:3] @ bt64[0], a64[3:3] @ bt64[1], a64[3:10] @ bt64[2]])
ga, gb = torch.autograd.grad((y * w.double()).sum(), (a64, bt64))
out["ref_gcol"] = [ga.tolist(), gb.tolist()]
x64, y64 = d(x3), d(y3)
out["ref_g3"] = [t.tolist() for t in torch.autograd.grad((x64 @ y64).square().sum(), (x64, y64))]
print(json.dumps(out))
"""
FORMS = ["2d x 3d", "3d x 2d", "2d x 2d", "3d x 3d"]


@pytest.fixture(scope="module")
def runs():
    if not upstream.available():
        pytest.skip(upstream.missing("_grouped_mm comparison"))
    return upstream.run_both(PROGRAM)


@pytest.fixture(scope="module")
def grads():
    if not upstream.available():
        pytest.skip(upstream.missing("_grouped_mm gradient comparison"))
    return upstream.run_both(GRAD_PROGRAM)


@pytest.mark.parametrize("form", FORMS)
def test_form_agrees(runs, form):
    ours, up = runs
    values, ref, stride = ours[form]
    up_values, up_ref, up_stride = up[form]
    assert stride == up_stride
    problem = cmp.elementwise(np.array(values), np.array(up_values), np.array(up_ref), "float32")
    assert problem is None, problem


def test_errors_are_upstreams(runs):
    ours, up = runs
    assert ours["errors"] == up["errors"]
    assert "no error" not in up["errors"]


def test_criterion_sees_a_dropped_group(runs):
    ours, up = runs
    values = np.array(ours["2d x 3d"][0])
    values[3:] = 0  # the last expert's rows never computed
    assert cmp.elementwise(values, np.array(up["2d x 3d"][0]),
                           np.array(up["2d x 3d"][1]), "float32") is not None


@pytest.mark.parametrize("case", ["g", "gcol", "g3"])
def test_gradients_agree(grads, case):
    ours, up = grads
    for i in range(2):
        problem = cmp.elementwise(np.array(ours[case][i]), np.array(up[case][i]),
                                  np.array(up[f"ref_{case}"][i]), "float32", summed=True)
        assert problem is None, f"{case}[{i}]: {problem}"
    if case == "gcol":
        assert ours[case][2] == up[case][2]  # the column-major gradient's strides
