"""Autograd on our torch._C against upstream torch 2.13.0 (run in its own process).

- gradients of the cases in autograd_cases.py agree with upstream's within a tolerance derived
  from upstream's own float32-vs-float64 error, and the output's grad_fn has upstream's name;
- torch.autograd.gradcheck / gradgradcheck pass in float64;
- the behaviour probes in autograd_behaviour.py (errors and messages, hooks, custom Functions,
  double backward, grad modes, graph structure) give upstream's results;
- a few steps of every torch.optim optimizer (for-loop and foreach) agree with upstream's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden.compare import elementwise

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import autograd_behaviour  # noqa: E402
import autograd_cases  # noqa: E402
import autograd_training  # noqa: E402

needs_upstream = pytest.mark.skipif(not upstream.available(), reason="no upstream environment")


@pytest.fixture(scope="module")
def up_cases(tmp_path_factory):
    d = tmp_path_factory.mktemp("autograd")
    paths = {dt: d / f"{dt}.npz" for dt in ("float32", "float64")}
    upstream.concurrently(*[lambda dt=dt: upstream.run_script(HERE / "autograd_cases.py",
                                                              str(paths[dt]), dt)
                            for dt in paths])
    return {dt: (dict(np.load(p)), json.loads(Path(str(p) + ".json").read_text()))
            for dt, p in paths.items()}


def _agrees(ours: np.ndarray, low: np.ndarray, high: np.ndarray) -> str | None:
    """The golden harness's element-wise criterion (``compare.elementwise``): NaN/inf where
    upstream's are; each element within the tolerance derived from upstream's float32-vs-float64
    error on this output (widened by upstream's largest such error: ``summed``, as gradients sum
    terms that cancel), or no farther from float64 than upstream is there."""
    return elementwise(ours, low, high, "float32", summed=True)


@needs_upstream
@pytest.mark.parametrize("name", list(autograd_cases.CASES))
def test_gradients_agree(name, up_cases):
    import torch

    low, meta = up_cases["float32"]
    high, _ = up_cases["float64"]
    assert "error" not in meta[name], meta[name]
    out, grads, node = autograd_cases.run_case(torch, name, torch.float32)
    assert node == meta[name]["node"]
    assert len(grads) == meta[name]["n"]
    problems = []
    for key, ours in [("out", out)] + [(f"g{i}", g) for i, g in enumerate(grads)]:
        why = _agrees(ours, low[f"{name}/{key}"], high[f"{name}/{key}"])
        if why:
            problems.append(f"{key}: {why}")
    assert not problems, problems


def test_agreement_criterion_rejects_wrong_gradients():
    low = np.linspace(-1, 1, 50)
    high = low + 1e-9
    assert _agrees(low.copy(), low, high) is None
    for bad in (low * 1.001, low[::-1].copy(), np.zeros_like(low), low.reshape(5, 10)):
        assert _agrees(bad, low, high) is not None


GRADCHECK = {
    "mm_tanh_exp": (lambda a, b: torch_().tanh(b @ a[:, None]).exp(), [(3,), (2, 3)]),
    "softmax": (lambda a: torch_().softmax(a, -1), [(2, 4)]),
    "log_softmax": (lambda a: torch_().log_softmax(a, 0), [(4, 2)]),
    "layer_norm": (lambda a, w, b: torch_().native_layer_norm(a, [4], w, b, 1e-5)[0],
                   [(2, 4), (4,), (4,)]),
    "sum_mean_amax": (lambda a: a.sum(0) * a.mean(1).sum() + a.amax(1).sum(), [(3, 4)]),
    "div_pow": (lambda a, b: (a / (b * b + 1)) ** 2, [(3,), (3,)]),
    "views_index": (lambda a: a.view(2, 6).t()[1:4].reshape(-1)[torch_().tensor([0, 3, 3])],
                    [(3, 4)]),
    "cat_where": (lambda a, b: torch_().where(a > 0, torch_().cat([a, b]).sum(), a * b),
                  [(3,), (3,)]),
    "sigmoid_silu_gelu": (lambda a: torch_().sigmoid(a) + torch_().nn.functional.silu(a) +
                          torch_().nn.functional.gelu(a), [(5,)]),
    "inplace_view": (lambda a: autograd_cases._inplace_view(a), [(3, 4)]),
    "sdpa": (lambda q, k, v: torch_().nn.functional.scaled_dot_product_attention(q, k, v),
             [(1, 1, 3, 4)] * 3),
}
GRADGRADCHECK = {"sum_mean_amax", "div_pow", "sigmoid_silu_gelu", "mm_tanh_exp"}


def torch_():
    import torch

    return torch


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_gradcheck(name):
    import torch

    fn, shapes = GRADCHECK[name]
    rng = np.random.default_rng(7)
    xs = [torch.from_numpy(rng.standard_normal(s) + 0.1).requires_grad_() for s in shapes]
    assert torch.autograd.gradcheck(fn, xs)
    if name in GRADGRADCHECK:
        assert torch.autograd.gradgradcheck(fn, xs)


def test_gradcheck_detects_a_wrong_gradient():
    import torch

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return g * a  # should be 2a

    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert not torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)


@needs_upstream
def test_behaviour_agrees():
    import torch

    def run(env=None):
        proc = upstream.run_script(HERE / "autograd_behaviour.py", env=env)
        return json.loads(proc.stdout.strip().splitlines()[-1])

    # upstream, and upstream under this machine's other CPU profiles (at once): how far its
    # float64 values move there (BLAS products, SLEEF against glibc) widens the bar (docs/cpu.md)
    theirs, *others = upstream.concurrently(
        run, *upstream.under_other_profiles(run))
    ours = json.loads(json.dumps(autograd_behaviour.probes(torch)))
    assert set(ours) == set(theirs)
    diffs = {k: (ours[k], theirs[k]) for k in theirs
             if not _same(ours[k], theirs[k], [o[k] for o in others])}
    assert not diffs, json.dumps(diffs, indent=1)[:4000]


def test_behaviour_criterion_catches_a_moved_value():
    """Control for ``_same``: a list's values within 4 ulp of its largest (plus a profile's move
    on that list) pass; a value moved by 1e-12, or past the bar in a list where upstream did not
    move, does not."""
    big = 4 * np.finfo(np.float64).eps * 0.5
    theirs = [[0.1, 0.5], [0.1, 0.5]]
    other = [[0.1 + big, 0.5], [0.1, 0.5]]
    assert _same([[0.1 + 1.5 * big, 0.5], [0.1 + 0.9 * big, 0.5]], theirs, [other])
    assert not _same([[0.1, 0.5], [0.1 + 1.5 * big, 0.5]], theirs, [other])
    assert not _same([[0.1 + 1e-12, 0.5], [0.1, 0.5]], theirs, [other])
    assert not _same([[0.1 + 1.5 * big, 0.5], [0.1, 0.5]], theirs, [])


def _floats(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, float) for x in v)


def _same(a, b, others=()) -> bool:
    """Equal structure; floats (all computed in float64) within a few float64 ulp. A list of
    floats (a gradient, a sum whose terms may cancel) is held normwise: 4 ulp of its largest
    value, widened by upstream's largest move on it across the other CPU profiles (``others``:
    upstream's results there, of the same structure)."""
    if _floats(a) and _floats(b) and len(a) == len(b):
        move = max((abs(x - y) for o in others if _floats(o) and len(o) == len(b)
                    for x, y in zip(o, b)), default=0.0)
        bar = 4 * np.finfo(np.float64).eps * max(abs(y) for y in b) + move
        return all(x == y or abs(x - y) <= bar for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 4 * np.finfo(np.float64).eps * max(abs(a), abs(b))
    if isinstance(a, list) and isinstance(b, list):
        subs = [o if isinstance(o, list) and len(o) == len(b) else [None] * len(b) for o in others]
        return len(a) == len(b) and all(
            _same(x, y, [s[i] for s in subs if s[i] is not None]) for i, (x, y) in enumerate(zip(a, b)))
    return a == b


@needs_upstream
def test_optimizers_agree_step_by_step():
    import torch

    up32, up64 = (json.loads(p.stdout.strip().splitlines()[-1]) for p in upstream.concurrently(
        lambda: upstream.run_script(HERE / "autograd_training.py", "float32"),
        lambda: upstream.run_script(HERE / "autograd_training.py", "float64")))
    ours = autograd_training.run(torch, torch.float32)
    problems = []
    for key in up32:
        (l32, p32), (l64, p64), (lo, po) = up32[key], up64[key], ours[key]
        for what, o, u, h in [("losses", lo, l32, l64)] + [
                (f"param{i}", a, b, c) for i, (a, b, c) in enumerate(zip(po, p32, p64))]:
            why = _agrees(np.array(o), np.array(u), np.array(h))
            if why:
                problems.append(f"{key} {what}: {why}")
    assert not problems, problems
