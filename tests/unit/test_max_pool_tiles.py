"""max_pool2d_with_indices' tiled scan (kernel == stride, no padding or dilation, windows that
tile the plane) gives the general scan's values and indices: ties (the first maximum wins, -0.0
before 0.0), NaN (the last NaN wins), -inf windows, integer dtypes, 3-d and channels-last
inputs, 1x1 and non-square kernels. Control: a scan that lets later equal values win is caught."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_pool

A = torch.ops.aten


def _general(monkeypatch, *args):
    def general(x, kh, kw, oh, ow):
        h, w = x.shape[-2:]
        valid = nn_pool._windows_of(h, w, kh, kw, kh, kw, 0, 0, 1, 1, oh, ow)[0]
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        return nn_pool._scan_max(x, kh, kw, kh, kw, 1, 1, oh, ow, valid, low)

    with monkeypatch.context() as m:
        m.setattr(nn_pool, "_scan_tiles", general)
        return A.max_pool2d_with_indices(*args)


def _input(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape).astype(np.float64)      # many ties
    f = x.reshape(-1)
    f[::7] = -0.0
    f[1::11] = 0.0
    f[2::13] = np.nan
    f[3::5] = -np.inf
    f[4::17] = np.nan
    t = torch.from_numpy(x).to(dtype)
    return t


CASES = [((2, 3, 8, 8), [2, 2]), ((16, 8, 16, 16), [2, 2]), ((3, 6, 9), [3, 3]),
         ((2, 4, 6, 8), [3, 2]), ((2, 2, 5, 5), [1, 1]), ((1, 1, 4, 4), [4, 4])]


@pytest.mark.parametrize("shape,k", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.bfloat16])
def test_tiles_match_general_scan(shape, k, dtype, monkeypatch):
    x = _input(shape, dtype, len(shape) + k[0])
    for t in (x, x.contiguous(memory_format=torch.channels_last) if x.dim() == 4 else x):
        for ceil in (False, True):
            got = A.max_pool2d_with_indices(t, k, k, [0, 0], [1, 1], ceil)
            want = _general(monkeypatch, t, k, k, [0, 0], [1, 1], ceil)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.stride() == w.stride()
                assert g.contiguous().view(torch.uint8).numpy().tobytes() == \
                    w.contiguous().view(torch.uint8).numpy().tobytes()


def test_other_geometries_keep_the_general_scan(monkeypatch):
    monkeypatch.setattr(nn_pool, "_scan_tiles", None)         # would fail if taken
    x = _input((2, 3, 9, 9), torch.float32, 1)
    A.max_pool2d_with_indices(x, [2, 2], [2, 2])             # remainder row and column
    A.max_pool2d_with_indices(x, [3, 3], [2, 2])             # overlapping windows
    A.max_pool2d_with_indices(x[..., :8, :8], [2, 2], [2, 2], [1, 1])   # padding
    A.max_pool2d_with_indices(x[..., :8, :8], [2, 2], [2, 2], [0, 0], [2, 2])  # dilation


def test_control_last_tie_is_caught(monkeypatch):
    x = torch.tensor([[[[1.0, 1.0], [-0.0, 0.0]]]])
    got = A.max_pool2d_with_indices(x, [2, 2], [2, 2])
    assert got[1].item() == 0
    y = torch.tensor([[[[-0.0, 0.0], [-1.0, -1.0]]]])
    assert torch.ops.aten.max_pool2d_with_indices(y, [2, 2], [2, 2])[1].item() == 0
    monkeypatch.setattr(nn_pool.np, "greater", np.greater_equal)
    assert A.max_pool2d_with_indices(x, [2, 2], [2, 2])[1].item() != 0
