"""The convolution kernels' gathers: the offset-major windows the forward and the weight
gradient multiply hold the windows' values (against explicit loops) in the layout the product
reads, a contiguous copy or, where the window view reshapes without one (a 1x1 kernel), that
view itself; col2im's bincount equals the kernel's offset-by-offset strided adds bit for bit
(same order from 0.0, in double) over 1-3 spatial dims, strides, dilation, padding,
output_padding and groups. Control: the same sums taken in reverse offset order differ."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from torchnative.csrc.kernels import nn_conv


def _geometries(count=60):
    rnd = random.Random(0)
    for _ in range(count):
        d = rnd.choice([1, 2, 2, 3])
        g = rnd.choice([1, 1, 2, 3])
        ks = [rnd.randint(1, 3) for _ in range(d)]
        st = [rnd.randint(1, 3) for _ in range(d)]
        dl = [rnd.randint(1, 2) for _ in range(d)]
        pd = [rnd.randint(0, 2) for _ in range(d)]
        sp = [rnd.randint(max(k * dd, 2), 8) for k, dd in zip(ks, dl)]
        yield rnd.randint(1, 4), g * rnd.randint(1, 3), g, ks, st, dl, pd, sp


def _naive(x, padding, out, ks, stride, dilation, g, batch_inner):
    """The windows by explicit loops: row (n, g, channel, offset) holds every output position's
    value, channel-major then offset-major; with ``batch_inner`` (g, channel/offset, n * P)."""
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    n, c = xp.shape[:2]
    cg = c // g
    rows = np.empty((n, g, cg * int(np.prod(ks)), int(np.prod(out))))
    for b, gi in itertools.product(range(n), range(g)):
        for p, pos in enumerate(itertools.product(*(range(o) for o in out))):
            row = 0
            for ch in range(cg):
                for off in itertools.product(*(range(k) for k in ks)):
                    at = tuple(q * s + o * dl for q, s, o, dl in zip(pos, stride, off, dilation))
                    rows[b, gi, row, p] = xp[(b, gi * cg + ch) + at]
                    row += 1
    return rows.transpose(1, 2, 0, 3).reshape(g, rows.shape[2], -1) if batch_inner else rows


@pytest.mark.parametrize("batch_inner", [False, True])
def test_windows_hold_the_values(batch_inner):
    rnd = np.random.default_rng(0)
    for n, c, g, ks, st, dl, pd, sp in _geometries():
        x = rnd.standard_normal((n, c) + tuple(sp))
        for layout in (x, np.asfortranarray(x), x.transpose(0, 1, *range(x.ndim - 1, 1, -1))
                       .copy().transpose(0, 1, *range(x.ndim - 1, 1, -1))):
            out = [nn_conv._out_size(sp[i] + 2 * pd[i], ks[i], st[i], 0, dl[i])
                   for i in range(len(ks))]
            want = _naive(layout, pd, out, ks, st, dl, g, batch_inner)
            got = nn_conv._windows_by_offset(layout, pd, out, ks, st, dl, g, batch_inner)
            assert got.shape == want.shape and np.array_equal(got, want)
            # a copy is C-contiguous; otherwise it is the (read-only) window view itself
            assert got.flags.c_contiguous or not got.flags.writeable


def test_a_view_stays_a_view():
    """A 1x1 kernel without padding: the windows are a view of the input, no copy."""
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 4))
    got = nn_conv._windows_by_offset(x, [0, 0], [2, 4], (1, 1), [1, 1], [1, 1], 1)
    assert np.shares_memory(got, x) and got.shape == (2, 1, 3, 8)


def _transposed_both(monkeypatch, x, w, st, pd, dl, op, g):
    fast = nn_conv._transposed(x, w, st, pd, dl, op, g)
    monkeypatch.setattr(nn_conv, "_COL2IM_MAX", -1)
    slow = nn_conv._transposed(x, w, st, pd, dl, op, g)
    monkeypatch.undo()
    return fast, slow


def test_col2im_bincount_equals_the_offset_loop(monkeypatch):
    rnd = np.random.default_rng(1)
    for n, c, g, ks, st, dl, pd, sp in _geometries():
        og = rnd.integers(1, 4)
        op = [int(rnd.integers(0, max(1, min(s, d)))) for s, d in zip(st, dl)]
        pd = [min(p, (k - 1) * d) for p, k, d in zip(pd, ks, dl)]
        x = rnd.standard_normal((n, c) + tuple(sp)) * 10.0 ** rnd.integers(-3, 4, (n, c) + tuple(sp))
        w = rnd.standard_normal((c, og) + tuple(ks))
        fast, slow = _transposed_both(monkeypatch, x, w, st, pd, dl, op, g)
        assert fast.shape == slow.shape
        assert fast.tobytes() == slow.tobytes()


def test_col2im_takes_the_bincount_path_and_a_reversed_order_is_caught(monkeypatch):
    calls = []
    real = nn_conv._col2im_index
    monkeypatch.setattr(nn_conv, "_col2im_index", lambda *a: calls.append(a) or real(*a))
    rnd = np.random.default_rng(2)
    # magnitudes far apart make the order of the additions visible in the last bits
    x = rnd.standard_normal((2, 3, 6, 6)) * 10.0 ** rnd.integers(-8, 9, (2, 3, 6, 6))
    w = rnd.standard_normal((3, 2, 3, 3)) * 10.0 ** rnd.integers(-8, 9, (3, 2, 3, 3))
    fast = nn_conv._transposed(x, w, [1, 1], [0, 0], [1, 1], [0, 0], 1)
    assert calls
    monkeypatch.setattr(nn_conv, "_COL2IM_MAX", -1)
    assert fast.tobytes() == nn_conv._transposed(x, w, [1, 1], [0, 0], [1, 1], [0, 0], 1).tobytes()
    n, g, p, og = 2, 1, 36, 2
    cols = np.matmul(x.reshape(n, g, 3, p).transpose(0, 1, 3, 2), w.reshape(g, 3, og * 9))
    cols = cols.reshape(n, g, p, og, 3, 3)
    acc = np.zeros((n, g, og, 8, 8))  # the same sums taken in reverse offset order
    for i, j in reversed(list(itertools.product(range(3), range(3)))):
        acc[..., i:i + 6, j:j + 6] += cols[:, :, :, :, i, j].transpose(0, 1, 3, 2).reshape(
            n, g, og, 6, 6)
    assert fast.tobytes() != acc.reshape(fast.shape).tobytes()
