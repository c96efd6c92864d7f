"""Test-time learning on the real SmolLM2-135M-Instruct (tests/system/tlm_program.py), on ours and on
upstream, each in its own process: the LoRA factors after every step and the last-token logits
agree at the tolerance derived from upstream's float32-vs-float64 error; held-out perplexity on
Python source drops after online learning and is back, bit for bit, after revert; the delta is a
small fraction of the model. Slow (SmolLM2 forward and backward on ours): run with --slow."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import tolerance

PROGRAM = upstream.REPO / "tests" / "system" / "tlm_program.py"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not upstream.available(), reason="upstream environment not set up")]


def run(side, out, *extra):
    if side == "upstream":
        cmd, env = [str(upstream.UPSTREAM_PYTHON)], upstream.upstream_env() | {
            "PYTHONPATH": str(upstream.REPO / "src"), "OMP_NUM_THREADS": "1"}
    else:
        cmd, env = [upstream.ours_python()], None
    proc = subprocess.run([*cmd, str(PROGRAM), str(out), *extra], capture_output=True, text=True,
                          env=env, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_smollm2_test_time_learning(tmp_path):
    up = run("upstream", tmp_path / "u32.npz")
    up64 = run("upstream", tmp_path / "u64.npz", "--dtype", "float64")
    ours = run("ours", tmp_path / "o32.npz")
    u32, u64, o32 = (dict(np.load(tmp_path / f)) for f in ("u32.npz", "u64.npz", "o32.npz"))
    assert sorted(o32) == sorted(u32)
    bad = {}
    for k in u32:
        low, high, got = u32[k].astype(np.float64), u64[k].astype(np.float64), o32[k].astype(np.float64)
        tol = tolerance.derive([(low, high)], "float32")
        own = float(np.abs(low - high).max())
        ok = np.abs(got - low) <= tol.atol + tol.rtol * np.abs(low) + own
        if not ok.all():
            bad[k] = float(np.abs(got - low).max())
    assert not bad, bad
    for r in (ours, up):
        assert r["ppl_after"] < r["ppl_before"]
        assert r["ppl_reverted"] == r["ppl_before"] and r["reverted_bitwise"]
        assert r["delta_nbytes"] < r["model_bytes"] / 50
        assert r["selected"] > 0
