"""The Engine reports the run's (epsilon, delta) when its transform is differentially private:
after every round and at the end, from the RDP accountant, with the round's sample rate (cohort
over available participants) for server-side noise and rate 1 for client-side noise. Compared
with opacus 1.6.0's RDPAccountant (run in upstream's environment) on the same parameters.
`torchnative federated --privacy ...` prints it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchnative.nn.federated import Engine, privacy
from torchnative.nn.federated.coordinator import RoundReport
from torchnative.nn.federated.privacy import RDPAccountant
from torchnative.nn.federated.transform import Transform
from torchnative.testing import upstream

SRC = str(Path(__file__).resolve().parents[2] / "src")
DELTA = 1e-5
SERVER = (1.1, 0.5, 3)   # noise multiplier, sample rate (2 of 4 per round), rounds
LOCAL = (0.7, 1.0, 4)
REL = 1e-9               # both sides compute the same float64 quantity (test_federated_privacy.py)


@pytest.fixture(scope="module")
def opacus():
    """opacus's epsilon after each round of the two runs."""
    if not upstream.available():
        upstream.missing("the upstream environment (.venv-upstream)")
    code = f"""
import json, warnings
warnings.simplefilter("ignore")
from opacus.accountants import RDPAccountant
out = {{}}
for name, (z, q, n) in {{"server": {SERVER!r}, "local": {LOCAL!r}}}.items():
    acc, eps = RDPAccountant(), []
    for _ in range(n):
        acc.step(noise_multiplier=z, sample_rate=q)
        eps.append(acc.get_privacy_spent(delta={DELTA!r})[0])
    out[name] = eps
print(json.dumps(out))
"""
    return upstream.run_json(code, timeout=600, env={"PYTHONPATH": SRC})


def close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= REL * abs(theirs)


def test_cli_run_reports_epsilon_per_round_as_opacus(opacus, tmp_path):
    """A real world (coordinator + 4 participant processes, server-side fixed clipping, a seeded
    half of the participants per round) through `torchnative federated`."""
    z, q, n = SERVER
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "torchnative.cli", "federated", "--participants", "4",
                           "--rounds", str(n), "--select", str(q), "--privacy", "fixed",
                           "--noise-multiplier", str(z), "--privacy-delta", str(DELTA), "--out", str(out)],
                          capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads((out / "rounds.json").read_text())
    assert [len(r["selected"]) for r in rows] == [2] * n and all(r["sample_rate"] == q for r in rows)
    assert [r["delta"] for r in rows] == [DELTA] * n
    for r, theirs in zip(rows, opacus["server"]):
        assert close(r["epsilon"], theirs), (r["round"], r["epsilon"], theirs)
    assert f"(epsilon, delta) = ({opacus['server'][-1]:.4f}, {DELTA:g}) after {n} rounds" in proc.stdout, proc.stdout
    # controls: the same comparison rejects an accountant without the sampling, one that counts
    # only the last round, and one that reports a single round's epsilon for the run
    no_sampling, last_only = RDPAccountant(), RDPAccountant()
    no_sampling.step(z, 1.0, n)
    last_only.step(z, q, 1)
    assert not close(no_sampling.get_epsilon(DELTA)[0], opacus["server"][-1])
    assert not close(last_only.get_epsilon(DELTA)[0], opacus["server"][-1])
    assert not close(rows[0]["epsilon"], opacus["server"][-1])


def _engine(transform):
    import torch
    return Engine(torch.nn.Linear(2, 1), transform=transform, rank=0, world_size=3, privacy_delta=DELTA)


def _report(r, selected, available):
    return RoundReport(r, list(range(1, selected + 1)), [], {}, {}, {}, available=available)


def test_local_noise_is_accounted_without_amplification(opacus):
    z, _, n = LOCAL
    eng = _engine(privacy.LocalGaussian(1.0, z))
    eng.accountant = RDPAccountant()
    cost = eng.transform.privacy_cost()
    for r, theirs in zip(range(1, n + 1), opacus["local"]):
        rep = _report(r, 2, 4)   # half selected: the coordinator still knows who, no amplification
        eng._account(rep, *cost)
        assert close(rep.epsilon, theirs) and rep.delta == DELTA
    assert close(eng.privacy[0], opacus["local"][-1]) and eng.privacy[1] == DELTA


def test_every_dp_transform_declares_its_cost_and_others_none():
    assert privacy.FixedClipping(1.0, 0.9).privacy_cost() == (0.9, True)
    assert privacy.AdaptiveClipping(0.9, 10).privacy_cost() == (0.9, True)
    assert privacy.LocalGaussian(1.0, 0.9).privacy_cost() == (0.9, False)
    assert Transform().privacy_cost() is None
    assert _engine(None).privacy is None
    with pytest.raises(ValueError, match="privacy_delta"):
        Engine(__import__("torch").nn.Linear(2, 1), rank=0, privacy_delta=0.0)
