"""torch.autograd.forward_ad against upstream torch 2.13.0 (separate processes): dual tensors
through ordinary programs, views and in-place operations on duals, custom Function.jvp,
torch.autograd.functional, torch.func's jvp/jacfwd/hessian, and the errors upstream raises. Every value case runs in float32 on
both sides and in float64 on upstream; ours is judged by the golden harness's
``compare.elementwise`` (tolerance from upstream's own float32-vs-float64 error). Everything runs
twice: with TorchScript on (the default: torch.autograd.forward_ad loads upstream's jvp
decompositions, compiled through TorchScript, which supply the tangents of operators without a
forward formula) and with upstream's PYTORCH_JIT=0 switch (no decomposition: those operators raise
upstream's NotImplementedError)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare

needs_upstream = pytest.mark.skipif(not upstream.available(), reason="no upstream environment")

PROGRAM = r"""
import json, os, sys, torch
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as F

out = {"values": {}, "errors": {}, "facts": {}}

def vals(t):
    return None if t is None else [float(v) for v in t.detach().double().reshape(-1)]

def err(f):
    try:
        f()
        return "ok"
    except Exception as e:
        return type(e).__name__ + ": " + str(e).split("\n")[0]

def rnd(*s, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*s, generator=g, dtype=torch.float64).to(dtype)

def tangent(t):
    return fwAD.unpack_dual(t).tangent

class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.x, ctx.y = x, y
        return x * y, x.exp()
    @staticmethod
    def jvp(ctx, xt, yt):
        return xt * ctx.y + ctx.x * yt, xt * ctx.x.exp()
    @staticmethod
    def backward(ctx, a, b):
        return a * ctx.y + b * ctx.x.exp(), a * ctx.x

class ScaleInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.mul_(3)
    @staticmethod
    def jvp(ctx, xt):
        return xt.mul_(3)
    @staticmethod
    def backward(ctx, g):
        return g * 3

def cases(dt):
    v = {}
    x, xt = rnd(3, 4, seed=1, dtype=dt), rnd(3, 4, seed=2, dtype=dt)
    w, wt = rnd(5, 4, seed=3, dtype=dt), rnd(5, 4, seed=4, dtype=dt)
    with fwAD.dual_level():
        d, dw = fwAD.make_dual(x, xt), fwAD.make_dual(w, wt)
        v["pointwise"] = tangent(torch.sin(d) * d + d.exp() / (1 + d * d))
        v["mlp"] = tangent(F.gelu(F.linear(d, dw, torch.ones(5, dtype=dt))).softmax(-1))
        v["reduce"] = tangent(torch.stack([d.sum(), d.mean(), d.norm(), d.logsumexp((0, 1))]))
        v["matmul_plain_weight"] = tangent(d @ w.t())
        # views of a dual: the tangent of a view is that view of the tangent
        v["views"] = tangent(d.t()[1:3].reshape(-1).unsqueeze(0).expand(2, 6))
        v["unbind"] = tangent(torch.stack(d.unbind(1)[::2]))
        # in-place on a dual and on its views
        c = d.clone()
        c.mul_(2).sin_()
        c[0].add_(d[1])
        v["inplace"] = tangent(c)
        # in-place on a view of a plain tensor writes a tangent into its base; an older view
        # of that base reads its part of it
        base = torch.zeros(3, 4, dtype=dt)
        older = base[:, 2]
        base[1].copy_(d[0])
        v["base_after_view_write"] = tangent(base)
        v["older_view"] = tangent(older)
        # a plain tensor updated in place with a dual operand gets a tangent
        p = torch.ones(3, 4, dtype=dt)
        p.mul_(d)
        v["plain_inplace"] = tangent(p)
        # custom Function with jvp
        a, b = Mul.apply(d, dw[:3])
        v["function_jvp"] = torch.stack([tangent(a), tangent(b)])
        e = d.clone()
        v["function_inplace_jvp"] = tangent(ScaleInplace.apply(e))
        # forward over reverse: the tangent of a gradient
        xr = x.clone().requires_grad_()
        dr = fwAD.make_dual(xr, xt)
        g, = torch.autograd.grad((dr.sin() * dr).sum(), xr, create_graph=True)
        v["forward_over_reverse"] = tangent(g)
    v["functional_jvp"] = torch.autograd.functional.jvp(
        lambda t: t.sin() * t.exp(), x, xt)[1]
    v["functional_hvp"] = torch.autograd.functional.hvp(
        lambda t: (t.sin() * t).sum(), x, xt)[1]
    v["functional_hessian"] = torch.autograd.functional.hessian(
        lambda t: (t.tanh() ** 2).sum(), x[0])
    # torch.func's forward-mode transforms
    from torch.func import grad, hessian, jacfwd, jvp, vmap
    f = lambda a: a.sin() * a.exp()
    s = lambda a: (a.tanh() * a).sum()
    v["func_jvp"] = jvp(f, (x,), (xt,))[1]
    v["func_jacfwd"] = jacfwd(f)(x[0])
    v["func_jacfwd_argnums"] = torch.cat(
        jacfwd(lambda a, b: a * b.cos(), argnums=(0, 1))(x[0], x[1]))
    v["func_hessian"] = hessian(s)(x[0])
    v["func_jvp_of_grad"] = jvp(grad(s), (x[0],), (xt[0],))[1]
    v["func_vmap_of_jvp"] = vmap(lambda p, t: jvp(f, (p,), (t,))[1])(x, xt)
    # linear-algebra forward formulas (FunctionsManual's linalg_det_jvp, cholesky_jvp)
    sq, sqt = x[:, :3] + 2 * torch.eye(3, dtype=dt), xt[:, :3]
    spd, spdt = sq @ sq.mT + torch.eye(3, dtype=dt), sqt + sqt.mT
    v["det_jvp"] = jvp(torch.linalg.det, (sq,), (sqt,))[1].reshape(1)
    v["det_jvp_transposed"] = jvp(torch.linalg.det, (sq.mT,), (sqt,))[1].reshape(1)
    v["slogdet_jvp"] = torch.stack(jvp(torch.linalg.slogdet, (sq.mT,), (sqt,))[1])
    v["logdet_jvp"] = jvp(torch.logdet, (spd,), (spdt,))[1].reshape(1)
    v["cholesky_jvp"] = jvp(torch.linalg.cholesky, (spd,), (spdt,))[1]
    v["cholesky_upper_jvp"] = jvp(lambda a: torch.linalg.cholesky(a, upper=True), (spd,),
                                  (spdt,))[1]
    return v

