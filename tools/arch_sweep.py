"""Architecture sweep: tiny random transformers models, built and saved on upstream, loaded on ours.

For each architecture: upstream builds the model from a small config with a fixed seed, saves it
with ``save_pretrained``, runs a prompt forward in float32 and in float64 (for the derived
tolerance) and a greedy ``generate``; ours loads the same directory with ``from_pretrained``
(the real loading code) and does the same. The table says: loads, forward agrees (element-wise
within the derived tolerance), greedy tokens identical.

Usage: .venv/bin/python tools/arch_sweep.py [--archs llama,gpt2,...] [--out docs/sweep.md]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache/sweep"

# name -> (config class, model class, config kwargs); small enough to build in a second
COMMON = dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=64, max_position_embeddings=64)
ARCHS = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", dict(COMMON, num_key_value_heads=2)),
    "mistral": ("MistralConfig", "MistralForCausalLM", dict(COMMON, num_key_value_heads=2)),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", dict(COMMON, num_key_value_heads=2)),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(COMMON, num_key_value_heads=2,
                                                      head_dim=8)),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", dict(COMMON, num_key_value_heads=2, head_dim=8)),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", dict(COMMON, num_key_value_heads=2,
                                                         head_dim=8)),
    "phi": ("PhiConfig", "PhiForCausalLM", dict(COMMON)),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", dict(COMMON, num_key_value_heads=2,
                                                   pad_token_id=0)),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", dict(COMMON)),
    "stablelm": ("StableLmConfig", "StableLmForCausalLM", dict(COMMON, num_key_value_heads=2)),
    "starcoder2": ("Starcoder2Config", "Starcoder2ForCausalLM", dict(COMMON,
                                                                     num_key_value_heads=2)),
    "olmo": ("OlmoConfig", "OlmoForCausalLM", dict(COMMON, num_key_value_heads=2)),
    "granite": ("GraniteConfig", "GraniteForCausalLM", dict(COMMON, num_key_value_heads=2)),
    "falcon": ("FalconConfig", "FalconForCausalLM", dict(vocab_size=128, hidden_size=32,
                                                         num_hidden_layers=2,
                                                         num_attention_heads=4)),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", dict(vocab_size=128, n_embd=32, n_layer=2,
                                                   n_head=4, n_positions=64)),
    "gpt_bigcode": ("GPTBigCodeConfig", "GPTBigCodeForCausalLM", dict(
        vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64)),
    "bloom": ("BloomConfig", "BloomForCausalLM", dict(vocab_size=128, hidden_size=32,
                                                      n_layer=2, n_head=4)),
    "mpt": ("MptConfig", "MptForCausalLM", dict(vocab_size=128, d_model=32, n_layers=2,
                                                n_heads=4, max_seq_len=64)),
    "opt": ("OPTConfig", "OPTForCausalLM", dict(vocab_size=128, hidden_size=32,
                                                num_hidden_layers=2, num_attention_heads=4,
                                                ffn_dim=64, max_position_embeddings=64,
                                                word_embed_proj_dim=32)),
    "bert": ("BertConfig", "BertModel", dict(COMMON)),
    "roberta": ("RobertaConfig", "RobertaModel", dict(COMMON, pad_token_id=1)),
    "distilbert": ("DistilBertConfig", "DistilBertModel", dict(
        vocab_size=128, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
        max_position_embeddings=64)),
    "t5": ("T5Config", "T5ForConditionalGeneration", dict(
        vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
        decoder_start_token_id=0)),
}
PROMPT = [[1, 5, 9, 14, 22, 35, 41, 7]]

WORKER = r'''
import json, sys, numpy as np, torch, transformers
arch, cfg_name, model_name, kwargs, path, build, new_tokens = json.loads(sys.argv[1])
torch.manual_seed(0)
if build:
    cfg = getattr(transformers, cfg_name)(**kwargs)
    model = getattr(transformers, model_name)(cfg).eval()
    model.save_pretrained(path)
model = getattr(transformers, model_name).from_pretrained(path).eval()
ids = torch.tensor(PROMPT)
out = {}
with torch.no_grad():
    enc_dec = model.config.is_encoder_decoder
    extra = {"decoder_input_ids": ids[:, :4]} if enc_dec else {}
    o = model(input_ids=ids, **extra)
    logits = o.logits if hasattr(o, "logits") else o.last_hidden_state
    out["logits"] = logits.float().numpy().tolist()
    if build:
        m64 = getattr(transformers, model_name).from_pretrained(path).double().eval()
        o64 = m64(input_ids=ids, **extra)
        l64 = o64.logits if hasattr(o64, "logits") else o64.last_hidden_state
        out["logits64"] = l64.numpy().tolist()
    if hasattr(model, "generate") and model_name.endswith(("LM", "LMHeadModel", "CausalLM",
                                                           "ConditionalGeneration")):
        g = model.generate(ids, max_new_tokens=new_tokens, do_sample=False,
                           pad_token_id=0)
        out["tokens"] = g[0].tolist()
print(json.dumps(out))
'''.replace("PROMPT", repr(PROMPT))


def run(python: Path, arch: str, build: bool, new_tokens: int) -> dict:
    cfg, model, kwargs = ARCHS[arch]
    path = CACHE / arch
    path.mkdir(parents=True, exist_ok=True)
    args = json.dumps([arch, cfg, model, kwargs, str(path), build, new_tokens])
    env = None
    if "upstream" in str(python):
        from torchnative.testing.upstream import upstream_env

        env = upstream_env()
    proc = subprocess.run([str(python), "-c", WORKER, args], capture_output=True, text=True,
                          env=env, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                           f"exit {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(ours: np.ndarray, up32: np.ndarray, up64: np.ndarray) -> tuple[bool, str]:
    """The golden harness's float comparator with its derived tolerance (P90 of upstream's own
    float32 error against its float64 rerun, floored at a few ulp)."""
    from torchnative.testing.golden import compare as cmp, tolerance

    tol = tolerance.derive([(up32, up64)], "float32")
    problem = cmp.close(up32, ours, up64, 0.0, tol)
    worst = float(np.abs(ours - up32).max())
    return problem is None, problem or f"max |diff| {worst:.2e} (rtol {tol.rtol:.2e}, atol {tol.atol:.2e})"


def sweep(archs: list[str], new_tokens: int) -> list[dict]:
    rows = []
    for arch in archs:
        row = {"arch": arch, "loads": False, "forward": "-", "greedy": "-", "note": ""}
        try:
            up = run(REPO / ".venv-upstream/bin/python", arch, True, new_tokens)
        except Exception as e:  # the baseline must work; report it if it does not
            row["note"] = f"upstream failed: {e}"
            rows.append(row)
            continue
        try:
            ours = run(REPO / ".venv/bin/python", arch, False, new_tokens)
            row["loads"] = True
        except Exception as e:
            row["note"] = str(e)[:160]
            rows.append(row)
            continue
        a, b = np.array(ours["logits"]), np.array(up["logits"])
        if a.shape != b.shape:
            row["forward"] = f"shape {a.shape} vs {b.shape}"
        else:
            ok, detail = compare(a, b, np.array(up["logits64"]))
            row["forward"] = "agrees" if ok else "diverges"
            row["note"] = detail
        if "tokens" in up:
            row["greedy"] = "identical" if ours.get("tokens") == up["tokens"] else "differs"
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["# Architecture sweep", "",
             "Generated by `.venv/bin/python tools/arch_sweep.py --out docs/sweep.md`: tiny random "
             "models built from configs and saved with `save_pretrained` on upstream torch "
             "2.13.0, loaded with `from_pretrained` on ours; an 8-token prompt forward compared "
             "element-wise at the golden harness's derived tolerance (upstream rerun in float64), "
             "and greedy `generate` of 8 tokens compared token for token.", "",
             "| architecture | loads | forward agrees | greedy tokens identical | note |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['arch']} | {'yes' if r['loads'] else 'no'} | {r['forward']} | "
                     f"{r['greedy']} | {r['note']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archs", default=",".join(ARCHS))
    ap.add_argument("--new-tokens", type=int, default=8)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows = sweep(args.archs.split(","), args.new_tokens)
    md = markdown(rows)
    print(md)
    if args.out:
        args.out.write_text(md)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "src"))
    main()
