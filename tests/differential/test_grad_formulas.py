"""Backward formulas ours lacked or got wrong, against upstream.

FunctionsManual's i1_backward, i1e_backward and renorm_backward are judged by the gradient sweep's
harness (golden/grads.py) on every OpInfo sample of the entries that reach them: grad and gradgrad
agree with upstream, gradcheck and gradgradcheck pass; the control replays the same cases on ours
with each formula scaled by 1.01, and the rows must then diverge. norm_backward's ord 0 (no
gradient) and +-inf (NaN among the maxima) are compared bit for bit on one program.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare, grads, workers
from torchnative.testing.golden.pipeline import load_pair
from torchnative.testing.golden.report import GOOD

# OpInfo entry -> (the formula of derivatives.yaml it reaches, the case kind that runs it: i0's
# derivative is i1, so i1_backward is its second derivative)
FORMULAS = {"special.i1": ("i1_backward", "grad"), "special.i1e": ("i1e_backward", "grad"),
            "i0": ("i1_backward", "gradgrad"), "special.i0e": ("i1e_backward", "gradgrad"),
            "renorm": ("renorm_backward", "grad")}
SUITE = grads.GradSuite("formulas", tuple(FORMULAS), checks=1)
pytestmark = pytest.mark.golden


@pytest.fixture(scope="module")
def cases():
    if not upstream.available():
        upstream.missing(f"upstream interpreter missing: {upstream.UPSTREAM_PYTHON} (tools/setup.sh)")
    return grads.generate(SUITE, profiles=False)  # no cross-CPU allowance: stricter


def _rows(label: str, python: str | None = None) -> dict[str, dict]:
    try:
        grads.replay(SUITE, python or upstream.ours_python(), label)
        rep = grads.build(SUITE, label, grads.judge_all(SUITE, label))
    finally:
        shutil.rmtree(grads.results_dir(SUITE, label), ignore_errors=True)
    return {r["id"]: r for r in rep["rows"]}


def test_formulas_agree_with_upstream(cases):
    rows = _rows("pytest-formulas")
    for key in FORMULAS:
        mine = {rid: r for rid, r in rows.items() if r["key"] == key}
        kinds = {r["kind"] for r in mine.values()}
        assert {"grad", "gradgrad", "gradcheck", "gradgradcheck"} <= kinds, (key, kinds)
        bad = {rid: (r["status"], r["first_problem"]) for rid, r in mine.items() if r["status"] not in GOOD}
        assert not bad, bad
        assert sum(r["counts"].get("agrees", 0) for r in mine.values()) >= 4, mine


def test_a_scaled_formula_is_caught(cases, tmp_path):
    """Control: each formula scaled by 1.01 on ours; the rows that run it must diverge."""
    out = tmp_path / "sabotaged"
    names = sorted({name for name, _ in FORMULAS.values()})
    code = textwrap.dedent(f"""
        import torch
        from torchnative.csrc.autograd import generated
        for name in {names!r}:
            right = generated.NS[name]
            generated.NS[name] = lambda *a, right=right: right(*a) * 1.01
        from golden import grads_worker
        grads_worker.main(["replay", "--cases", {str(cases)!r}, "--out", {str(out)!r}, *{list(FORMULAS)!r}])
    """)
    python = upstream.ours_python()
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=600,
                          env=workers.worker_env(python))
    assert proc.returncode == 0, proc.stderr[-2000:]
    for key, (_, kind) in FORMULAS.items():
        doc, arrays = load_pair(cases, key)
        mine, mine_arrays = load_pair(out, key)
        tols = grads.tolerances(doc, arrays)
        samples = {s["id"]: s for s in doc["samples"]}
        statuses = set()
        for case in doc["cases"]:
            if case["variant"] != kind:
                continue
            s = samples[case["sample"]]
            view = {"id": s["id"], "dtype": s["dtype"], "args": [], "kwargs": {}, "random": s["random"],
                    "high": case.get("high"), "narrow": case.get("narrow")}
            c = compare.Case({"name": key, "family": "gradient"}, view, case, arrays, mine_arrays, tols[kind])
            statuses.add(compare.judge(c, mine["results"][case["id"]]).status)
        assert "diverges" in statuses, (key, kind, statuses)


NORM_PROGRAM = """
import json, math, torch
x = torch.tensor([[1.5, -2.0, 0.0], [3.0, float("nan"), -3.0]], dtype=torch.float64, requires_grad=True)
out = {}
for name, ord, dim in (("ord0", 0, None), ("ord0_dim", 0, 1), ("inf", math.inf, 1), ("ninf", -math.inf, 1),
                       ("two", 2, 1), ("one", 1, None)):
    y = torch.linalg.vector_norm(x, ord, dim)
    g, = torch.autograd.grad(y, x, torch.ones_like(y), allow_unused=True)
    out[name] = None if g is None else [repr(v) for v in g.flatten().tolist()]
print(json.dumps(out))
"""


def test_vector_norm_backward_structure_as_upstream():
    """norm_backward: ord 0 has no gradient (None, not zeros); ord +-inf spreads the gradient over
    the maxima with NaN entries counted among them (amax's derivative); exact values, bit for bit."""
    ours, up = upstream.run_both(NORM_PROGRAM)
    assert up["ord0"] is None and up["ord0_dim"] is None  # what the test holds ours to
    assert ours == up
