"""Sums and means over leading dims (a Linear's bias gradient, a batch's mean), ours vs upstream
in the same run, at the sizes of the training steps and above: from 32768 elements intra-op
threads split the columns (``--threads 2``, the default on these machines, shows the split).

Usage: .venv/bin/python bench/column_sums.py [--rounds 3] [--threads 1|2]
Prints CPU microseconds per call (the fastest of 5 batches) and ours/upstream.
"""

from __future__ import annotations

import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

SHAPES = [(64, 128), (40, 1536), (128, 384), (512, 768)]


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    result = {}
    for shape in SHAPES:
        x = torch.randn(*shape)
        for name, fn in ((f"sum(0) {shape[0]}x{shape[1]}", lambda: x.sum(0)),
                         (f"mean(0) {shape[0]}x{shape[1]}", lambda: x.mean(0))):
            n = 50
            times = timeit.repeat(fn, number=n, repeat=5, timer=time.process_time)
            result[name] = min(times) / n * 1e6
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker)
