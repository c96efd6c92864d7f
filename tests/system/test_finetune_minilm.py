"""Three fine-tuning steps of the real all-MiniLM-L6-v2 checkpoint, on ours and on upstream (each in
its own process): per-step losses and the final values of a few named parameters agree at a
tolerance derived from upstream's own float32-vs-float64 error.

The task: mean-pooled embeddings of four fixed sentences -> a linear head (initialised from a
seeded numpy generator, so both sides start identical) -> cross-entropy against fixed labels,
AdamW (lr 1e-4, weight decay 0.01). ``model.eval()`` turns dropout off, so nothing is random.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp, tolerance

REPO = Path(__file__).resolve().parents[2]
STEPS = 3
# Parameters whose final values are compared (plus the head's weight and bias).
WATCHED = [
    "embeddings.LayerNorm.weight",
    "encoder.layer.0.attention.self.query.weight",
    "encoder.layer.3.intermediate.dense.bias",
    "encoder.layer.5.output.dense.weight",
    "encoder.layer.5.output.LayerNorm.bias",
]

WORKER = r"""
import json, sys
import numpy as np
import torch
sys.path.insert(0, REPO_SRC)
from torchnative.apps.checkpoints import minilm_dir
from transformers import AutoModel, AutoTokenizer

wide, lr, steps = sys.argv[1] == "1", float(sys.argv[2]), int(sys.argv[3])
watched = json.loads(sys.argv[4])
dtype = torch.float64 if wide else torch.float32
sentences = ["The cat sits on the mat.", "A cat is sitting on a rug.",
             "The stock market fell sharply today.", "Rain is expected tomorrow afternoon."]
labels = torch.tensor([0, 0, 1, 2])

tok = AutoTokenizer.from_pretrained(minilm_dir())
model = AutoModel.from_pretrained(minilm_dir()).eval()
model = model.to(dtype)
batch = tok(sentences, padding=True, return_tensors="pt")
r = np.random.default_rng(0)
head_w = torch.from_numpy(r.standard_normal((3, 384)) * 0.05).to(dtype).requires_grad_()
head_b = torch.from_numpy(r.standard_normal(3) * 0.05).to(dtype).requires_grad_()
params = dict(model.named_parameters())
opt = torch.optim.AdamW(list(model.parameters()) + [head_w, head_b], lr=lr, weight_decay=0.01)
mask = batch["attention_mask"].unsqueeze(-1).to(dtype)
losses = []
for _ in range(steps):
    opt.zero_grad()
    hidden = model(**batch).last_hidden_state
    pooled = (hidden * mask).sum(1) / mask.sum(1)
    logits = pooled @ head_w.T + head_b
    loss = torch.nn.functional.cross_entropy(logits, labels)
    loss.backward()
    opt.step()
    losses.append(loss.item())
out = {"losses": losses,
       "params": {n: params[n].detach().double().reshape(-1).tolist() for n in watched}}
out["params"]["head.weight"] = head_w.detach().double().reshape(-1).tolist()
out["params"]["head.bias"] = head_b.detach().double().reshape(-1).tolist()
# The rows of the embedding table the batch touched carry the gradient; keep them apart.
rows = sorted(set(batch["input_ids"].reshape(-1).tolist()))
out["params"]["embeddings.word_embeddings.weight[used rows]"] = (
    params["embeddings.word_embeddings.weight"].detach()[rows].double().reshape(-1).tolist())
print(json.dumps(out))
""".replace("REPO_SRC", repr(str(REPO / "src")))


def _run(python: str, wide: bool, lr: float, env=None) -> dict:
    proc = subprocess.run([python, "-c", WORKER, "1" if wide else "0", repr(lr), str(STEPS),
                           json.dumps(WATCHED)], capture_output=True, text=True, env=env,
                          timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-4000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    up_py, env = str(upstream.UPSTREAM_PYTHON), upstream.upstream_env()
    # every run at once (processes that share nothing): ours, ours with lr=0 (the control: no
    # update at all), upstream in float32 and float64, and upstream as it computes on this
    # machine's other CPU profiles (how far it moves from itself)
    ours, ours_frozen, up32, up64, *profiles = upstream.concurrently(
        lambda: _run(upstream.ours_python(), False, 1e-4),
        lambda: _run(upstream.ours_python(), False, 0.0),
        lambda: _run(up_py, False, 1e-4, env), lambda: _run(up_py, True, 1e-4, env),
        *upstream.under_other_profiles(lambda e: _run(up_py, False, 1e-4, e), env))
    up32["profiles"] = profiles
    return ours, ours_frozen, up32, up64


def _agrees(ours, up32, up64, moved=()) -> str | None:
    ours, up32, up64 = (np.asarray(a, dtype=np.float64) for a in (ours, up32, up64))
    tol = tolerance.derive([(up32, up64)], "float32")
    refs = {f"other{i}": np.asarray(m, dtype=np.float64) for i, m in enumerate(moved)}
    return cmp.close(up32, ours, up64, cmp.spread(up32, refs, "float32"), tol)


def _params(run: dict, names) -> np.ndarray:
    return np.concatenate([np.asarray(run["params"][n], dtype=np.float64) for n in names])


def _failures(ours: dict, up32: dict, up64: dict) -> dict:
    """What disagrees: the per-step losses (one output, one derived tolerance) and the watched
    parameters taken together as one output.

    Why together: AdamW's step lr * m / (sqrt(v) + eps) magnifies rounding wherever an element's
    gradient is near zero, so a handful of elements per run land far above the bulk of upstream's
    own float32-vs-float64 error (upstream's own worst on layer 0's query weight is ~7.6e-6, 25x its
    99.99th percentile). Which tensor those few elements fall in is a matter of accumulation order,
    so the bar is upstream's own behaviour over the whole parameter set, not per tensor.
    """
    bad = {}
    moved = up32.get("profiles", [])
    why = _agrees(ours["losses"], up32["losses"], up64["losses"], [m["losses"] for m in moved])
    if why:
        bad["losses"] = why
    names = sorted(up32["params"])
    why = _agrees(_params(ours, names), _params(up32, names), _params(up64, names),
                  [_params(m, names) for m in moved])
    if why:
        bad["params"] = why
    return bad


def test_losses_decrease_on_upstream(runs):
    """Sanity of the setup itself: the three steps do train."""
    _, _, up32, _ = runs
    assert up32["losses"][-1] < up32["losses"][0]


def test_finetune_agrees_with_upstream(runs):
    ours, _, up32, up64 = runs
    assert len(ours["losses"]) == STEPS
    bad = _failures(ours, up32, up64)
    assert not bad, json.dumps(bad, indent=1)


def test_control_without_update_is_caught(runs):
    """lr=0 on ours leaves the weights at the checkpoint's: that must not pass for upstream's
    updated weights (the first loss, computed before any update, still agrees)."""
    _, frozen, up32, up64 = runs
    assert _agrees([frozen["losses"][0]], [up32["losses"][0]], [up64["losses"][0]]) is None
    bad = _failures(frozen, up32, up64)
    assert "losses" in bad and "params" in bad, bad
    # and one watched tensor alone, still at the checkpoint's values, is caught too
    name = "encoder.layer.0.attention.self.query.weight"
    mixed = {"losses": up32["losses"], "params": dict(up32["params"], **{name: frozen["params"][name]})}
    assert "params" in _failures(mixed, up32, up64)
