"""Shared by the in-place lane tests: operands holding special values, and bit-for-bit equality."""

from __future__ import annotations

import torch

SPECIAL = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e-45, -1e-45, 3e38, -3e38,
           1.0, -1.0, 0.5]


def operand(shape, dtype, seed, positive=False, special=SPECIAL):
    """Random values of a wide range with ``special`` planted at seed-dependent places."""
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=dtype) * torch.rand(shape, generator=g,
                                                                   dtype=dtype) * 1e3
    flat = t.view(-1)
    for i in range(min(len(special), flat.numel())):
        flat[(i * (seed + 3)) % flat.numel()] = special[(i + seed) % len(special)]
    return t.abs() if positive else t


def same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.numpy().tobytes() == b.numpy().tobytes()
