"""A LoRA delta converts to and from a peft adapter: an adapter trained with peft on upstream
torch loads as a delta on ours (logits agree with upstream's peft model), and a delta trained on
ours saved with to_peft loads in peft on upstream (logits agree). Tolerance derived from
upstream's float32-vs-float64 error on the same logits (P90, floored at 4 ulp, widened by its
largest such error). Reverting the loaded delta gives the base logits bit for bit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import tolerance

PROGRAM = Path(__file__).parent / "delta_peft_program.py"
# three processes importing transformers and peft (~1.5 min on a quiet machine): run with --slow
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not upstream.available(), reason="upstream environment not set up")]


def run(side, mode, d):
    if side == "upstream":
        cmd, env = [str(upstream.UPSTREAM_PYTHON)], upstream.upstream_env() | {
            "PYTHONPATH": str(upstream.REPO / "src")}
    else:
        cmd, env = [upstream.ours_python()], None
    proc = subprocess.run([*cmd, str(PROGRAM), mode, str(d)], capture_output=True, text=True,
                          env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def agree(ours, low, high):
    tol = tolerance.derive([(low.astype(np.float64), high)], "float32")
    own = float(np.abs(low - high).max())
    diff = np.abs(ours.astype(np.float64) - low)
    ok = diff <= tol.atol + tol.rtol * np.abs(low) + own
    return None if ok.all() else f"{int((~ok).sum())}/{ok.size} off, max {diff.max():.3g}"


def test_peft_adapter_round_trip(tmp_path):
    run("upstream", "make", tmp_path)
    info = json.loads(run("ours", "ours", tmp_path).strip().splitlines()[-1])
    run("upstream", "load", tmp_path)
    up = np.load(tmp_path / "peft_logits.npz")
    ours = np.load(tmp_path / "ours_logits.npz")
    back = np.load(tmp_path / "peft_loaded_ours.npz")
    assert not np.allclose(up["f32"], up["base"], atol=1e-4)  # the adapter changes the output
    assert agree(ours["loaded"], up["f32"], up["f64"]) is None
    assert agree(ours["trained"], back["f32"], back["f64"]) is None
    assert not np.allclose(ours["trained"], ours["loaded"], atol=1e-4)
    assert info["revert_bitwise"]
    assert len(info["names"]) == 8  # q_proj and v_proj of two layers, A and B each
    assert info["nbytes"] < info["model_bytes"] / 10
