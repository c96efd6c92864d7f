"""Calling a ``@torch.jit.script`` helper, ours vs upstream, measured in the same run.

Usage: .venv/bin/python bench/jit_script.py [--rounds 3] [--threads 2]
Cases: Tent's entropy helper on (64, 10) logits called eagerly and scripted, and a scripted
function with a loop and scalar arguments. Upstream's scripted call runs the TorchScript
interpreter; ours binds and converts the arguments as TorchScript does and runs the Python
function, so "scripted" minus "eager" on our side is the call contract's cost.
"""

from __future__ import annotations

import statistics
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

import torch  # noqa: E402  (either torch: the worker runs in each environment)


def entropy(x: torch.Tensor) -> torch.Tensor:
    return -(x.softmax(1) * x.log_softmax(1)).sum(1)


def ema_loop(x: torch.Tensor, steps: int = 4, momentum: float = 0.9) -> torch.Tensor:
    acc = torch.zeros_like(x)
    for _ in range(steps):
        acc = momentum * acc + (1 - momentum) * x
    return acc


def worker(threads: int) -> None:
    import time

    torch.set_num_threads(threads)
    x = torch.rand(64, 10)
    scripted_entropy, scripted_loop = torch.jit.script(entropy), torch.jit.script(ema_loop)
    cases = {
        "entropy eager": lambda: entropy(x),
        "entropy scripted": lambda: scripted_entropy(x),
        "ema loop eager": lambda: ema_loop(x, 4, 0.9),
        "ema loop scripted": lambda: scripted_loop(x, 4, 0.9),
    }
    result = {}
    for name, fn in cases.items():
        for _ in range(3):  # upstream's profiling executor optimizes after the first calls
            fn()
        n = 200
        times = timeit.repeat(fn, number=n, repeat=7, timer=time.perf_counter)
        result[name] = statistics.median(times) / n * 1e6
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker)
