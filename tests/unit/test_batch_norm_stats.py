"""Batch norm's training statistics of a C-contiguous float32 input (``_channel_stats``: a
widening copy, a matrix-vector product, einsum's row-wise dot) give the general steps' results:
the same output, saved mean and inverse deviation and running statistics, bit for bit, as the
same values laid out with other strides (which take numpy's multi-axis reductions). Shapes of
1-d to 3-d batch norm, one channel, one element per channel, offsets that make the deviations
small against the mean. Control: statistics without the means subtracted are caught."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_norm

A = torch.ops.aten
SHAPES = [(16, 8, 16, 16), (16, 16, 8, 8), (64, 128), (8, 5, 7), (2, 3, 4, 5, 6), (1, 4, 3, 3),
          (3, 1, 1, 1), (5, 2)]


def _strided(x):
    """x's values in a non-contiguous tensor (every other element of a wider one)."""
    wide = torch.empty(x.shape[:-1] + (2 * x.shape[-1],))
    view = wide[..., ::2]
    view.copy_(x)
    assert not view.is_contiguous()
    return view


def _run(x, c):
    w, b = torch.linspace(0.5, 2, c), torch.linspace(-1, 1, c)
    rm, rv = torch.linspace(-0.2, 0.3, c), torch.linspace(0.5, 1.5, c)
    out, mean, invstd = A.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5)
    return [t.contiguous().numpy().tobytes() for t in (out, mean, invstd, rm, rv)]


@pytest.mark.parametrize("shape", SHAPES)
def test_contiguous_stats_match_general_steps(shape):
    g = torch.Generator().manual_seed(len(shape) * 100 + shape[1])
    x = torch.randn(shape, generator=g) * 3 + 1000     # large mean, small relative spread
    got = _run(x, shape[1])
    want = _run(_strided(x), shape[1])
    assert got == want


def test_control_without_centring_is_caught(monkeypatch):
    def uncentred(x, c, n):
        xd = x.astype(np.float64)
        axes = (0,) + tuple(range(2, x.ndim))
        return xd, xd.sum(axes) / n, np.square(xd).sum(axes)

    monkeypatch.setattr(nn_norm, "_channel_stats", uncentred)
    x = torch.randn(16, 8, 4, 4, generator=torch.Generator().manual_seed(3)) + 5
    assert _run(x, 8) != _run(_strided(x), 8)

