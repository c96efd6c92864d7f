"""What the row-sum and column-sum plan tests share: the general cascade path they are held to,
their inputs, and the check over other shapes and dims."""

from __future__ import annotations

import numpy as np
import torch

from torchnative.csrc.kernels import reduction


def general(t, dim, keepdim):
    """sum_dim's general path (the cascade's geometry, loops and stores)."""
    axes = reduction.reduce_axes(t, dim)
    return reduction.sum_values(t, t.dtype, axes, keepdim)


def values(rng, shape, dt):
    x = rng.standard_normal(shape) * np.exp(rng.uniform(-8, 8, shape))
    return torch.from_numpy(x.astype(dt))


def assert_sums_as_general(shape, dim, seed):
    """``sum(dim)`` of float32 and float64 values of ``shape``, keepdim or not, has the general
    path's bits (a plan taken or not)."""
    rng = np.random.default_rng(seed)
    for dt in (np.float32, np.float64):
        t = values(rng, shape, dt)
        for keepdim in (False, True):
            got = torch.ops.aten.sum.dim_IntList(t, dim, keepdim)
            assert got.numpy().tobytes() == general(t, dim, keepdim).tobytes(), (shape, dim)
