"""In-place pointwise operators and the optimizer steps built on them, ours vs upstream, in the
same run.

Usage: .venv/bin/python bench/inplace_steps.py [--rounds 3] [--threads 1]

Each operator updates a float32 tensor in place, as an optimizer does (``add_`` with and without
``alpha``, ``sub_``, ``mul_`` by a number, ``div_``, ``lerp_``, ``addcmul_``, ``addcdiv_``), at
three sizes: 16x16, 128x64 (the digits MLP's first weight) and 1536x384 (a MiniLM feed-forward
weight). The operands hold values an optimizer's state holds (no subnormals: those cost both
sides alike and say nothing about the kernels). Then whole ``step()`` calls of SGD with
momentum, Adam and AdamW (for-loop, upstream's CPU default) over MiniLM-sized parameters
(4 x 1536x384, 4 x 384x384, 8 x 384: 3.0M values) with fixed gradients. Figures are median
CPU µs per call (``step`` rows: per step).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

SIZES = {"16x16": (16, 16), "128x64": (128, 64), "1536x384": (1536, 384)}
SHAPES = [(1536, 384)] * 4 + [(384, 384)] * 4 + [(384,)] * 8


def _ops(torch, shape):
    g = torch.Generator().manual_seed(0)
    self = torch.randn(shape, generator=g)
    other = torch.randn(shape, generator=g) * 0.01
    near_one = 1 + torch.rand(shape, generator=g) * 1e-4  # divisors: self stays in range
    # each call moves self a little and keeps it in range: no subnormals, no overflow
    return {
        "add_": lambda: self.add_(other),
        "add_(alpha)": lambda: self.add_(other, alpha=-1e-3),
        "sub_": lambda: self.sub_(other),
        "mul_(number)": lambda: self.mul_(0.999),
        "div_": lambda: self.div_(near_one),
        "lerp_": lambda: self.lerp_(other, 0.1),
        "addcmul_": lambda: self.addcmul_(other, other, value=0.001),
        "addcdiv_": lambda: self.addcdiv_(other, near_one, value=-1e-3),
    }


def _step(torch, make):
    g = torch.Generator().manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(s, generator=g) * 0.02) for s in SHAPES]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g) * 0.01
    return make(params).step


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    result = {}
    for size, shape in SIZES.items():
        for name, fn in _ops(torch, shape).items():
            result[f"{name} {size}"] = _harness.cpu_us_per_call(fn)
    optim = torch.optim
    for name, make in (("SGD momentum", lambda ps: optim.SGD(ps, lr=0.01, momentum=0.9)),
                       ("Adam", lambda ps: optim.Adam(ps, lr=1e-3)),
                       ("AdamW", lambda ps: optim.AdamW(ps, lr=1e-3))):
        result[f"step: {name}, 3.0M values"] = _harness.cpu_us_per_call(_step(torch, make))
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker, unit="us")
