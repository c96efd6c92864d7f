"""Ordinary training programs (tests/differential/training_programs.py) on ours and on upstream torch 2.13.0,
each in its own process, compared step by step.

Per program: every step's training loss, every epoch's learning rate, held-out loss and number
correct, every Dropout call's mask (elements zeroed and the sum of their indices: the seeded
generator must give upstream's bits), and the final state_dict tensor by tensor.

Tolerances are derived, as in test_autograd.py's optimizer test: upstream runs the same program
again in float64 (from the same float32 initial weights and data), and a float32 value agrees
when it is within the tolerance derived from upstream's own float32-vs-float64 error on that
output (golden.tolerance.derive: P90, floored at 4 ulp) widened by upstream's largest such error
on the output (gradients and parameters are sums whose terms cancel: an element's error scales
with its terms, not its value), or no farther from the float64 run than upstream's float32 value
is: the golden harness's ``compare.elementwise(..., summed=True)``. Integers
(batch counts, dropout masks) compare exactly; a held-out count of correct answers agrees when it
is no farther from upstream's float32 count than upstream's float64 count is (a logit at a tie
flips a prediction), or equals the float64 count.

Upstream runs single-threaded (OMP_NUM_THREADS=1): on this shared 2-core machine its OpenMP
threads spin against each other and the run takes 5-10x longer. The thread count moves upstream's
own CNN numbers by up to ~4 ulp (conv and batch-norm reductions split across threads); the MLP
programs are bitwise the same either way. Upstream's float32 run is repeated under this machine's
other CPU profiles (``upstream.other_cpu_profiles``: DEFAULT on an AVX2 machine) and how far it
moves there widens each output's bar: after two epochs of Adam, cnn_adam_onecycle's BatchNorm bias
moves 6.1e-08 between upstream's AVX2 and DEFAULT runs, as far as ours is from upstream's AVX2 run.

Controls, run on ours: learning rate 0, and every gradient negated, must each be caught on the
controlled programs; resuming from a checkpoint must equal the uninterrupted run bit for bit (on
ours, and on upstream as a check of the program itself); ours resuming from upstream's checkpoint
file must agree with upstream's uninterrupted run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp, tolerance

HERE = Path(__file__).parent
PROGRAMS = HERE / "training_programs.py"
sys.path.insert(0, str(HERE))

import training_programs  # noqa: E402

MAIN = ["mlp_sgd_nesterov_steplr", "mlp_sgd_nesterov_cosine_foreach",
        "mlp_adamw_exponential_foreach", "mlp_rmsprop_multistep", "mlp_adagrad_lambda",
        "cnn_adam_onecycle", "cnn_adamw_fused_plateau", "clip_accum"]
CONTROLS = ("lr0", "flip")


# ------------------------------------------------------------------------------- comparators
def agree_float32(ours: np.ndarray, low: np.ndarray, high: np.ndarray, others=()) -> str | None:
    """The golden harness's element-wise criterion (``compare.elementwise``) against upstream's
    float32 (``low``) and float64 (``high``) runs: NaN/inf where upstream's are; each element
    within the tolerance derived from upstream's own error on this output, or no farther from
    ``high`` than upstream's float32 is there, or within upstream's worst absolute and relative
    error on this output at once. ``summed``: gradients and parameters after optimizer steps are
    sums whose terms cancel, so upstream's largest error on the output bounds every element.
    ``others``: upstream's float32 run under this machine's other CPU profiles; how far it moves
    there widens the bar (a CNN's convolutions and batch norms round differently per profile)."""
    return cmp.elementwise(ours, low, high, "float32", summed=True, others=others)


def agree_float64(ours: np.ndarray, high: np.ndarray, low: np.ndarray) -> str | None:
    """The golden harness's float64 criterion: the tolerance derived from upstream's float32
    (``low``) vs float64 (``high``) error, carried over to float64 in ulps, plus twice
    upstream's float64 error as scaled from its float32 run (compare.spread's "narrow")."""
    ours, high, low = (np.asarray(a, dtype=np.float64) for a in (ours, high, low))
    if ours.shape != high.shape:
        return f"shape {ours.shape} vs {high.shape}"
    why = cmp.nonfinite(high, ours)
    if why:
        return why
    tol = tolerance.scaled(tolerance.derive([(low, high)], "float32"), "float32", "float64")
    ratio = np.finfo(np.float64).eps / np.finfo(np.float32).eps
    spread = 2 * ratio * float(np.abs(low - high).max()) if high.size else 0.0
    return cmp.close(high, ours, None, spread, tol)


def correct_counts(ours, up32, up64) -> str | None:
    bad = [i for i, (o, a, b) in enumerate(zip(ours, up32, up64))
           if abs(o - a) > abs(a - b) and o != b]
    if len(ours) != len(up32) or bad:
        return f"correct {ours}, upstream {up32} (float64: {up64})"
    return None


def masks_differ(ours: list, up: list) -> str | None:
    """Dropout masks bit for bit wherever both sides' inputs are nonzero (see watch_dropout)."""
    if len(ours) != len(up):
        return f"{len(ours)} dropout calls, upstream {len(up)}"
    for i, (o, u) in enumerate(zip(ours, up)):
        bits = [np.unpackbits(np.frombuffer(bytes.fromhex(h), np.uint8)) for h in (o[2], o[3], u[2], u[3])]
        o_drop, o_zero, u_drop, u_zero = bits
        seen = ~(o_zero.astype(bool) | u_zero.astype(bool))
        differ = int(((o_drop != u_drop) & seen).sum())
        if differ or len(o_drop) != len(u_drop):
            return f"masks differ in call {i}: {differ} of {int(seen.sum())} observable elements"
    return None


def failures(ours: dict, up32: dict, up64: dict, others=()) -> dict[str, str]:
    """What disagrees, by output (``others``: upstream's float32 runs under other CPU profiles)."""
    bad = {}
    for key in ("losses", "eval_loss", "lrs"):
        why = agree_float32(ours[key], up32[key], up64[key], [o[key] for o in others])
        if why:
            bad[key] = why
    why = correct_counts(ours["correct"], up32["correct"], up64["correct"])
    if why:
        bad["correct"] = why
    why = masks_differ(ours["dropout"], up32["dropout"])
    if why:
        bad["dropout"] = why
    if sorted(ours["state"]) != sorted(up32["state"]):
        bad["state"] = f"keys {sorted(ours['state'])} vs {sorted(up32['state'])}"
        return bad
    for name, values in up32["state"].items():
        if name.endswith("num_batches_tracked"):
            if ours["state"][name] != values:
                bad[name] = f"{ours['state'][name]} vs {values}"
            continue
        why = agree_float32(ours["state"][name], values, up64["state"][name],
                            [o["state"][name] for o in others])
        if why:
            bad[name] = why
    return bad


# ---------------------------------------------------------------------------------------- runs
# Ours compared with itself bit for bit (a resumed run against the uninterrupted one) must not
# depend on how many threads the BLAS library splits a product over, which ours otherwise
# chooses by timing (csrc/kernels/support/blas_threads.py): one thread, as upstream runs here.
ONE_BLAS_THREAD = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _launch(python: str | None, args: list[str], env=None) -> subprocess.Popen:
    """The programs on ours (``python``), or on upstream (None: under the guard that proves its
    torch is upstream's compiled build)."""
    argv = [python, str(PROGRAMS), *args] if python else upstream.script_command(PROGRAMS, *args)
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _result(proc: subprocess.Popen, what: str) -> dict:
    out, err = proc.communicate(timeout=1800)
    if proc.returncode != 0:
        raise upstream.failure(what, proc.returncode, err)
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not upstream.available():
        upstream.missing("upstream environment missing")
    ckpt = tmp_path_factory.mktemp("training") / "upstream_clip_accum.pt"
    env = dict(upstream.upstream_env(), OMP_NUM_THREADS="1")
    up32 = _launch(None, ["float32", "--save", str(ckpt)], env)
    up64 = _launch(None, ["float64"], env)
    up32 = _result(up32, "upstream float32")
    # upstream's float32 run under this machine's other CPU profiles: how far upstream moves
    # across CPUs is part of the bar (docs/cpu.md)
    others = [_launch(None, ["float32"], {**env, **profile})
              for profile in upstream.other_cpu_profiles().values()]
    ours = _launch(upstream.ours_python(), ["float32", "--load", str(ckpt), "--controls",
                                            *CONTROLS], ONE_BLAS_THREAD)
    others = [_result(p, "upstream float32, other CPU profile") for p in others]
    return _result(ours, "ours"), up32, _result(up64, "upstream float64"), others


def test_programs_train_on_upstream(runs):
    """The programs themselves: they learn (well above chance on the held-out digits)."""
    _, up32, _, _ = runs
    for name in MAIN:
        r = up32[name]
        assert r["correct"][-1] > 0.75 * 360, (name, r["correct"])
        assert np.mean(r["losses"][-5:]) < np.mean(r["losses"][:5]), name


@pytest.mark.parametrize("name", MAIN + ["clip_accum_resumed"])
def test_program_agrees_step_by_step(name, runs):
    ours, up32, up64, others = runs
    # the resumed run is compared with upstream's resumed run (itself equal to the uninterrupted)
    bad = failures(ours[name], up32[name], up64["clip_accum" if name.startswith("clip") else name],
                   [o[name] for o in others])
    assert not bad, json.dumps(bad, indent=1)
    assert len(ours[name]["losses"]) == len(up32[name]["losses"]) > 40


def test_dropout_masks_are_exercised(runs):
    """Dropout is on in train mode, so its masks (compared exactly above) are real evidence."""
    ours, _, _, _ = runs
    for name in ("cnn_adam_onecycle", "clip_accum", "mlp_adamw_exponential_foreach"):
        assert len(ours[name]["dropout"]) == len(ours[name]["losses"])
        assert all(n > 0 for n, *_ in ours[name]["dropout"]), name


def test_resume_equals_uninterrupted(runs):
    """torch.save / torch.load of model, optimizer, scheduler and generator states after two
    epochs, rebuilt from scratch: bit for bit the uninterrupted run, on upstream and on ours."""
    ours, up32, _, _ = runs
    for side, r in (("upstream", up32), ("ours", ours)):
        a, b = r["clip_accum"], r["clip_accum_resumed"]
        assert a == b, f"{side}: resumed run differs from the uninterrupted one"


def test_resume_from_upstreams_checkpoint(runs):
    """Ours loads the checkpoint file upstream wrote mid-training and finishes the run: it agrees
    with upstream's uninterrupted run."""
    ours, up32, up64, others = runs
    bad = failures(ours["clip_accum_resumed_from_file"], up32["clip_accum"], up64["clip_accum"],
                   [o["clip_accum"] for o in others])
    assert not bad, json.dumps(bad, indent=1)


@pytest.mark.parametrize("control", CONTROLS)
@pytest.mark.parametrize("name", training_programs.CONTROLLED)
def test_control_is_caught(control, name, runs):
    """lr=0 and a flipped gradient sign on ours must not pass for upstream's run."""
    ours, up32, up64, others = runs
    bad = failures(ours[f"{control}/{name}"], up32[name], up64[name], [o[name] for o in others])
    assert "losses" in bad and any(k in bad for k in up32[name]["state"]), bad


def test_criterion_sees_a_small_error(runs):
    """The criterion's sensitivity on these runs: ours with every final weight off by 0.1%
    fails."""
    ours, up32, up64, others = runs
    for name in MAIN:
        state = {k: (np.asarray(v) * 1.001).tolist() if not k.endswith("num_batches_tracked")
                 else v for k, v in ours[name]["state"].items()}
        bad = failures(dict(ours[name], state=state), up32[name], up64[name],
                       [o[name] for o in others])
        assert any(k in bad for k in state), name


def test_mask_comparison_catches_one_flipped_bit(runs):
    """The mask comparison sees a single observable bit flipped (and ignores none of the calls)."""
    ours, _, _, _ = runs
    calls = ours["clip_accum"]["dropout"]
    assert masks_differ(calls, calls) is None
    dropped = np.unpackbits(np.frombuffer(bytes.fromhex(calls[-1][2]), np.uint8))
    zero_in = np.unpackbits(np.frombuffer(bytes.fromhex(calls[-1][3]), np.uint8))
    i = int(np.flatnonzero(zero_in == 0)[0])
    dropped[i] ^= 1
    flipped = calls[:-1] + [calls[-1][:2] + [np.packbits(dropped).tobytes().hex(), calls[-1][3]]]
    assert "masks differ in call" in masks_differ(flipped, calls)
