"""numpy's single-thread float32 products in a fresh process, before and after one larger product
has run in it: what a process's first products cost depends on what ran before them.

Usage: .venv/bin/python bench/blas_state.py [--rounds 2]

Each round starts, for every shape, two processes of ours' interpreter (no torch imported;
numpy's own OpenBLAS on one thread): "fresh" times the shape first thing, "after 512^3" first
multiplies two 512x512 zero matrices. Each figure is the median of five batches; the table gives
GFLOPS, the ratio, and whether both processes' products of the same seeded operands have the
same bytes.
On the AMD EPYC of family 23 (Zen) the shapes up to a few hundred rows run up to 3.5x slower
fresh, bits unchanged, and ``perf annotate`` puts the time on OpenBLAS's sgemm kernel right after
its ``prefetcht1`` into the packing buffer (docs/performance.md, "Prefill's causal attention,
bfloat16, and a process's first products").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

SHAPES = [(64, 64, 128), (64, 128, 10), (64, 256, 64), (256, 256, 256), (40, 384, 1536),
          (40, 1536, 384), (128, 576, 1536), (512, 576, 576)]


def worker(warm: bool, shape: int) -> None:
    import numpy as np
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    if warm:
        z = np.zeros((512, 512), np.float32)
        z @ z
    m, k, n = SHAPES[shape]
    rng = np.random.default_rng(shape)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    reps = max(1, int(2e8 // (2 * m * k * n)))
    times = []
    for _ in range(5):
        t = time.process_time()
        for _ in range(reps):
            c = a @ b
        times.append((time.process_time() - t) / reps)
    print(json.dumps([2 * m * k * n / statistics.median(times) / 1e9,
                      hashlib.sha256(c.tobytes()).hexdigest()]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--worker", choices=["fresh", "warm"])
    ap.add_argument("--shape", type=int)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker == "warm", args.shape)
        return
    print(f"cpu: {_harness.cpu_model()}")
    print(f"load average before: {_harness.load_average()} ({args.rounds} rounds, 1 thread)")
    runs = {(i, side): [] for i in range(len(SHAPES)) for side in ("fresh", "warm")}
    for _ in range(args.rounds):
        for i, side in runs:
            out = subprocess.run([str(_harness.OURS), __file__, "--worker", side, "--shape",
                                  str(i)], capture_output=True, text=True, check=True,
                                 env=_harness.env_for("ours", 1))
            runs[i, side].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"load average after: {_harness.load_average()}")
    print(f"{'m x k x n':<16} {'fresh GFLOPS':>13} {'after 512^3':>12} {'ratio':>6}  same bytes")
    for i, (m, k, n) in enumerate(SHAPES):
        fresh = statistics.median(r[0] for r in runs[i, "fresh"])
        warm = statistics.median(r[0] for r in runs[i, "warm"])
        same = len({r[1] for side in ("fresh", "warm") for r in runs[i, side]}) == 1
        print(f"{f'{m}x{k}x{n}':<16} {fresh:13.1f} {warm:12.1f} {warm / fresh:6.2f}  {same}")


if __name__ == "__main__":
    main()
