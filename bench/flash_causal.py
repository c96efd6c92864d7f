"""The causal flash attention call of a SmolLM2 prefill (9 query heads over 3 key/value heads,
head size 64, the heads transposed as the model's), timed alone: ours, upstream and optionally an
older tree of ours, in alternating processes.

Usage: .venv/bin/python bench/flash_causal.py [--rounds 3] [--tokens 128 512] [--before SRC]

Each process runs ``scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)`` in
inference mode with one thread: a warm-up, then the median CPU time of 200 calls (128 tokens)
or 40 (512). Prints each round and the medians over rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def worker(tokens) -> None:
    import torch

    torch.set_num_threads(1)
    out = {}
    for n in tokens:
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(1, n, h, 64, generator=g).transpose(1, 2) for h in (9, 3, 3))
        with torch.inference_mode():
            def call():
                torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                 enable_gqa=True)
            call()
            times = []
            for _ in range(200 if n <= 128 else 40):
                c = time.process_time()
                call()
                times.append((time.process_time() - c) * 1e3)
        out[n] = statistics.median(times)
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tokens", type=int, nargs="+", default=[128, 512])
    ap.add_argument("--before")
    a = ap.parse_args()
    if a.worker:
        return worker(a.tokens)
    sides = ([("before", str(REPO / ".venv/bin/python"), a.before)] if a.before else []) + \
        [("ours", str(REPO / ".venv/bin/python"), None),
         ("upstream", str(REPO / ".venv-upstream/bin/python"), None)]
    print("load average before:", os.getloadavg())
    res = {name: [] for name, _, _ in sides}
    for r in range(a.rounds):
        for name, python, path in sides:
            env = dict(os.environ, **({"PYTHONPATH": path} if path else {}))
            p = subprocess.run([python, "-W", "ignore", __file__, "--worker", "--tokens",
                                *map(str, a.tokens)], check=True, capture_output=True,
                               text=True, env=env)
            res[name].append(json.loads(p.stdout.strip().splitlines()[-1]))
        print(f"round {r + 1}:", "; ".join(
            f"{name} " + " / ".join(f"{res[name][-1][str(n)]:.3f}" for n in a.tokens)
            for name, _, _ in sides))
    print("load average after:", os.getloadavg())
    for n in a.tokens:
        print(f"{n} tokens, median ms:", ", ".join(
            f"{name} {statistics.median(x[str(n)] for x in res[name]):.3f}" for name, _, _ in sides))


if __name__ == "__main__":
    main()
