"""A decode step's attention as the cache grows: the bundle's operator and its sdpa path on ours
against transformers' sdpa attention on upstream, per call, in the same run.

Usage: .venv/bin/python bench/attention_keys.py [--rounds 3] [--threads 1]

One query of 9 heads over 3 key/value heads of head size 64 (SmolLM2's), under
``torch.inference_mode``, for 16 to 1,024 cached keys. On ours: the bundle's operator kernel
(``_ops._attention``, what a decode step over at most ``_OPERATOR_SCORES`` keys runs) and the
layer's ``_sdpa`` (torch's sdpa, what it runs beyond), from the repository in
``src/torchnative/kernels/repos`` (no rebuild needed); on upstream both rows time
``sdpa_attention_forward``. CPU time per call, median of five repeats.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

REPO = Path(__file__).resolve().parents[1] / "src/torchnative/kernels/repos/torchnative-cpu"
KEYS = (16, 40, 128, 256, 512, 1024)


def worker(threads: int) -> None:
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.models.llama import modeling_llama as ml

    torch.set_num_threads(threads)
    attn = ml.LlamaAttention(ml.LlamaConfig(hidden_size=576, num_attention_heads=9,
                                            num_key_value_heads=3, head_dim=64), 0)
    ours = "torchnative.csrc.dispatch.door" in sys.modules  # upstream never loads the door
    if ours:
        from torchnative.kernels import get_local_kernel

        layers = get_local_kernel(REPO).layers
    g = torch.Generator().manual_seed(0)
    result = {}
    with torch.inference_mode():
        for n in KEYS:
            q = torch.randn(1, 9, 1, 64, generator=g)
            k, v = torch.randn(1, 3, n, 64, generator=g), torch.randn(1, 3, n, 64, generator=g)
            if ours:
                op = lambda: layers._ops._attention(q, k, v, None, 0.125, True)  # noqa: E731
                sdpa = lambda: layers._sdpa(q, k, v, None, 0.125, True)  # noqa: E731
            else:
                op = sdpa = lambda: sdpa_attention_forward(attn, q, k, v, None,  # noqa: E731
                                                           scaling=0.125)
            result[f"operator, {n} keys"] = _harness.cpu_us_per_call(op)
            result[f"sdpa path, {n} keys"] = _harness.cpu_us_per_call(sdpa)
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker)
