"""Per-call cost of small operators, ours vs upstream, measured in the same run.

Usage: .venv/bin/python bench/dispatch_cost.py [--rounds 3] [--threads 2] [--timer wall|cpu]
                                              [--stat median|min]
Cases: ``a + b`` on 16x16 float32, ``mm`` of 1x768 by 768x768, ``softmax`` over
(12, 1, 64), ``view``, ``transpose``, ``cat`` of two rotary halves, basic indexing, and a decode
step's RMSNorm/rotary pieces (negated half of a transposed head, mean, square, from_numpy).
``--timer cpu`` times the process's CPU time instead of wall time: steadier when other processes load the machine, but it counts every thread's time (so
a product running on two threads costs twice its wall time there). ``--stat min`` keeps each
worker's fastest of its 7 batches of 200 calls instead of their median (a loaded machine's
slow moments drop out; the rounds' median is printed either way).
"""

from __future__ import annotations

import statistics
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def cases(torch):
    a, b = torch.rand(16, 16), torch.rand(16, 16)
    x, w = torch.rand(1, 768), torch.rand(768, 768)
    s = torch.rand(12, 1, 64)
    v = torch.rand(4, 8, 16)
    h1, h2 = torch.rand(1, 9, 1, 32), torch.rand(1, 9, 1, 32)
    head = torch.rand(1, 9, 1, 64).transpose(1, 2)     # a decode step's query heads
    rms = torch.rand(1, 1, 576)
    import numpy as np

    arr = np.random.default_rng(0).standard_normal((1, 1, 576)).astype(np.float32)
    return {
        "add 16x16": lambda: a + b,
        "mm 1x768 @ 768x768": lambda: torch.mm(x, w),
        "softmax (12,1,64)": lambda: torch.softmax(s, dim=-1),
        "view": lambda: v.view(32, 16),
        "transpose": lambda: v.transpose(0, 1),
        "cat (2x 1x9x1x32)": lambda: torch.cat((h1, h2), dim=-1),
        "index v[1]": lambda: v[1],
        "index v[:, 2:6]": lambda: v[:, 2:6],
        "neg of a rotary half": lambda: -head[..., 32:],
        "mean(-1, keepdim) 1x1x576": lambda: rms.mean(-1, keepdim=True),
        "pow(2) 1x1x576": lambda: rms.pow(2),
        "from_numpy 1x1x576": lambda: torch.from_numpy(arr),
    }


def worker(threads: int, timer: str, stat: str = "median") -> None:
    import time

    import torch

    torch.set_num_threads(threads)
    result = {}
    for name, fn in cases(torch).items():
        fn()
        n = 200
        times = timeit.repeat(fn, number=n, repeat=7,
                              timer=time.process_time if timer == "cpu" else time.perf_counter)
        result[name] = (min(times) if stat == "min" else statistics.median(times)) / n * 1e6
    _harness.emit(result)


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--timer", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--stat", choices=("median", "min"), default="median")
    known = ap.parse_known_args()[0]
    args = _harness.worker_args()
    if args.worker:
        worker(args.threads, known.timer, known.stat)
        return
    _harness.compare(Path(__file__), args.rounds, args.threads,
                     ["--timer", known.timer, "--stat", known.stat])


if __name__ == "__main__":
    main()
