"""The same FedAvg run (digits, 3 participants, Dirichlet 0.5) on our torch and on upstream torch
(the project's src/ on PYTHONPATH, gloo), real processes, compared round by round.

Tolerance: upstream's own float32 error, from the same run in float64 (p90, floored at 4 float32
ulp of the values); ours must have a p90 error within it and a worst error no larger than
upstream's worst plus it. The global model is also recomputed from the deltas the participants
sent, independently (numpy, float64). Controls: weights ignored, a dropped participant counted,
a wrong sign and lr=0 must each be caught.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from torchnative.nn.federated import experiment
from torchnative.testing import upstream

sys.path.insert(0, str(Path(__file__).parent / "federated_programs"))
import tolerance  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OURS = str(ROOT / ".venv" / "bin" / "python")
WORLD, ROUNDS = 4, 3
ARGS = ["--rounds", str(ROUNDS), "--alpha", "0.5", "--lr", "0.1", "--save-globals", "--save-deltas",
        "--timeout", "120"]


def run(tmp, python, *extra, env=None):
    out = tmp / "run"
    res = experiment.launch(WORLD, ARGS + ["--out", str(out), *extra], python=python, timeout=900, env=env)
    bad = {r: (c, e[-2000:]) for r, (c, e) in res.items() if c != 0}
    assert not bad, bad
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not upstream.available():
        upstream.missing("upstream torch (.venv-upstream) for the FedAvg agreement run")
    env = upstream.upstream_env()
    up_py = str(upstream.UPSTREAM_PYTHON)
    return {
        "ours": run(tmp_path_factory.mktemp("ours"), OURS),
        "up32": run(tmp_path_factory.mktemp("up32"), up_py, env=env),
        "up64": run(tmp_path_factory.mktemp("up64"), up_py, "--dtype", "float64", env=env),
        "lr0": run(tmp_path_factory.mktemp("lr0"), up_py, "--lr", "0", env=env),
    }


def globals_of(out):
    gs = []
    for r in range(ROUNDS + 1):
        z = np.load(out / f"global_r{r}.npz")
        gs.append({k: z[k].astype(np.float64) for k in z.files})
    return gs


def deltas_of(out, r):
    ds = {}
    for f in sorted(out.glob(f"delta_r{r}_p*.npz")):
        z = np.load(f)
        pid = int(f.stem.split("_p")[1])
        ds[pid] = (int(z["__num_samples"]), {k: z[k].astype(np.float64) for k in z.files if k != "__num_samples"})
    return ds


def vec(g):
    return np.concatenate([g[k].ravel() for k in sorted(g)])


def within(candidate, f32, f64):
    return tolerance.within(vec(candidate), vec(f32), vec(f64))[0]


def test_each_side_ran_its_own_torch(runs):
    for k in runs:
        for f in runs[k].glob("torch_rank*.txt"):
            c_file = f.read_text()
            assert ("torchnative" in c_file) == (k == "ours"), (k, f.name, c_file)
    assert len(list(runs["up32"].glob("torch_rank*.txt"))) == WORLD


def test_ours_agrees_with_upstream_round_by_round(runs):
    ours, u32, u64 = (globals_of(runs[k]) for k in ("ours", "up32", "up64"))
    for r in range(ROUNDS + 1):
        assert within(ours[r], u32[r], u64[r]), f"round {r}: ours differs from upstream beyond its own float32 error"
    acc = [[row["accuracy"] for row in json.loads((runs[k] / "rounds.json").read_text())] for k in ("ours", "up32")]
    assert acc[0] == pytest.approx(acc[1], abs=1 / 359)   # at most one test digit apart


def test_agreement_check_catches_a_different_run(runs):
    """The comparison is not vacuous: upstream's round r+1 is not within tolerance of round r."""
    u32, u64 = globals_of(runs["up32"]), globals_of(runs["up64"])
    assert not within(u32[1], u32[2], u64[2])


