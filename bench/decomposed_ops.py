"""Operators ours serves through upstream's Python decompositions (torch._decomp / torch._refs,
many small dispatched calls each), against upstream's C++ kernels, in the same run; a few that
have kernels of their own since 2026-12-07 beside them (``new_zeros``, ``relu6``, ``selu``,
``pixel_shuffle``).

Usage: .venv/bin/python bench/decomposed_ops.py [--rounds 3] [--threads 1]
Prints CPU microseconds per call (the fastest of 5 batches of 100) and ours/upstream.
"""

from __future__ import annotations

import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def cases(torch):
    F = torch.nn.functional
    torch.manual_seed(0)
    x = torch.randn(16, 64)
    mask = torch.rand(16, 64) > 0.5
    img = torch.randn(1, 8, 16, 16)
    return {
        "new_zeros(4) (kernel)": lambda: x.new_zeros(4),
        "relu6 16x64 (composite)": lambda: F.relu6(x),
        "selu 16x64 (composite)": lambda: F.selu(x),
        "pixel_shuffle 1x8x16x16 (kernel)": lambda: F.pixel_shuffle(img, 2),
        "glu 16x64": lambda: F.glu(x),
        "native_dropout_backward 16x64": lambda: torch.ops.aten.native_dropout_backward(
            x, mask, 2.0),
        "interpolate nearest x2 1x8x16x16": lambda: F.interpolate(img, scale_factor=2),
        "interpolate bilinear x2 1x8x16x16": lambda: F.interpolate(img, scale_factor=2,
                                                                   mode="bilinear"),
        "smooth_l1_loss 16x64": lambda: F.smooth_l1_loss(x, x * 2),
        "slice_scatter 16x64": lambda: torch.slice_scatter(x, x[:, :8], 1, 0, 8),
        "hardshrink 16x64": lambda: F.hardshrink(x),
        "trace 16x16": lambda: torch.trace(x[:, :16]),
    }


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    result = {}
    for name, fn in cases(torch).items():
        fn()
        n = 100
        times = timeit.repeat(fn, number=n, repeat=5, timer=time.process_time)
        result[name] = min(times) / n * 1e6
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker)
