"""Each aggregator against Flower's strategy of the same name (flwr 1.42, its numpy code) on the
same participant updates, over several rounds for the stateful ones.

Tolerance: Flower's own float32 error, measured by running it again in float64: our float32
result must have a p90 error (against Flower in float64) within the p90 of Flower's float32
error, floored at 4 float32 ulp of the values, and a worst error no larger than Flower's worst
plus that tolerance. Controls (weights ignored, a wrong sign, a mean for a median, Krum keeping
the worst, FedAdam without its bias correction) must fail the same check.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from torchnative.nn import federated as fed

sys.path.insert(0, str(Path(__file__).parent / "federated_programs"))
from tolerance import within  # noqa: E402

flwr = pytest.importorskip("flwr", reason="flwr (the federated extra) is not installed")
from flwr.common import Code, FitRes, Status, ndarrays_to_parameters, parameters_to_ndarrays  # noqa: E402
from flwr.server import strategy as S  # noqa: E402
from flwr.server.strategy.aggregate import aggregate_krum  # noqa: E402

SHAPES = {"fc1.weight": (16, 12), "fc1.bias": (16,), "fc2.weight": (5, 16), "fc2.bias": (5,)}
N = 9          # participants (Bulyan with f=1 needs at least 7)
ROUNDS = 3


def make_rounds(seed=0, outlier=True):
    rng = np.random.default_rng(seed)
    g0 = {n: rng.normal(0, 0.5, s) for n, s in SHAPES.items()}
    rounds = []
    for r in range(ROUNDS):
        deltas = [{n: rng.normal(0.02 * (r + 1), 0.1, s) for n, s in SHAPES.items()} for _ in range(N)]
        if outlier:  # one far-off participant, so robust rules have something to reject
            deltas[3] = {n: d * -20.0 for n, d in deltas[3].items()}
        counts = [int(c) for c in rng.integers(10, 200, N)]
        rounds.append((deltas, counts))
    return g0, rounds


def flower_strategy(name, g0, dtype):
    init = ndarrays_to_parameters([g0[n].astype(dtype) for n in SHAPES])
    return {
        "FedAvg": lambda: S.FedAvg(),
        "FedAvgM": lambda: S.FedAvgM(initial_parameters=init, server_learning_rate=0.7, server_momentum=0.9),
        "FedProx": lambda: S.FedProx(proximal_mu=0.1),
        "FedAdam": lambda: S.FedAdam(initial_parameters=init),
        "FedYogi": lambda: S.FedYogi(initial_parameters=init),
        "FedAdagrad": lambda: S.FedAdagrad(initial_parameters=init),
        "FedMedian": lambda: S.FedMedian(),
        "FedTrimmedAvg": lambda: S.FedTrimmedAvg(beta=0.2),
        "Krum": lambda: S.Krum(num_malicious_clients=1, num_clients_to_keep=0),
        "MultiKrum": lambda: S.Krum(num_malicious_clients=1, num_clients_to_keep=4),
        "Bulyan": lambda: S.Bulyan(num_malicious_clients=1, to_keep=0),
    }[name]()


def ours(name):
    return {
        "FedAvg": lambda: fed.FedAvg(),
        "FedAvgM": lambda: fed.FedAvgM(server_learning_rate=0.7, server_momentum=0.9),
        "FedProx": lambda: fed.FedProx(proximal_mu=0.1),
        "FedAdam": lambda: fed.FedAdam(),
        "FedYogi": lambda: fed.FedYogi(),
        "FedAdagrad": lambda: fed.FedAdagrad(),
        "FedMedian": lambda: fed.FedMedian(),
        "FedTrimmedAvg": lambda: fed.FedTrimmedAvg(beta=0.2),
        "Krum": lambda: fed.Krum(num_malicious=1),
        "MultiKrum": lambda: fed.MultiKrum(num_malicious=1, to_keep=4),
        "Bulyan": lambda: fed.Bulyan(num_malicious=1),
    }[name]()


def run_flower(name, g0, rounds, dtype):
    """Flower sees participant models (global + delta), as its clients send them."""
    strat = flower_strategy(name, g0, dtype)
    g = {n: v.astype(dtype) for n, v in g0.items()}
    out = []
    for r, (deltas, counts) in enumerate(rounds, start=1):
        results = [(None, FitRes(Status(Code.OK, ""), ndarrays_to_parameters(
            [(g[n] + d[n].astype(dtype)).astype(dtype) for n in SHAPES]), c, {}))
                   for d, c in zip(deltas, counts)]
        params, _ = strat.aggregate_fit(r, results, [])
        g = dict(zip(SHAPES, [a.astype(dtype) for a in parameters_to_ndarrays(params)]))
        out.append(g)
    return out


def run_ours(agg, g0, rounds, weights_of=lambda c: c):
    g = {n: torch.tensor(v, dtype=torch.float32) for n, v in g0.items()}
    out = []
    for r, (deltas, counts) in enumerate(rounds, start=1):
        # a participant's delta as it would compute it: its float32 model minus the float32 global
        ups = [{n: (g[n] + torch.tensor(d[n], dtype=torch.float32)) - g[n] for n in SHAPES} for d in deltas]
        g = agg(g, ups, [weights_of(c) for c in counts], r)
        out.append({n: t.numpy().astype(np.float64) for n, t in g.items()})
    return out


def flat(gs):
    return np.concatenate([np.concatenate([g[n].ravel().astype(np.float64) for n in SHAPES]) for g in gs])


def agree(ours_out, f32, f64):
    return within(flat(ours_out), flat(f32), flat(f64))


NAMES = ["FedAvg", "FedAvgM", "FedProx", "FedAdam", "FedYogi", "FedAdagrad", "FedMedian",
         "FedTrimmedAvg", "Krum", "MultiKrum", "Bulyan"]


@pytest.fixture(scope="module")
def data():
    return make_rounds()


@pytest.mark.parametrize("name", NAMES)
def test_agrees_with_flower(name, data):
    g0, rounds = data
    f32 = run_flower(name, g0, rounds, np.float32)
    f64 = run_flower(name, g0, rounds, np.float64)
    ok, figures = agree(run_ours(ours(name), g0, rounds), f32, f64)
    assert ok, f"{name}: ours p90/max error {figures['p90']:.3g}/{figures['max']:.3g}, tolerance {figures['tol']:.3g}, flower's own max {figures['upstream_max']:.3g}"


def _fedadam_without_bias_correction():
    a = fed.FedAdam()
    a.step_size = lambda r: a.eta
    return a


class _KrumWorst(fed.Krum):
    def aggregate(self, g, updates, weights, round):
        from torchnative.nn.federated.aggregators.krum import krum_scores
        i = int(krum_scores(updates, self.num_malicious).argmax())
        return {n: g[n] + updates[i][n] for n in g}


class _Negated(fed.FedAvg):
    def aggregate(self, g, updates, weights, round):
        return {n: g[n] - (v - g[n]) for n, v in super().aggregate(g, updates, weights, round).items()}


CONTROLS = {
    "weights ignored": ("FedAvg", lambda: fed.FedAvg(), lambda c: 1),
    "wrong sign": ("FedAvg", lambda: _Negated(), lambda c: c),
    "mean for a median": ("FedMedian", lambda: fed.FedAvg(), lambda c: 1),
    "krum keeps the worst": ("Krum", lambda: _KrumWorst(num_malicious=1), lambda c: c),
    "no bias correction": ("FedAdam", _fedadam_without_bias_correction, lambda c: c),
    "trimmed nothing": ("FedTrimmedAvg", lambda: fed.FedTrimmedAvg(beta=0.0), lambda c: c),
}


@pytest.mark.parametrize("control", sorted(CONTROLS))
def test_controls_are_caught(control, data):
    name, make, weights_of = CONTROLS[control]
    g0, rounds = data
    f32 = run_flower(name, g0, rounds, np.float32)
    f64 = run_flower(name, g0, rounds, np.float64)
    ok, _ = agree(run_ours(make(), g0, rounds, weights_of), f32, f64)
    assert not ok, f"control {control!r} passed the comparison"


def test_krum_selection_matches_flower_indices(data):
    """Not only values: Multi-Krum keeps the same participants as Flower's aggregate_krum."""
    g0, rounds = data
    deltas, counts = rounds[0]
    from torchnative.nn.federated.aggregators.krum import krum_select
    ups = [{n: torch.tensor(d[n]) for n in SHAPES} for d in deltas]
    mine = sorted(krum_select(ups, 1, 0))
    theirs = aggregate_krum([([g0[n] + d[n] for n in SHAPES], c) for d, c in zip(deltas, counts)], 1, 0)
    idx = [i for i, d in enumerate(deltas) if np.allclose(theirs[0], g0["fc1.weight"] + d["fc1.weight"])]
    assert mine == idx and 3 not in mine


