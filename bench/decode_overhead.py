"""Everything a decode step costs above its matrix products, ours vs upstream, in the same run.

Usage: .venv/bin/python bench/decode_overhead.py [--rounds 3] [--threads 1]

SmolLM2-135M's architecture (30 decoder layers, grouped heads, tied embeddings) at a tiny width
(hidden 48, 3 heads over 1, MLP 96, vocabulary 1,000), built from a seeded config on each side:
its products cost almost nothing, so a greedy decode of 32 tokens after an 8-token prompt times
the rest -- bindings, the door, kernels' Python, tensor construction, nn.Module and
transformers' own code -- which on SmolLM2 itself sits on top of 26-28 ms of products that no
per-operator work changes. Ours runs unfused and with the kernels bundle + its attention
(``set_use_kernels(True)``, the installed bundle: rebuild it after changing a kernel); upstream
runs unfused, and its figure is the reference for both rows.

Per layer, each module a decoder layer calls is timed inclusively (CPU time around its
``forward``; the timers add a little to every row on both sides): the attention block and, inside
it, the attention function, the rotary embedding and the cache update; the MLP block and its
activation; the RMSNorm; one ``nn.Linear``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

ATTENTION_KERNEL = "torchnative/cpu-kernels:attention"
TOKENS = 32


def _model(torch, kernels: bool):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(hidden_size=48, intermediate_size=96, num_hidden_layers=30,
                      num_attention_heads=3, num_key_value_heads=1, vocab_size=1000,
                      tie_word_embeddings=True, max_position_embeddings=512)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).eval()
    if kernels:
        model.set_use_kernels(True)
        model.set_attn_implementation(ATTENTION_KERNEL)
    return model


def _timed(torch, model) -> tuple[float, dict]:
    """Best of three decodes' CPU ms per token, then one more with every module timed."""
    import collections

    from transformers import cache_utils
    from transformers.models.llama import modeling_llama as ml

    prompt = torch.tensor([[1, 504, 3, 282, 49, 314, 6, 7]])

    def decode():
        model.generate(prompt, max_new_tokens=TOKENS, min_new_tokens=TOKENS, do_sample=False)

    decode()
    best = 1e9
    for _ in range(3):
        c = time.process_time()
        decode()
        best = min(best, (time.process_time() - c) / TOKENS * 1e3)

    spent, calls = collections.Counter(), collections.Counter()

    def timing(fn, label):
        def timed(*a, **k):
            c = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                spent[label] += time.process_time() - c
                calls[label] += 1
        return timed

    layer = model.model.layers[0]
    patched, items = [], []   # (object, attribute or key, original)
    for owner, name, label in (
            (torch.nn.Linear, "forward", "one nn.Linear"),
            (ml.LlamaAttention, "forward", "attention block"),
            (ml.LlamaMLP, "forward", "MLP block"),
            (ml.LlamaDecoderLayer, "forward", "decoder layer"),
            (ml.LlamaRotaryEmbedding, "forward", "rotary cos/sin (once per step)"),
            (ml.LlamaModel, "forward", "LlamaModel (once per step)"),
            (ml.LlamaForCausalLM, "forward", "LlamaForCausalLM (once per step)"),
            (cache_utils.DynamicLayer, "update", "cache update (2 cat)"),
            (ml, "apply_rotary_pos_emb", "rotary embedding")):
        patched.append((owner, name, getattr(owner, name)))
        setattr(owner, name, timing(getattr(owner, name), label))
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    impl = model.config._attn_implementation
    if impl in ALL_ATTENTION_FUNCTIONS:
        items.append((ALL_ATTENTION_FUNCTIONS, impl, ALL_ATTENTION_FUNCTIONS[impl]))
        ALL_ATTENTION_FUNCTIONS[impl] = timing(ALL_ATTENTION_FUNCTIONS[impl], "attention function")
    for module, label in ((layer.input_layernorm, "RMSNorm"), (layer.mlp.act_fn, "activation")):
        for m in model.modules():
            if type(m) is type(module):
                m.forward = timing(m.forward, label)
    try:
        c = time.process_time()
        decode()
        spent["generate (once per step)"] += time.process_time() - c
        calls["generate (once per step)"] += TOKENS
    finally:
        for owner, name, orig in patched:
            setattr(owner, name, orig)
        for owner, key, orig in items:
            owner[key] = orig
    per = {f"{label}, us per call": spent[label] / calls[label] * 1e6 for label in spent}
    return best, per


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    ours = "torchnative.csrc.dispatch.door" in sys.modules  # upstream never loads the door
    result = {}
    with torch.inference_mode():
        ms, per = _timed(torch, _model(torch, False))
        result["decode CPU ms/token, unfused"] = ms
        result.update({f"{k} (unfused)": v for k, v in per.items()})
        # upstream has no kernels: its unfused figures are the reference for ours' fused rows
        if ours:
            ms, per = _timed(torch, _model(torch, True))
        result["decode CPU ms/token (ours: kernels + attention)"] = ms
        result.update({f"{k} (ours: kernels + attention)": v for k, v in per.items()})
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker, unit="")
