"""Batch norm's forward returns fma's fresh result as the output when empty_like would lay the
output out C-contiguously (the layout decision kept per input geometry), else copies it into
empty_like's layout: outputs have empty_like's strides and the copy path's bits, for
contiguous, channels-last and ambiguous inputs; running statistics are stored as the general
cast stores them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_norm

A = torch.ops.aten


class _Never(dict):
    def get(self, key, default=None):
        return False


def _inputs():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, 5, 6, generator=g)
    yield x
    yield x.contiguous(memory_format=torch.channels_last)
    yield torch.randn(4, 1, 5, 6, generator=g)                         # C == 1: both layouts
    yield torch.randn(4, 3, 1, 1, generator=g).contiguous(memory_format=torch.channels_last)
    yield torch.randn(4, 3, 5, 6, generator=g)[:, :, 1:]               # strided
    yield torch.randn(8, 5, generator=g)
    yield torch.randn(8, 5, 7, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("training", [True, False])
def test_output_layout_and_bits(training, monkeypatch):
    for x in _inputs():
        c = x.shape[1]
        args = (torch.rand(c, dtype=x.dtype), torch.rand(c, dtype=x.dtype))
        stats = lambda: (torch.rand(c, dtype=x.dtype, generator=torch.Generator().manual_seed(1)),
                         torch.rand(c, dtype=x.dtype, generator=torch.Generator().manual_seed(2)) + 1)
        rm, rv = stats()
        got = A.native_batch_norm(x, *args, rm, rv, training, 0.1, 1e-5)
        monkeypatch.setattr(nn_norm, "_PLAIN_LAYOUT", _Never())
        rm2, rv2 = stats()
        want = A.native_batch_norm(x, *args, rm2, rv2, training, 0.1, 1e-5)
        monkeypatch.undo()
        assert got[0].stride() == torch.empty_like(x).stride() == want[0].stride()
        for g, w in zip(got, want):
            assert g.numpy().tobytes() == w.numpy().tobytes()
        assert rm.numpy().tobytes() == rm2.numpy().tobytes()
        assert rv.numpy().tobytes() == rv2.numpy().tobytes()


def test_running_stats_round_as_the_cast():
    from torchnative.csrc.core.cast import cast_array
    from torchnative.csrc.core import dtypes as D

    vals = np.array([1 + 2.0 ** -24, 1 + 3 * 2.0 ** -24, 1e300, -1e300, np.nan, 1e-46, -0.0])
    t = torch.zeros(vals.size)
    nn_norm._write(t, vals)
    want = cast_array(vals, D.BY_NAME["float64"], D.BY_NAME["float32"])
    assert t.numpy().tobytes() == want.tobytes()