def decomposed(dt):
    # operators without a forward formula whose tangents come from the jvp decompositions
    # torch._decomp.decompositions_for_jvp registers through TorchScript (TorchScript on);
    # with PYTORCH_JIT=0 none is registered and each raises upstream's NotImplementedError
    from torch.func import grad, hessian, jacfwd, jacrev, jvp
    x, xt = rnd(4, 5, seed=6, dtype=dt), rnd(4, 5, seed=7, dtype=dt)
    y = torch.tensor([1, 0, 3, 2])
    hv = lambda f: (lambda: jvp(grad(f), (x,), (xt,))[1])
    return {
        "trace": lambda: jvp(torch.trace, (x[:, :4],), (xt[:, :4],))[1],
        "logsigmoid": lambda: jvp(F.logsigmoid, (x,), (xt,))[1],
        "hvp_cross_entropy": hv(lambda z: F.cross_entropy(z, y)),
        "hvp_nll_loss_2d": lambda: jvp(grad(lambda z: F.nll_loss(
            F.log_softmax(z, 1), y.reshape(1, 2, 2))), (x.reshape(1, 5, 2, 2),),
            (xt.reshape(1, 5, 2, 2),))[1],
        "hvp_log_softmax": hv(lambda z: (F.log_softmax(z, 1) * z.detach().cos()).sum()),
        "hvp_softmax": hv(lambda z: (F.softmax(z, 0) * z.detach().sin()).sum()),
        "hvp_layer_norm": hv(lambda z: F.layer_norm(z, (5,)).pow(3).sum()),
        "hvp_batch_norm": hv(lambda z: F.batch_norm(z, None, None, training=True).pow(3).sum()),
        "hessian_cross_entropy": lambda: hessian(lambda z: F.cross_entropy(z, y[:2]))(x[:2]),
        "jacfwd_of_jacrev_softmax": lambda: jacfwd(jacrev(lambda z: z.softmax(0)))(x[0]),
        "functional_hvp_cross_entropy": lambda: torch.autograd.functional.hvp(
            lambda z: F.cross_entropy(z, y), x, xt)[1],
    }

jit_on = os.environ.get("PYTORCH_JIT", "1") == "1"
for dt in (torch.float32, torch.float64):
    for k, t in cases(dt).items():
        out["values"].setdefault(k, {})[str(dt)] = vals(t)
    for k, f in decomposed(dt).items():
        if jit_on:
            out["values"].setdefault(k, {})[str(dt)] = vals(f())
        else:
            out["errors"][k] = err(f)

