"""Nested forward-mode levels against upstream torch 2.13.0 (separate processes): jvp inside jvp,
jacfwd of jacfwd, hessians of scalar and vector functions and of an MLP, jacfwd(jacrev) and
jacrev(jacfwd), jvp over vmap, vmap over nested jvp, a third derivative, and perturbation
confusion (an inner level must not see an outer level's tangent). Every case runs in float32 on
both sides and in float64 on upstream; ours is judged by ``compare.elementwise`` (tolerance from
upstream's own float32-vs-float64 error)."""

from __future__ import annotations

from tangent_compare import (agreement_test, disagreements, needs_upstream, ours_json,
                             upstream_fixture)

PROGRAM = r"""
import json, sys, torch
from torch.func import functional_call, hessian, jacfwd, jacrev, jvp, vmap

def rnd(*s, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*s, generator=g, dtype=torch.float64).to(dtype)

def cases(dt):
    x, xs, u, v = rnd(4, dtype=dt), rnd(3, 4, seed=1, dtype=dt), rnd(4, seed=2, dtype=dt), \
        rnd(4, seed=3, dtype=dt)
    f = lambda z: (z.sin() * z.exp()).sum() + (z ** 3).prod()
    g = lambda z: torch.stack([z.sin().sum() * z[0], (z ** 3).prod(), z.tanh().norm(),
                               z.softmax(0)[1], (z[:2] @ z[2:]).sigmoid()])
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3),
                              torch.nn.GELU(), torch.nn.Linear(3, 1)).to(dt)
    params = dict(net.named_parameters())
    mlp = lambda z: functional_call(net, params, (z,)).squeeze()
    w = rnd(1, 3, seed=4, dtype=dt)
    loss = lambda p: torch.nn.functional.cross_entropy(xs @ (p.reshape(4, 1) * w),
                                                       torch.tensor([0, 2, 1]))
    def inner_jvp(z):  # the inner tangent depends on the outer primal
        return jvp(lambda y: (y.exp() * y.cos()).sum(), (z,), (z.sin(),))[1]
    def confusion(z):  # d/dz [z * d/dy (z + y)] = 1 (2 if the levels were confused)
        return z * jvp(lambda y: z + y, (z,), (torch.ones_like(z),))[1]
    return {
        "jvp_of_jvp": jvp(lambda z: jvp(f, (z,), (u,))[1], (x,), (v,)),
        "jvp_of_jvp_inner_tangent_of_primal": jvp(inner_jvp, (x,), (v,)),
        "jacfwd_jacfwd_sin": jacfwd(jacfwd(torch.sin))(x),
        "jacfwd_jacfwd_scalar": jacfwd(jacfwd(f))(x),
        "jacfwd_jacfwd_vector": jacfwd(jacfwd(g))(x),
        "jacfwd_jacrev_vector": jacfwd(jacrev(g))(x),
        "jacrev_jacfwd_vector": jacrev(jacfwd(g))(x),
        "mlp_jacfwd_jacfwd": jacfwd(jacfwd(mlp))(x),
        "mlp_hessian": hessian(mlp)(x),
        "cross_entropy_jacfwd_jacfwd": jacfwd(jacfwd(loss))(u),
        "jvp_over_vmap": jvp(vmap(lambda r: (r.sin() * r).sum()), (xs,), (torch.ones_like(xs),)),
        "vmap_over_nested_jvp": vmap(lambda r: jvp(inner_jvp, (r,), (r.cos(),))[1])(xs),
        "vmap_jacfwd_jacfwd": vmap(jacfwd(jacfwd(lambda r: (r.sin() * r.exp()).sum())))(xs),
        "third_derivative": jacfwd(jacfwd(jacfwd(lambda r: (r ** 3 * r.sin()).sum())))(x[:3]),
        "perturbation_confusion": jvp(confusion, (x,), (torch.ones_like(x),)),
    }

def flat(v):
    if isinstance(v, (tuple, list)):
        return [y for t in v for y in flat(t)]
    return [float(y) for y in v.detach().double().reshape(-1)]

out = {}
for dt in (torch.float32, torch.float64):
    for k, v in cases(dt).items():
        out.setdefault(k, {})[str(dt)] = flat(v)
# after the levels are gone: a plain jvp and jacfwd, and no tangent left on anything
out["after"] = {"torch.float32": flat(jacfwd(torch.sin)(torch.zeros(2))),
                "torch.float64": flat(jacfwd(torch.sin)(torch.zeros(2, dtype=torch.float64)))}
print(json.dumps(out))
"""

# the control's fault: an inner level's formulas see the outer levels' tangents hidden too, so
# an inner tangent is a constant to the outer levels (second derivatives lose a term)
NO_OUTER = r"""
from torchnative.csrc.autograd.forward import levels as _lv
_orig = _lv.hide_from.__enter__
def _hide_everything(self):
    _orig(self)
    _lv.TLS.hidden = 0
_lv.hide_from.__enter__ = _hide_everything
"""


theirs = upstream_fixture(PROGRAM)


test_nested_levels_agree = agreement_test(PROGRAM)


@needs_upstream
def test_outer_levels_must_reach_inner_formulas(theirs):
    """The control: with the outer levels hidden from an inner level's formulas, the second
    derivatives are wrong and the comparison says so; first-order jacobians stay right."""
    bad = disagreements(ours_json(NO_OUTER + PROGRAM), theirs)
    assert {"jacfwd_jacfwd_scalar", "jacfwd_jacfwd_vector", "mlp_jacfwd_jacfwd",
            "cross_entropy_jacfwd_jacfwd", "jvp_of_jvp"} <= set(bad), bad
    assert "after" not in bad and "jacfwd_jacrev_vector" not in bad, bad


def test_levels_are_gone_after_nested_jvp():
    """Leaving the jvp levels pops the nested forward levels and drops their tangents; an
    exception inside the inner level unwinds them too."""
    code = ("import json, torch\nfrom torch.func import jacfwd, jvp\n"
            "from torchnative.csrc.autograd.forward import levels\n"
            "seen = []\n"
            "def inner(z):\n"
            "    seen.append(len(levels._LEVELS))\n"
            "    return z.sin()\n"
            "jacfwd(jacfwd(inner))(torch.ones(2))\n"
            "def boom(z):\n"
            "    raise ValueError('inside')\n"
            "try:\n"
            "    jvp(lambda z: jvp(boom, (z,), (z,))[1], (torch.ones(2),), (torch.ones(2),))\n"
            "except ValueError:\n"
            "    pass\n"
            "print(json.dumps([seen, len(levels._LEVELS), levels.JVP_DEPTH[0]]))\n")
    assert ours_json(code) == [[2], 0, 0]
