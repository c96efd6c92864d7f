"""transformers, unmodified, swaps our fused CPU kernels into SmolLM2 through its own hooks
(``from_pretrained(..., use_kernels=True)``), and the result agrees with upstream's unfused
model; and Hugging Face's own ``kernels`` package loads a repository we built."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp, tolerance

REPO = Path(__file__).resolve().parents[2]

WORKER = r"""
import json, sys, numpy as np, torch
sys.path.insert(0, REPO_SRC)
kernels, wide, attn = sys.argv[1] == "1", sys.argv[2] == "1", sys.argv[3] == "1"
logits_path = sys.argv[4]
from transformers import AutoModelForCausalLM, AutoTokenizer
from torchnative.apps.checkpoints import SMOLLM2_GGUF, smollm2_dir
d = smollm2_dir()
tok = AutoTokenizer.from_pretrained(d, gguf_file=SMOLLM2_GGUF)
extra = {"attn_implementation": "torchnative/cpu-kernels"} if attn else {}
model = AutoModelForCausalLM.from_pretrained(d, gguf_file=SMOLLM2_GGUF, dtype=torch.float32,
                                             use_kernels=kernels, **extra).eval()
if wide:
    model = model.double()
out = {}
layer = model.model.layers[0]
out["forwards"] = {
    "norm": model.model.norm.forward.__func__.__qualname__,
    "rotary": [f.forward.__func__.__qualname__ for f in layer.self_attn._kernel_funcs.values()]
              if hasattr(layer.self_attn, "_kernel_funcs") else [],
    "silu": layer.mlp.act_fn.forward.__func__.__qualname__,
    "attention": model.config._attn_implementation}
msgs = [{"role": "user", "content": "What is the capital of France?"}]
ids = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt",
                              return_dict=True)["input_ids"]
with torch.inference_mode():
    np.save(logits_path, model(ids).logits[0].double().numpy())   # every position
    if not wide:
        out["greedy"] = model.generate(ids, max_new_tokens=12, do_sample=False)[0, ids.shape[1]:].tolist()
print(json.dumps(out))
""".replace("REPO_SRC", repr(str(REPO / "src")))


def _run(out: Path, python, kernels: bool, wide: bool, env=None, attn: bool = False) -> dict:
    flags = ["1" if f else "0" for f in (kernels, wide, attn)]
    logits = out / f"logits-{''.join(flags)}.npy"
    proc = subprocess.run([str(python), "-c", WORKER, *flags, str(logits)],
                          capture_output=True, text=True, env=env, timeout=1500)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["logits"] = np.load(logits)
    return res


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d, env = tmp_path_factory.mktemp("smollm2"), upstream.upstream_env()
    return (_run(d, upstream.ours_python(), True, False),
            _run(d, upstream.UPSTREAM_PYTHON, False, False, env),
            _run(d, upstream.UPSTREAM_PYTHON, False, True, env),
            _run(d, upstream.ours_python(), True, False, attn=True))


# Four SmolLM2 processes: minutes on a shared 2-core machine, beyond the default suite's budget.
@pytest.mark.slow
def test_transformers_swaps_our_kernels_in(runs):
    ours, up, _, attn = runs
    assert ours["forwards"] == {"norm": "RMSNorm.forward", "rotary": ["RotaryPosEmb.forward"],
                                "silu": "SiLU.forward", "attention": "sdpa"}
    assert attn["forwards"] == {**ours["forwards"], "attention": "torchnative/cpu-kernels"}
    # upstream's transformers sees no compatible kernels package: its layers stay unfused
    assert up["forwards"]["norm"] == "LlamaRMSNorm.forward"


@pytest.mark.slow
@pytest.mark.parametrize("which", ["kernels", "kernels+attention"])
def test_logits_and_greedy_tokens_agree_with_upstream_unfused(runs, which):
    ours, up, up64, attn = runs
    ours = attn if which == "kernels+attention" else ours
    # the logits at every position of the prompt: upstream's error on the whole output sets the
    # tolerance and the worst-error bar (its last few rows alone understate its tail)
    a, b, c = (r["logits"] for r in (ours, up, up64))
    tol = tolerance.derive([(b, c)], "float32")
    assert a.shape == b.shape
    assert cmp.close(b, a, c, 0.0, tol) is None, cmp.close(b, a, c, 0.0, tol)
    bad = a.copy()
    bad.flat[-1] += 1e-3 * max(1.0, abs(bad.flat[-1]))
    assert cmp.close(b, bad, c, 0.0, tol) is not None
    assert ours["greedy"] == up["greedy"]


COMPAT = r"""
import json, sys, torch
from pathlib import Path
import kernels
from kernels import LocalLayerRepository, Mode, get_local_kernel, kernelize, use_kernel_mapping
from kernels import replace_kernel_forward_from_hub
from transformers.models.llama.modeling_llama import LlamaRMSNorm
root = Path(sys.argv[1])
mod = get_local_kernel(root)
replace_kernel_forward_from_hub(LlamaRMSNorm, "RMSNorm")
torch.manual_seed(0)
n = LlamaRMSNorm(64); n.weight.data.normal_()
x = torch.randn(2, 5, 64)
ref = n(x)
with use_kernel_mapping({"RMSNorm": {"cpu": LocalLayerRepository(repo_path=root, layer_name="RMSNorm")}}):
    kernelize(n, mode=Mode.INFERENCE, device="cpu")
print(json.dumps({"version": kernels.__version__, "module": n.forward.__func__.__module__,
                  "err": (n(x) - ref).abs().max().item(), "scale": ref.abs().max().item()}))
"""


def test_hugging_face_kernels_loads_a_repository_we_built(tmp_path):
    out = tmp_path / "bundle"
    subprocess.run([upstream.ours_python(), "-m", "torchnative.kernels", "bundle", "--default",
                    "--out", str(out)], check=True, capture_output=True, timeout=600)
    proc = subprocess.run([str(upstream.UPSTREAM_PYTHON), "-c", COMPAT,
                           str(out / "kernels" / "torchnative--cpu-kernels")],
                          capture_output=True, text=True, env=upstream.upstream_env(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["version"] == "0.17.2"                      # Hugging Face's package, not ours
    assert r["module"].endswith(".layers") and r["module"].startswith("_torchnative_cpu_")
    assert r["err"] <= 8 * np.finfo(np.float32).eps * r["scale"]
