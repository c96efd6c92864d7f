"""Bit fingerprints of a prefill: SmolLM2's logits at 8, 128 and 512 tokens and 8 greedy steps,
and a dump of the flash attention kernel over dtypes, causal, GQA, lq != s, NaN/inf inputs.

Usage: [PYTHONPATH=<other src>] .venv/bin/python bench/prefill_hashes.py [--no-model]

Prints one sha256 per item, so two trees' outputs can be diffed line by line.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _h(t) -> str:
    return hashlib.sha256(t.contiguous().view(-1).view(__import__("torch").uint8).numpy()
                          .tobytes()).hexdigest()[:16]


def model_hashes():
    import torch

    sys.path.insert(0, str(REPO / "src"))
    from torchnative.apps.chat import load

    torch.set_num_threads(1)
    _, model = load(None, None, quiet=True, dtype=torch.float32)
    with torch.inference_mode():
        for n in (8, 128, 512):
            ids = torch.arange(n).remainder(1000).add(10).reshape(1, n)
            print(f"logits {n}", _h(model(ids).logits))
        ids = torch.arange(8).add(10).reshape(1, 8)
        out = model(ids, use_cache=True)
        past, hs = out.past_key_values, []
        for _ in range(8):
            nxt = out.logits[:, -1:].argmax(-1)
            hs.append(_h(out.logits))
            out = model(nxt, past_key_values=past, use_cache=True)
            past = out.past_key_values
        print("greedy", hashlib.sha256("".join(hs).encode()).hexdigest()[:16])


def _cases():
    import torch

    g = torch.Generator().manual_seed(0)
    shapes = [(1, 9, 3, 128, 128), (1, 9, 3, 512, 512), (2, 4, 2, 37, 37), (1, 2, 2, 70, 70),
              (1, 4, 4, 33, 90), (1, 3, 1, 100, 40), (1, 2, 2, 1, 50), (2, 2, 1, 256, 256),
              (1, 2, 2, 130, 129), (1, 6, 2, 96, 200), (1, 2, 1, 300, 300)]
    for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        for b, h, hk, lq, s in shapes:
            for causal in (False, True):
                for special in ("none", "nan", "inf", "big", "t"):
                    e = 64 if lq >= 128 else 16
                    q = torch.randn(b, h, lq, e, generator=g).to(dt)
                    k = torch.randn(b, hk, s, e, generator=g).to(dt)
                    v = torch.randn(b, hk, s, e, generator=g).to(dt)
                    if special == "nan":
                        q[0, 0, lq // 2, 3] = float("nan")
                        k[0, 0, s // 3, 1] = float("nan")
                    elif special == "inf":
                        k[0, -1, s // 2, 2] = float("inf")
                        v[0, 0, s - 1, 0] = float("-inf")
                        q[-1, 0, 0, 0] = float("-inf")
                    elif special == "big":
                        q = q * 300
                    elif special == "t":
                        q = torch.randn(b, lq, h, e, generator=g).to(dt).transpose(1, 2)
                    yield (dt, b, h, hk, lq, s, causal, special), q, k, v


def kernel_hashes():
    import torch

    torch.set_num_threads(1)
    op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    n = 0
    for key, q, k, v in _cases():
        if key[3] != key[2]:
            kk = k.repeat_interleave(key[2] // key[3], 1)
            vv = v.repeat_interleave(key[2] // key[3], 1)
        else:
            kk, vv = k, v
        out, lse = op(q, kk, vv, 0.0, key[6])
        print("flash", *key, _h(out), _h(lse), out.stride(), lse.stride())
        with torch.inference_mode():
            o2 = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=key[6],
                                                                  enable_gqa=True)
        print("sdpa", *key, _h(o2))
        n += 1
    print("cases", n)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-model", action="store_true")
    a = ap.parse_args()
    kernel_hashes()
    if not a.no_model:
        model_hashes()
