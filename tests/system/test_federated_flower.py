"""Flower for fleets (torchnative.nn.federated.flower).

A real local deployment -- `flower-superlink`, several `flower-supernode` processes over
127.0.0.1, the app submitted by `flwr run` -- with the participants on our torch; the same FedAvg
experiment run by the Engine over torch.distributed gives the same global model, which is also
recomputed here from the participants' own deltas.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from torchnative.nn.federated import FedAvg, experiment
from torchnative.nn.federated.flower import from_record, to_record
from torchnative.nn.federated.flower.deploy import Deployment

HERE = Path(__file__).parent
APP = HERE / "federated_flower"
BIN = Path(sys.executable).parent


def test_records_carry_our_tensors_through_flower():
    from flwr.app import ArrayRecord
    state = {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.tensor([1.5, -2.0], dtype=torch.float64)}
    rec = to_record(state)
    assert isinstance(rec, ArrayRecord) and list(rec) == ["w", "b"]
    back = from_record(rec, ["w", "b"])
    for k in state:
        assert back[k].dtype == state[k].dtype and torch.equal(back[k], state[k])
    with pytest.raises(ValueError, match="expected"):
        from_record(rec, ["b", "w"])


def _engine_run(tmp: Path, participants: int, rounds: int, alpha: float, lr: float, aggregator: str = "FedAvg"):
    out = tmp / "engine"
    res = experiment.launch(participants + 1, ["--rounds", str(rounds), "--alpha", str(alpha), "--lr", str(lr),
                                               "--aggregator", aggregator, "--out", str(out),
                                               "--save-globals", "--save-deltas"], timeout=600)
    assert all(code == 0 for code, _ in res.values()), res
    return out


def _flower_run(tmp: Path, participants: int, rounds: int, alpha: float, lr: float, aggregator: str = "FedAvg"):
    final = tmp / "flower_final.json"
    with Deployment(BIN, tmp / "deployment", nodes=participants) as d:
        out = d.run(APP, {"num-server-rounds": rounds, "num-participants": participants, "alpha": alpha,
                          "lr": lr, "out": str(final), "aggregator": aggregator}, timeout=600)
    assert final.exists(), out[-3000:]
    for pid in range(1, participants + 1):  # every participant computed on our torch
        assert "torchnative/_C" in Path(f"{final}.participant{pid}.torch").read_text()
    return {k: np.asarray(v, np.float32) for k, v in json.loads(final.read_text()).items()}, out


def _compare(tmp, flower, engine_out, participants, rounds):
    engine = np.load(engine_out / f"global_r{rounds}.npz")
    assert set(engine.files) == set(flower)
    for k in flower:
        assert np.array_equal(flower[k], engine[k].reshape(-1)), k  # same code, same torch: bit for bit

    # the last round recomputed from the participants' own deltas: FedAvg by sample count
    before = np.load(engine_out / f"global_r{rounds - 1}.npz")
    deltas = [np.load(engine_out / f"delta_r{rounds}_p{p}.npz") for p in range(1, participants + 1)]
    weights = [float(d["__num_samples"]) for d in deltas]
    g = {k: torch.from_numpy(before[k]) for k in before.files}
    new = FedAvg()(g, [{k: torch.from_numpy(d[k]) for k in before.files} for d in deltas], weights, rounds)
    for k in flower:
        assert np.array_equal(new[k].numpy().reshape(-1), flower[k]), k
    # control: the unweighted mean of the same deltas is another model (weights are applied)
    assert len(set(weights)) > 1
    flat = {k: before[k] + sum(d[k] for d in deltas) / len(deltas) for k in before.files}
    assert max(np.abs(flat[k].reshape(-1) - flower[k]).max() for k in flower) > 1e-4
    # control: the model moved (two rounds of training are not the initial model)
    start = np.load(engine_out / "global_r0.npz")
    assert max(np.abs(start[k].reshape(-1) - flower[k]).max() for k in flower) > 1e-3


def test_flower_deployment_gives_the_engine_model(tmp_path):
    """Two SuperNodes, two rounds: the CI-sized deployment."""
    flower, log = _flower_run(tmp_path, participants=2, rounds=2, alpha=0.5, lr=0.1)
    assert "[ROUND 2/2]" in log
    engine_out = _engine_run(tmp_path, participants=2, rounds=2, alpha=0.5, lr=0.1)
    _compare(tmp_path, flower, engine_out, 2, 2)


@pytest.mark.slow
@pytest.mark.parametrize("aggregator", ["FedAvg", "FedAdam"])
def test_larger_flower_deployment(tmp_path, aggregator):
    flower, log = _flower_run(tmp_path, participants=4, rounds=3, alpha=0.1, lr=0.1, aggregator=aggregator)
    engine_out = _engine_run(tmp_path, participants=4, rounds=3, alpha=0.1, lr=0.1, aggregator=aggregator)
    engine = np.load(engine_out / "global_r3.npz")
    for k in flower:
        assert np.array_equal(flower[k], engine[k].reshape(-1)), k
    if aggregator == "FedAvg":
        _compare(tmp_path, flower, engine_out, 4, 3)


@pytest.mark.slow
def test_flower_simulation_runtime_with_ray(tmp_path):
    """Flower's simulation runtime (Ray, from flwr[simulation]) runs the same app with the
    participants as Ray actors on our torch, and gives the same model as the deployment."""
    pytest.importorskip("ray", reason="flwr[simulation] (ray) is installed by tools/setup.sh")
    final = tmp_path / "sim_final.json"
    with Deployment(BIN, tmp_path / "simulation", nodes=2, simulation=True) as d:
        d.run(APP, {"num-server-rounds": 2, "num-participants": 2, "alpha": 0.5, "lr": 0.1,
                    "out": str(final)}, timeout=900)
    for pid in (1, 2):
        assert "torchnative/_C" in Path(f"{final}.participant{pid}.torch").read_text()
    sim = {k: np.asarray(v, np.float32) for k, v in json.loads(final.read_text()).items()}
    engine_out = _engine_run(tmp_path, participants=2, rounds=2, alpha=0.5, lr=0.1)
    engine = np.load(engine_out / "global_r2.npz")
    for k in sim:
        assert np.array_equal(sim[k], engine[k].reshape(-1)), k
    assert not d.procs or all(p.poll() is not None for p in d.procs.values())
    from torchnative.nn.federated.flower.deploy import _marked
    assert _marked(str((tmp_path / "simulation").resolve())) == []  # no Ray worker left behind
