"""A prefill's elementwise operators and reductions at SmolLM2's shapes, ours vs upstream.

Usage: .venv/bin/python bench/prefill_ops.py [--rounds 3] [--threads 1] [--tokens 128]

The operators an unfused SmolLM2 forward runs on ``--tokens`` rows besides its products:
RMSNorm's steps (``pow``, ``mean(-1)``, ``+ eps``, ``rsqrt``, the row-broadcast and
column-broadcast multiplies), the residual add, the rotary embedding's steps on a projection's
transposed view (``q * cos``, the negated half, ``rotate_half``'s cat) and the MLP's ``silu``
and ``*``. Per call, CPU time, the fastest of nine batches of twenty calls in each process;
processes alternate (bench/_harness.py) and each figure is the median over rounds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def worker(threads: int, tokens: int) -> None:
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    torch.set_grad_enabled(False)
    g = torch.Generator().manual_seed(0)

    def r(*s):
        return torch.randn(*s, generator=g)

    h, h2, w = r(1, tokens, 576), r(1, tokens, 576), r(576)
    var = r(1, tokens, 1).abs()
    q = r(1, tokens, 9, 64).transpose(1, 2)      # q_proj(x).view(...).transpose(1, 2)
    cos = r(1, 1, tokens, 64)
    act, up = r(1, tokens, 1536), r(1, tokens, 1536)
    cases = {
        "pow(2)": lambda: h.pow(2),
        "mean(-1, keepdim=True)": lambda: h.mean(-1, keepdim=True),
        "variance + eps": lambda: var + 1e-5,
        "rsqrt": lambda: torch.rsqrt(var),
        "h * rsqrt (column broadcast)": lambda: h * var,
        "weight * h (row broadcast)": lambda: w * h,
        "residual add": lambda: h + h2,
        "q * cos (transposed q)": lambda: q * cos,
        "-q[..., 32:]": lambda: -q[..., 32:],
        "rotate_half's cat": lambda: torch.cat((-q[..., 32:], q[..., :32]), dim=-1),
        "silu": lambda: F.silu(act),
        "silu(gate) * up": lambda: act * up,
    }
    result = {}
    for name, fn in cases.items():
        fn()
        best = float("inf")
        for _ in range(9):
            c = time.process_time()
            for _ in range(20):
                fn()
            best = min(best, (time.process_time() - c) / 20)
        result[name] = best * 1e6
    _harness.emit(result)


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=128)
    args, _ = ap.parse_known_args()
    h = _harness.worker_args()
    if h.worker:
        worker(h.threads, args.tokens)
        return
    _harness.compare(Path(__file__), h.rounds, h.threads, ["--tokens", str(args.tokens)])


if __name__ == "__main__":
    main()
