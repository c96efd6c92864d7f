"""The flash kernel's causal scores as it computes them, against grouped query heads stacked into
one product per key head (tried and not kept), in one process, alternating.

Usage: OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/causal_scores_stacked.py [--rounds 40] [--keep]
       .venv/bin/python bench/causal_scores_stacked.py --model [--rounds 4]

SmolLM2's heads (9 query over 3 key/value heads of 64) at 128 and 512 tokens: the kernel's
``_causal_scores`` multiplies each key head's 64-row block of every grouped query head
separately (numpy's matmul broadcasting over the group); the stacked variant copies the group's
blocks into one (3 x 64)-row operand, multiplies once per key head and copies the product into
the scores. CPU ms per call, medians over rounds of five calls each; whether the visible scores
are bit for bit the same. ``--keep`` holds a round's five results until it ends, so every call
writes freshly mapped memory (as in a model, where other allocations come between two
attention calls); without it a call reuses the memory the previous one freed. The two readings
move with the allocator's history, so ``--model`` decides: SmolLM2's whole prefill forward (128
and 512 tokens, one thread, the model of bench/profile_prefill.py) with the kernel's scores and
with the stacked ones, alternating in one process; CPU ms per forward, medians and every round.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from torchnative.csrc.kernels import nn_attention as na


def stacked(q, kt, sc, rows=64):
    lq, s = q.shape[-2], kt.shape[-1]
    b, hk, g, _, e = q.shape
    out = np.empty((b, hk, g, lq, s), q.dtype)
    stack = np.empty((b, hk, g, rows, e), q.dtype)
    for r0, r1, c in na._causal_blocks(lq, s, rows):
        n = r1 - r0
        qb = stack[:, :, :, :n]
        np.copyto(qb, q[..., r0:r1, :])
        prod = np.matmul(qb.reshape(b, hk, g * n, e), kt[:, :, 0, :, :c])
        prod *= sc
        out[..., r0:r1, :c] = prod.reshape(b, hk, g, n, c)
    return out


def _in_the_model(rounds: int) -> None:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import profile_prefill

    kernel = na._causal_scores

    def with_stack(q, kt, sc):   # the kernel's own choice where stacking does not apply
        if q.shape[-2] < 2 * na._SCORE_ROWS or q.ndim != 5 or q.shape[2] == 1 or \
                kt.shape[2] != 1:
            return kernel(q, kt, sc)
        return stacked(q, kt, sc)

    model = profile_prefill._model()
    try:
        for tokens in (128, 512):
            ids = profile_prefill._ids(tokens)
            times = {"kernel": [], "stacked": []}
            with torch.inference_mode():
                model(ids)
                for _ in range(rounds):
                    for name, fn in (("kernel", kernel), ("stacked", with_stack)):
                        na._causal_scores = fn
                        t = time.process_time()
                        model(ids)
                        times[name].append((time.process_time() - t) * 1e3)
            print(f"prefill {tokens}: " + ", ".join(
                f"{name} {statistics.median(v):.1f} ms ({' '.join(f'{x:.0f}' for x in v)})"
                for name, v in times.items()), flush=True)
    finally:
        na._causal_scores = kernel


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--model", action="store_true")
    args = ap.parse_args()
    if args.model:
        _in_the_model(args.rounds or 4)
        return
    args.rounds = args.rounds or 40
    rng = np.random.default_rng(0)
    sc = np.float32(0.125)
    for lq in (128, 512):
        q = rng.standard_normal((1, 3, 3, lq, 64)).astype(np.float32)
        kt = np.swapaxes(rng.standard_normal((1, 3, 1, lq, 64)).astype(np.float32), -1, -2)
        times = {"kernel": [], "stacked": []}
        for _ in range(args.rounds):
            for name, fn in (("kernel", na._causal_scores), ("stacked", stacked)):
                kept = []
                t = time.process_time()
                for _ in range(5):
                    if args.keep:
                        kept.append(fn(q, kt, sc))
                    else:
                        fn(q, kt, sc)  # freed before the next call allocates
                times[name].append((time.process_time() - t) / 5 * 1e3)
        visible = np.tril(np.ones((lq, lq), bool))
        same = np.array_equal(na._causal_scores(q, kt, sc)[..., visible],
                              stacked(q, kt, sc)[..., visible])
        print(f"{lq} tokens: kernel {statistics.median(times['kernel']):.3f} ms, stacked "
              f"{statistics.median(times['stacked']):.3f} ms; visible scores bit for bit: {same}")


if __name__ == "__main__":
    main()
