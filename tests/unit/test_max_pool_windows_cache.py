"""max_pool2d_with_indices keeps each pooling geometry's window arrays (the valid mask, each
offset's reach, each window's corner) once made: they equal the arrays computed afresh for
every geometry (padding, dilation, stride, ceil-mode sizes), cannot be written through, and a
second call on a cached geometry gives the first call's values and indices. Control: a cache
entry planted for the wrong geometry changes the indices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_pool

A = torch.ops.aten

GEOMETRIES = [  # h, w, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow
    (16, 16, 2, 2, 2, 2, 0, 0, 1, 1, 8, 8),
    (7, 9, 3, 2, 2, 1, 1, 0, 1, 2, 4, 7),
    (5, 5, 3, 3, 2, 2, 1, 1, 2, 2, 2, 2),
]


def _fresh(h, w, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow):
    reach = (np.arange(kh)[:, None] * (dilh * w) + np.arange(kw)[None, :] * dilw).reshape(-1)
    corner = (np.arange(oh)[:, None] * dh - ph) * w + (np.arange(ow)[None, :] * dw - pw)
    return nn_pool._valid(h, w, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow), reach, corner


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_cached_arrays_are_the_fresh_ones(geometry):
    nn_pool._WINDOWS.clear()
    for _ in range(2):
        got = nn_pool._windows_of(*geometry)
        for a, b in zip(got, _fresh(*geometry)):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
            assert not a.flags.writeable


@pytest.mark.parametrize("args", [((2, 2), (2, 2), (0, 0), (1, 1), False),
                                  ((3, 3), (2, 2), (1, 1), (1, 1), True),
                                  ((3, 2), (2, 1), (1, 0), (2, 2), False)])
def test_repeated_calls_agree(args):
    x = torch.randn(3, 4, 9, 11)
    first = A.max_pool2d_with_indices(x, *args)
    again = A.max_pool2d_with_indices(x, *args)
    for a, b in zip(first, again):
        assert a.numpy().tobytes() == b.numpy().tobytes()


def test_control_wrong_entry_changes_indices():
    x = torch.randn(2, 3, 16, 16)
    ref = A.max_pool2d_with_indices(x, (2, 2), (2, 2))[1]
    valid, reach, corner, empty = nn_pool._windows_of(*GEOMETRIES[0])
    try:
        nn_pool._WINDOWS[GEOMETRIES[0]] = (valid, reach + 1, corner, empty)
        bad = A.max_pool2d_with_indices(x, (2, 2), (2, 2))[1]
    finally:
        nn_pool._WINDOWS.clear()
    assert not torch.equal(bad, ref)
