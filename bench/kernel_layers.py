"""Per-call cost of the kernels bundle's fused layers on ours against the unfused layers they
replace on upstream, in a decode step's shapes, measured in the same run.

Usage: .venv/bin/python bench/kernel_layers.py [--rounds 3] [--threads 1]

Each case is the module call a SmolLM2 decode step makes, under ``torch.inference_mode``: on
ours with the bundle's layer forward installed as ``kernelize`` installs it (the repository in
``src/torchnative/kernels/repos``, so a change is measured without rebuilding the bundle), on
upstream transformers' own layer (upstream has no kernels). Cases: ``LlamaRMSNorm`` on
(1, 1, 576); ``apply_rotary_pos_emb`` on 9 query and 3 key heads of one position; the MLP's
SiLU on (1, 1, 1536); attention of 9 query heads over 3 key/value heads of 40 cached positions
(ours: the bundle's ``attention``; upstream: transformers' ``sdpa_attention_forward``); and
RMSNorm, rotary and SiLU on a 128-token prefill's inputs (rotary on a 512-token one too). CPU
time per call, median of five repeats; the ratio column is ours' fused cost over upstream's
unfused cost.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import MethodType

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

REPO = Path(__file__).resolve().parents[1] / "src/torchnative/kernels/repos/torchnative-cpu"


def cases(torch):
    from transformers.activations import ACT2FN
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.models.llama import modeling_llama as ml

    g = torch.Generator().manual_seed(0)
    x, gate = torch.randn(1, 1, 576, generator=g), torch.randn(1, 1, 1536, generator=g)
    q = torch.randn(1, 1, 9, 64, generator=g).transpose(1, 2)
    k = torch.randn(1, 1, 3, 64, generator=g).transpose(1, 2)
    cos, sin = torch.randn(1, 1, 64, generator=g), torch.randn(1, 1, 64, generator=g)
    kc, vc = torch.randn(1, 3, 40, 64, generator=g), torch.randn(1, 3, 40, 64, generator=g)
    # a 128- and a 512-token prefill's inputs of the same layers
    xp, gatep = torch.randn(1, 128, 576, generator=g), torch.randn(1, 128, 1536, generator=g)
    qp = {n: torch.randn(1, n, 9, 64, generator=g).transpose(1, 2) for n in (128, 512)}
    kp = {n: torch.randn(1, n, 3, 64, generator=g).transpose(1, 2) for n in (128, 512)}
    cp = {n: (torch.randn(1, n, 64, generator=g), torch.randn(1, n, 64, generator=g))
          for n in (128, 512)}
    norm, act, rot = ml.LlamaRMSNorm(576, eps=1e-5), ACT2FN["silu"], ml.apply_rotary_pos_emb
    attn = ml.LlamaAttention(ml.LlamaConfig(hidden_size=576, num_attention_heads=9,
                                            num_key_value_heads=3, head_dim=64), 0)
    attention = sdpa_attention_forward
    # our torch loads the door on import; upstream never does (src/ is on its path too)
    if "torchnative.csrc.dispatch.door" in sys.modules:  # ours: the bundle's forwards
        from torchnative.kernels import get_local_kernel

        layers = get_local_kernel(REPO).layers
        norm.forward = MethodType(layers.RMSNorm.forward, norm)
        act.forward = MethodType(layers.SiLU.forward, act)
        rot.forward = MethodType(layers.RotaryPosEmb.forward, rot)
        attention = layers.attention
    return {
        "RMSNorm (1,1,576)": lambda: norm(x),
        "rotary (9+3 heads, 1 position)": lambda: rot(q, k, cos, sin),
        "SiLU (1,1,1536)": lambda: act(gate),
        "attention (9 heads over 3, 40 keys)": lambda: attention(attn, q, kc, vc, None,
                                                                 scaling=0.125),
        "RMSNorm (1,128,576)": lambda: norm(xp),
        "rotary (9+3 heads, 128 positions)": lambda: rot(qp[128], kp[128], *cp[128]),
        "rotary (9+3 heads, 512 positions)": lambda: rot(qp[512], kp[512], *cp[512]),
        "SiLU (1,128,1536)": lambda: act(gatep),
    }


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    with torch.inference_mode():
        _harness.emit({name: _harness.cpu_us_per_call(fn) for name, fn in cases(torch).items()})


if __name__ == "__main__":
    _harness.main(__file__, worker)
