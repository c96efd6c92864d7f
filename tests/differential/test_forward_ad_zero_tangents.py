"""Upstream's efficient zero tangents, against upstream torch 2.13.0 (separate processes): an
input without a tangent contributes a zero tensor whose products vanish and whose sums return the
other side unchanged. That decides the sign of zeros in hessians (``torch.func.hessian`` of
``sin``, ``x ** 3``...: upstream's off-diagonal ``-0.0``) and keeps ``0 * inf`` out of tangents
(the tangent of ``x * y`` with an infinite ``x``). Values are compared at the derived tolerance
with infinities and NaNs in place, and the sign bit of every zero is compared exactly."""

from __future__ import annotations

from tangent_compare import disagreements, needs_upstream, ours_json, upstream_fixture

PROGRAM = r"""
import json, math, torch
import torch.autograd.forward_ad as fwAD
from torch.func import hessian, jacfwd, jacrev, jvp

def cases(dt):
    x = torch.tensor([0.3, -1.2, 2.0, 0.7], dtype=dt)
    t = torch.tensor([1.0, -0.5, 0.25, 2.0], dtype=dt)
    fs = {"sin": lambda z: z.sin().sum(), "cube": lambda z: (z ** 3).sum(),
          "sin_exp": lambda z: (z.sin() * z.exp()).sum(), "tanh": lambda z: z.tanh().sum(),
          "log_softmax": lambda z: z.log_softmax(0)[0], "norm": lambda z: z.norm()}
    out = {}
    for k, f in fs.items():
        out[k + "_hessian"] = hessian(f)(x)
        out[k + "_jacfwd_jacfwd"] = jacfwd(jacfwd(f))(x)
    inf_x = torch.tensor([math.inf, 1.0, -math.inf], dtype=dt)
    y = torch.tensor([2.0, 3.0, -1.0], dtype=dt)
    out["mul_by_infinite_primal"] = jvp(lambda a: a * y, (inf_x,), (torch.ones(3, dtype=dt),))[1]
    out["div_of_infinite_primal"] = jvp(lambda b: inf_x / b, (y,), (torch.ones(3, dtype=dt),))[1]
    out["sub_without_tangent"] = jvp(lambda a: y - a, (x[:3],), (-t[:3] * 0,))[1]
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        out["add_zero_and_negative_zero"] = fwAD.unpack_dual(
            d * 0.0 + torch.tensor([-0.0, -0.0, 0.0, -0.0], dtype=dt)).tangent
    return out

res = {}
for dt in (torch.float32, torch.float64):
    for k, v in cases(dt).items():
        v = v.detach().double().reshape(-1)
        res.setdefault(k, {})[str(dt)] = [float(a) for a in v]
        res[k].setdefault("signbit", torch.signbit(v).int().tolist())
print(json.dumps(res))
"""

# the control's fault: every tangent made up for an input without one is plain zeros
PLAIN = r"""
from torchnative.csrc.autograd.forward import zero_tangent as _zt
_zt.is_zero = lambda t: False
"""


theirs = upstream_fixture(PROGRAM)


@needs_upstream
def test_zero_tangents_as_upstream(theirs):
    assert not disagreements(ours_json(PROGRAM), theirs, signs=True)


@needs_upstream
def test_plain_zeros_are_caught(theirs):
    """The control: with plain zeros for the missing tangents, the hessians' zeros lose their
    sign and the infinite primal's tangent turns NaN; the comparison says so."""
    bad = disagreements(ours_json(PLAIN + PROGRAM), theirs, signs=True)
    assert {"sin_hessian", "cube_hessian", "mul_by_infinite_primal",
            "add_zero_and_negative_zero"} <= set(bad), bad