@pytest.mark.parametrize("bad,match", [
    (lambda u: {**u, "fc1.bias": torch.full((16,), float("nan"))}, "fc1.bias.*non-finite"),
    (lambda u: {**u, "fc2.bias": torch.tensor([1.0, float("inf"), 0, 0, 0])}, "fc2.bias.*non-finite"),
    (lambda u: {**u, "fc1.weight": torch.zeros(16, 11)}, r"fc1.weight.*shape \(16, 11\), expected \(16, 12\)"),
    (lambda u: {k: v for k, v in u.items() if k != "fc2.weight"}, "missing \\['fc2.weight'\\]"),
])
def test_bad_updates_refused_by_name(bad, match):
    g = {n: torch.zeros(s) for n, s in SHAPES.items()}
    good = {n: torch.ones(s) for n, s in SHAPES.items()}
    with pytest.raises(fed.RejectedUpdate, match=match):
        fed.FedAvg()(g, [good, bad(good)], [1, 1])


def test_bulyan_refuses_too_few():
    g = {n: torch.zeros(s) for n, s in SHAPES.items()}
    ups = [{n: torch.ones(s) for n, s in SHAPES.items()} for _ in range(6)]
    with pytest.raises(ValueError, match=r"Bulyan needs at least 4\*num_malicious\+3 = 7 updates, got 6"):
        fed.Bulyan(num_malicious=1)(g, ups, [1] * 6)
