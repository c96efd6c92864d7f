"""Faults with real processes on our torch: a participant killed mid-round, a late participant
refused by round number, a crashed participant rejoining, NaN and wrong-shape updates refused by
name, a quorum not met, a payload over the cap. Every wait is bounded (the launcher kills the
world at a hard timeout, so a hang fails the test instead of stalling it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from torchnative.nn.federated import experiment

ROOT = Path(__file__).resolve().parents[2]
OURS = str(ROOT / ".venv" / "bin" / "python")
PROGRAM = str(ROOT / "tests" / "system" / "federated_programs" / "fault_worker.py")
HARD_TIMEOUT = 900


def spawn(python, rank, world, port, args, env):
    return subprocess.Popen([python, PROGRAM, "--rank", str(rank), "--world", str(world), "--port", str(port), *args],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def run_world(world, common, per_rank, *, restart=(), python=OURS):
    """Run ranks 0..world-1; a rank in `restart` that dies by a signal is started again once,
    without its fault flags. Returns rank -> returncode (the restarted one's final code)."""
    port = experiment.free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([experiment.src_dir(), env.get("PYTHONPATH", "")])
    env.setdefault("OMP_NUM_THREADS", "1")
    procs = {r: spawn(python, r, world, port, common + per_rank.get(r, []), env) for r in range(world)}
    restarted, codes, errs = set(), {}, {}
    deadline = time.monotonic() + HARD_TIMEOUT
    try:
        while len(codes) < world:
            if time.monotonic() > deadline:
                raise TimeoutError(f"world did not finish within {HARD_TIMEOUT} s: still running {sorted(set(procs) - set(codes))}")
            for r, p in procs.items():
                if r in codes or p.poll() is None:
                    continue
                if p.returncode < 0 and r in restart and r not in restarted:
                    restarted.add(r)
                    procs[r] = spawn(python, r, world, port, common, env)
                    continue
                codes[r] = p.returncode
                errs[r] = p.stderr.read()[-3000:]
            time.sleep(0.1)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    return codes, errs, restarted


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    out = tmp_path_factory.mktemp("faults")
    # round 1 (cold processes: first calls are slow on a loaded 2-core machine) may take long;
    # round 2 waits the whole later timeout for the late participant
    common = ["--rounds", "5", "--min-participants", "1", "--first-timeout", "240", "--timeout", "25", "--lr", "0.1",
              "--out", str(out), "--save-globals", "--save-deltas"]
    per_rank = {1: ["--die-at", "2"], 2: ["--late-at", "2"], 3: ["--nan-at", "2", "--shape-at", "3"]}
    codes, errs, restarted = run_world(5, common, per_rank, restart={1})
    assert codes == {r: 0 for r in range(5)}, (codes, errs)
    assert restarted == {1}
    rounds = {row["round"]: row for row in json.loads((out / "rounds.json").read_text())}
    parts = {r: json.loads((out / f"participant_{r}.json").read_text()) for r in range(1, 5)}
    return out, rounds, parts


def test_round_completes_with_the_reporters(scenario):
    _, rounds, _ = scenario
    assert rounds[1]["reported"] == [1, 2, 3, 4]
    r2 = rounds[2]
    assert r2["reported"] == [4]
    assert "connection" in r2["dropped"]["1"] or "lost" in r2["dropped"]["1"], r2["dropped"]
    assert "no update within the round's timeout" in r2["dropped"]["2"]
    assert "'0.bias' has" in r2["refused"]["3"] and "non-finite" in r2["refused"]["3"]


def test_wrong_shape_refused_by_name(scenario):
    _, rounds, parts = scenario
    assert "'2.weight' has shape (10, 31), expected (10, 32)" in rounds[3]["refused"]["3"]
    assert 3 not in rounds[3]["reported"]
    r3 = [p for p in parts[3] if p["round"] == 3][0]
    assert r3["status"].startswith("refused:") and "2.weight" in r3["status"]


def test_late_participant_refused_by_round_number(scenario):
    _, rounds, parts = scenario
    stale = [s for r in rounds.values() for s in r["stale"]]
    assert [(s[0], s[1]) for s in stale] == [(2, 2)], stale
    assert "round 2 is closed" in stale[0][2]
    mine = {p["round"]: p["status"] for p in parts[2]}
    assert mine[2].startswith("refused:") and "round 2 is closed" in mine[2]
    assert any(mine.get(r) == "sent" and 2 in rounds[r]["reported"] for r in (3, 4, 5)), mine


def test_crashed_participant_rejoins(scenario):
    _, rounds, parts = scenario
    assert any(1 in rounds[r]["reported"] for r in (3, 4, 5)), {r: rounds[r]["reported"] for r in rounds}
    assert min(p["round"] for p in parts[1]) >= 3   # the restarted process's own history


def _load(path):
    z = np.load(path)
    return {k: z[k].astype(np.float64) for k in z.files if k != "__num_samples"}, (int(z["__num_samples"]) if "__num_samples" in z.files else None)


def test_dropped_and_refused_are_not_averaged(scenario):
    """Round 2's global is the weighted mean of exactly the reporters' deltas; counting the late
    participant's update (it exists: it was sent, then refused) is caught."""
    # one reporter: its delta is the whole step, so this also pins the sign
    out, rounds, _ = scenario
    g1, _ = _load(out / "global_r1.npz")
    g2, _ = _load(out / "global_r2.npz")

    def mean_of(pids):
        ds = [_load(out / f"delta_r2_p{p}.npz") for p in pids]
        total = sum(n for _, n in ds)
        return {k: g1[k] + sum(d[k] * (n / total) for d, n in ds) for k in g1}

    def err(a):
        return max(float(np.abs(a[k] - g2[k]).max()) for k in g2)

    scale = max(float(np.abs(v).max()) for v in g2.values())
    tol = 8 * np.finfo(np.float32).eps * scale
    assert err(mean_of([4])) <= tol
    assert err(mean_of([2, 4])) > 100 * tol


def test_quorum_not_met_fails_cleanly_and_payload_cap(tmp_path):
    """Participant 1 dies, participant 2 sends twice the bytes the cap allows: only one of three
    reports, min_participants=2, so the round fails naming both; nothing is averaged."""
    common = ["--rounds", "2", "--min-participants", "2", "--first-timeout", "240", "--timeout", "60", "--out", str(tmp_path),
              "--max-payload-bytes", "12000", "--save-globals"]
    codes, errs, _ = run_world(4, common, {1: ["--die-at", "1"], 2: ["--wide"]})
    assert codes[0] == 3 and codes[1] == -9 and codes[2] == 3 and codes[3] == 0, (codes, errs)
    err = (tmp_path / "error_rank0.txt").read_text()
    assert err.startswith("QuorumError: round 1: 1 of 3 selected participants reported"), err
    assert "nothing was averaged" in err and "1: " in err
    assert "2: participant 2 round 1: payload of 19280 bytes exceeds the cap of 12000 bytes" in err
    assert (tmp_path / "error_rank2.txt").read_text().startswith("PayloadTooLarge: participant 2 round 1: payload")
    assert not (tmp_path / "global_r1.npz").exists()