def fedavg(prev, deltas, *, weighted=True, sign=1.0, dtype=np.float64):
    total = sum(n for n, _ in deltas.values()) if weighted else len(deltas)
    out = {}
    for k in prev:
        acc = np.zeros_like(prev[k], dtype=dtype)
        for n, d in deltas.values():
            acc = acc + d[k].astype(dtype) * dtype((n if weighted else 1) / total)
        out[k] = prev[k].astype(dtype) + sign * acc
    return out


def recomputed_ok(gs, out, r, **kw):
    deltas = deltas_of(out, r)
    return within(fedavg(gs[r - 1], deltas, **kw), fedavg(gs[r - 1], deltas, dtype=np.float32), gs[r])


def test_global_recomputed_from_the_deltas(runs):
    out = runs["ours"]
    gs = globals_of(out)
    report = json.loads((out / "rounds.json").read_text())
    for r in range(1, ROUNDS + 1):
        deltas = deltas_of(out, r)
        assert sorted(deltas) == report[r - 1]["reported"] == [1, 2, 3]
        assert {str(p): n for p, (n, _) in deltas.items()} == report[r - 1]["weights"]
        assert len({n for n, _ in deltas.values()}) > 1, "the check needs unequal sample counts"
        assert recomputed_ok(gs, out, r), f"round {r}: global is not the weighted mean of the deltas"


@pytest.mark.parametrize("control", ["weights ignored", "wrong sign", "dropped participant counted"])
def test_recomputation_controls_are_caught(runs, control):
    out = runs["ours"]
    gs = globals_of(out)
    r = 2
    deltas = deltas_of(out, r)
    if control == "weights ignored":
        cand = fedavg(gs[r - 1], deltas, weighted=False)
    elif control == "wrong sign":
        cand = fedavg(gs[r - 1], deltas, sign=-1.0)
    else:  # a participant that did not report this round counted anyway (its previous delta)
        extra = dict(deltas)
        extra[99] = deltas_of(out, r - 1)[1]
        cand = fedavg(gs[r - 1], extra)
    assert not within(cand, fedavg(gs[r - 1], deltas, dtype=np.float32), gs[r])


def learned(out) -> bool:
    acc = [row["accuracy"] for row in json.loads((out / "rounds.json").read_text())]
    return acc[-1] > 0.5 and acc[-1] > acc[0]


def test_learns_and_lr0_control(runs):
    assert learned(runs["ours"])
    assert not learned(runs["lr0"])
    g = globals_of(runs["lr0"])
    assert all(np.array_equal(vec(g[0]), vec(g[r])) for r in range(1, ROUNDS + 1)), "lr=0 moved the model"


def test_in_process_simulation_matches_the_engine(runs):
    """federated.simulate (used for the robustness sweep) takes the same steps as the engine."""
    import torch

    from torchnative.nn.federated import FedAvg, digits
    from torchnative.nn.federated.simulate import simulate
    xtr, ytr, _, _ = digits.load(0)
    parts = digits.dirichlet_split(ytr, WORLD - 1, 0.5, 0)
    data = {i + 1: digits.batches(xtr[p], ytr[p]) for i, p in enumerate(parts)}
    net = digits.model(0)
    sims = [{n: p.detach().numpy().astype(np.float64) for n, p in net.named_parameters()}]
    simulate(net, data, rounds=ROUNDS, aggregator=FedAvg(), lr=0.1,
             on_round=lambda r, m: sims.append({n: p.detach().numpy().astype(np.float64)
                                                for n, p in m.named_parameters()}))
    u32, u64, ours = globals_of(runs["up32"]), globals_of(runs["up64"]), globals_of(runs["ours"])
    for r in range(ROUNDS + 1):
        assert within(sims[r], u32[r], u64[r]), f"round {r}"
        assert np.array_equal(vec(sims[r]), vec(ours[r])), f"round {r}: not bit-identical to the engine on ours"
    assert torch.__version__  # ran on our torch, in this process
