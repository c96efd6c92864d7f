"""The two real checkpoints, on ours and on upstream in separate processes: logits and
embeddings agree element-wise at the harness's derived tolerance, widened by how far upstream's
own values move across this machine's other CPU profiles (docs/cpu.md: MKL's and oneDNN's code
paths and ATen's capability); greedy tokens are identical; seeded sampling reproduces upstream's
tokens."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp

REPO = Path(__file__).resolve().parents[2]

WORKER = r"""
import json, sys, torch
sys.path.insert(0, REPO_SRC)
which, wide = sys.argv[1], sys.argv[2] == "1"
out = {}
with torch.inference_mode():
    if which == "minilm":
        from torchnative.apps.embed import DEFAULT_SENTENCES
        from torchnative.apps.checkpoints import minilm_dir
        from transformers import AutoModel, AutoTokenizer
        tok = AutoTokenizer.from_pretrained(minilm_dir())
        model = AutoModel.from_pretrained(minilm_dir()).eval()
        if wide:
            model = model.double()
        batch = tok(DEFAULT_SENTENCES, padding=True, return_tensors="pt")
        out["hidden"] = model(**batch).last_hidden_state.double().tolist()
    else:
        from torchnative.apps.chat import load
        tok, model = load(None, None, quiet=True)
        if wide:
            model = model.double()
        msgs = [{"role": "user", "content": "What is the capital of France?"}]
        ids = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt",
                                      return_dict=True)["input_ids"]
        out["logits"] = model(ids).logits[0, -4:].double().tolist()
        if not wide:
            g = model.generate(ids, max_new_tokens=8, do_sample=False)
            out["greedy"] = g[0, ids.shape[1]:].tolist()
            torch.manual_seed(7)
            s = model.generate(ids, max_new_tokens=8, do_sample=True, top_k=20, top_p=0.9,
                               temperature=0.8)
            out["sampled"] = s[0, ids.shape[1]:].tolist()
print(json.dumps(out))
""".replace("REPO_SRC", repr(str(REPO / "src")))


def _run(python: str, which: str, wide: bool, env=None) -> dict:
    proc = subprocess.run([python, "-c", WORKER, which, "1" if wide else "0"],
                          capture_output=True, text=True, env=env, timeout=1500)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=["minilm", "smollm2"])
def runs(request):
    which = request.param
    up_py = str(upstream.UPSTREAM_PYTHON)
    env = upstream.upstream_env()
    # ours, upstream in float32 and float64, and upstream under the other CPU profiles: processes
    # that share nothing, at once
    ours, up32, up64, *moved = upstream.concurrently(
        lambda: _run(upstream.ours_python(), which, False),
        lambda: _run(up_py, which, False, env), lambda: _run(up_py, which, True, env),
        *upstream.under_other_profiles(lambda e: _run(up_py, which, False, e), env))
    return which, (ours, up32, up64, moved)


def _agrees(ours, up32, up64, summed: bool = False, moved=()) -> str | None:
    """The harness's criterion (``compare.elementwise``); ``summed`` for outputs that are long
    sums whose terms cancel (docs/testing.md): an element's rounding error then scales with its
    terms, and upstream's largest error on the output is the spread any element may move by;
    ``moved``: upstream's values under the other CPU profiles, whose move widens the spread."""
    return cmp.elementwise(ours, up32, up64, "float32", summed=summed, others=moved)


def test_real_model_values_agree_with_upstream(runs):
    which, (ours, up, up64, moved) = runs
    key = "hidden" if which == "minilm" else "logits"
    a, b, c = (np.array(r[key]) for r in (ours, up, up64))
    assert a.shape == b.shape
    # SmolLM2's logits are 576-term dot products (the tied lm_head) of a 30-layer residual
    # stream: BLAS's blocking decides their last bits, and upstream's MKL blocks otherwise
    problem = _agrees(a, b, c, summed=which == "smollm2", moved=[np.array(m[key]) for m in moved])
    assert problem is None, problem


def test_smollm2_tokens_identical(runs):
    which, (ours, up, _, _) = runs
    if which != "smollm2":
        pytest.skip("tokens are a decoder's")
    assert ours["greedy"] == up["greedy"]
    assert ours["sampled"] == up["sampled"]


def test_a_wrong_value_is_caught(runs):
    """The comparison this file relies on rejects a perturbed result."""
    which, (ours, up, up64, moved) = runs
    key = "hidden" if which == "minilm" else "logits"
    a, b, c = (np.array(r[key]) for r in (ours, up, up64))
    bad = a.copy()
    bad.flat[-1] += 1e-3 * max(1.0, abs(bad.flat[-1]))
    assert _agrees(bad, b, c, moved=[np.array(m[key]) for m in moved]) is not None


def test_summed_criterion_still_sees_a_wrong_logit(runs):
    which, (ours, up, up64, moved) = runs
    if which != "smollm2":
        pytest.skip("the summed criterion is the decoder's")
    a, b, c = (np.array(r["logits"]) for r in (ours, up, up64))
    others = [np.array(m["logits"]) for m in moved]
    wrong = a.copy()
    wrong[0, 0] += 4 * float(np.abs(b - c).max()) + 1e-3 + sum(np.abs(b - o).max() for o in others)
    assert _agrees(wrong, b, c, summed=True, moved=others) is not None