x, t = rnd(3), rnd(3, seed=5)
e = out["errors"]
e["make_dual_outside_level"] = err(lambda: fwAD.make_dual(x, t))
with fwAD.dual_level() as lvl:
    out["facts"]["level"] = lvl
    d = fwAD.make_dual(x, t)
    e["shape_mismatch"] = err(lambda: fwAD.make_dual(x, rnd(4)))
    e["dual_of_dual"] = err(lambda: fwAD.make_dual(d, t))
    e["integer_primal"] = err(lambda: fwAD.make_dual(torch.ones(3, dtype=torch.long), t))
    e["nested_level"] = err(lambda: fwAD.enter_dual_level())
    e["exit_other_level"] = err(lambda: torch._C._exit_dual_level(level=3))
    e["out_function"] = err(lambda: torch.add(d, d, out=torch.empty(3, dtype=torch.float64)))
    e["no_formula"] = err(lambda: torch.ops.aten._cdist_forward(d[None], d[None], 2.0, None))
    e["custom_function_without_jvp"] = err(
        lambda: torch.autograd.Function.apply.__func__(type("NoJvp", (torch.autograd.Function,), {
            "forward": staticmethod(lambda ctx, a: a * 2),
            "backward": staticmethod(lambda ctx, g: g * 2)}), d))
    u = fwAD.unpack_dual(d)
    out["facts"]["unpack_is_namedtuple"] = [type(u).__name__, u.primal is not d,
                                             u.tangent is t, d._base is x]
    out["facts"]["no_tangent"] = tangent(d.detach()) is None and tangent(x) is None
    out["facts"]["comparison_no_tangent"] = tangent((d > 0).double()) is None
    y = d * 2
out["facts"]["after_exit"] = [fwAD.unpack_dual(y).tangent is None, fwAD.unpack_dual(d).tangent is None]
print(json.dumps(out))
"""

# the two settings: TorchScript on (PYTORCH_JIT unset, the default) and off
MODES = {"jit_on": {}, "jit_off": {"PYTORCH_JIT": "0"}}


def _env(mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTORCH_JIT"}
    return env | MODES[mode]


def _ours(code, mode="jit_on"):
    proc = subprocess.run([upstream.ours_python(), "-c", code], capture_output=True, text=True,
                          env=_env(mode), timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-4000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=list(MODES))
def both(request):
    if not upstream.available():
        upstream.missing("the upstream environment")
    mode = request.param
    return _ours(PROGRAM, mode), upstream.run_json(PROGRAM, env=MODES[mode] or None)


@needs_upstream
def test_values_agree(both):
    ours, up = both
    assert set(ours["values"]) == set(up["values"])
    bad = {}
    for k, u in up["values"].items():
        o = ours["values"][k]
        lo, hi, mine = u["torch.float32"], u["torch.float64"], o["torch.float32"]
        if (lo is None) != (mine is None):
            bad[k] = f"tangent {'missing' if mine is None else 'extra'}"
            continue
        if lo is not None:
            why = compare.elementwise(mine, lo, hi, "float32", summed=True)
            if why:
                bad[k] = why
    assert not bad, bad


@needs_upstream
def test_errors_as_upstream(both):
    ours, up = both
    assert ours["errors"] == up["errors"]


@needs_upstream
def test_facts_as_upstream(both):
    ours, up = both
    assert ours["facts"] == up["facts"]


def test_a_wrong_tangent_is_caught():
    """The comparison's control: a tangent off in one element is rejected."""
    import numpy as np

    lo = np.linspace(-1, 1, 12)
    hi = lo + 1e-9
    wrong = lo.copy()
    wrong[5] *= -1
    assert compare.elementwise(lo, lo, hi, "float32", summed=True) is None
    assert compare.elementwise(wrong, lo, hi, "float32", summed=True) is not None


@needs_upstream
def test_make_dual_with_torchscript_on():
    """The user's first line, with default settings: make_dual loads the jvp decompositions
    (TorchScript's CompilationUnit.define and torch.jit.script, then the JIT's decomposition
    registry) and computes as upstream does."""
    code = ("import json, torch, torch.autograd.forward_ad as fwAD\n"
            "with fwAD.dual_level():\n"
            "    d = fwAD.make_dual(torch.ones(2), torch.full((2,), 0.5))\n"
            "    u = fwAD.unpack_dual(d * 2)\n"
            "print(json.dumps([u.primal.tolist(), u.tangent.tolist(),\n"
            "                  'torch._decomp.decompositions_for_jvp' in __import__('sys').modules]))\n")
    up = upstream.run_json(code)
    assert up == [[2.0, 2.0], [1.0, 1.0], True]
    assert _ours(code) == up
