"""Time for a million draws of the CPU generator, ours vs upstream, in the same run.

Usage: .venv/bin/python bench/random_draws.py [--rounds 3] [--threads 2]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    cases = {
        "rand 1e6 float32": lambda: torch.rand(10**6, generator=g),
        "randn 1e6 float32": lambda: torch.randn(10**6, generator=g),
        "randn 1e6 float64": lambda: torch.randn(10**6, dtype=torch.float64, generator=g),
        "randint 1e6": lambda: torch.randint(0, 100, (10**6,), generator=g),
        "randperm 1e6": lambda: torch.randperm(10**6, generator=g),
        "bernoulli 1e6": lambda: torch.empty(10**6).bernoulli_(0.5, generator=g),
    }
    out = {}
    for name, fn in cases.items():
        fn()
        t = time.perf_counter()
        fn()
        out[name] = (time.perf_counter() - t) * 1e3
    _harness.emit(out)


if __name__ == "__main__":
    _harness.main(__file__, worker, unit="ms")
