"""The flash kernel's causal scores as it computes them, against grouped query heads stacked into
one product per key head (tried and not kept), in one process, alternating.

Usage: OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/causal_scores_stacked.py [--rounds 40] [--keep]

SmolLM2's heads (9 query over 3 key/value heads of 64) at 128 and 512 tokens: the kernel's
``_causal_scores`` multiplies each key head's 64-row block of every grouped query head
separately (numpy's matmul broadcasting over the group); the stacked variant copies the group's
blocks into one (3 x 64)-row operand, multiplies once per key head and copies the product into
the scores. CPU ms per call, medians over rounds of five calls each; whether the visible scores
are bit for bit the same. ``--keep`` holds a round's five results until it ends, so every call
writes freshly mapped memory (as in a model, where other allocations come between two
attention calls); without it a call reuses the memory the previous one freed.
"""

from __future__ import annotations

import argparse
import statistics
import time

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    rounds = args.rounds
    rng = np.random.default_rng(0)
    sc = np.float32(0.125)
    for lq in (128, 512):
        q = rng.standard_normal((1, 3, 3, lq, 64)).astype(np.float32)
        kt = np.swapaxes(rng.standard_normal((1, 3, 1, lq, 64)).astype(np.float32), -1, -2)
        times = {"kernel": [], "stacked": []}
        for _ in range(rounds):
            for name, fn in (("kernel", na._causal_scores), ("stacked", stacked)):
                t = time.process_time()
                kept = []
                for _ in range(5):
                    out = fn(q, kt, sc)
                    if args.keep:
                        kept.append(out)
                    del out
                times[name].append((time.process_time() - t) / 5 * 1e3)
                del kept
        visible = np.tril(np.ones((lq, lq), bool))
        same = np.array_equal(na._causal_scores(q, kt, sc)[..., visible],
                              stacked(q, kt, sc)[..., visible])
        print(f"{lq} tokens: kernel {statistics.median(times['kernel']):.3f} ms, stacked "
              f"{statistics.median(times['stacked']):.3f} ms; visible scores bit for bit: {same}")


if __name__ == "__main__":
    main()
