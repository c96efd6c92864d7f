"""view and reshape share one memoized geometry per (sizes, strides, requested size): the memo
must answer as the computation does, whether it is filled or not, per stride pattern."""

from __future__ import annotations

import pytest
import torch

from torchnative.csrc.kernels import views


def _fresh():
    views._VIEW_GEOMETRY.clear()


@pytest.mark.parametrize("warm", [False, True])
def test_view_and_reshape_per_stride_pattern(warm):
    _fresh()
    base = torch.arange(24.0).reshape(2, 3, 4).clone()
    t = base.transpose(1, 2)                     # same sizes as a (2, 4, 3), other strides
    c = torch.arange(24.0).reshape(2, 4, 3).clone()
    for _ in range(2 if warm else 1):
        v = c.view(2, -1)
        assert v.shape == (2, 12) and v._base is c and v.stride() == (12, 1)
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            t.view(2, -1)                        # no view: refused every time
        r = t.reshape(2, -1)                     # ... and reshape copies
        assert r._base is None and torch.equal(r, t.contiguous().view(2, 12))
        s = t.reshape(2, 4, 1, 3)                # a view exists for the transposed base
        assert s._base is base and s.stride() == (12, 1, 12, 4)   # upstream's strides
    assert (c._size, c._stride, (2, -1)) in views._VIEW_GEOMETRY


def test_invalid_sizes_raise_as_upstream_and_are_not_kept():
    _fresh()
    x = torch.zeros(6)
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"shape '\[4, -1\]' is invalid for input of size 6"):
            x.view(4, -1)
        with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
            x.reshape(-1, -1)
    assert not views._VIEW_GEOMETRY


def test_control_a_memo_ignoring_strides_is_caught(monkeypatch):
    # the first test can fail: a memo keyed on sizes alone hands the transposed tensor the
    # contiguous tensor's view
    real = views.view_geometry
    memo = {}

    def by_sizes(self, size):
        key = (self._size, tuple(size))
        if key not in memo:
            memo[key] = real(self, size)
        return memo[key]

    monkeypatch.setattr(views, "view_geometry", by_sizes)
    import torchnative.csrc.kernels.fast as fast
    monkeypatch.setattr(fast, "view_geometry", by_sizes)
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        test_view_and_reshape_per_stride_pattern(True)
