"""max_pool2d_with_indices' forward kernel against upstream's scan written out window by window
in Python (DilatedMaxPool2d's loop: only real positions compete, a value is taken when greater
than the running maximum or NaN, the first real position is the start): values, indices,
dtypes and strides, bit for bit, over padding, dilation, ceil mode, overlapping windows, ties,
NaN, -inf, integer and half dtypes, channels-last and unbatched inputs, and both orientations of
the kernel's per-offset scan (batch x channels above and below an output row's length).
Control: a scan that takes equal values (``>=``) fails on ties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_pool

A = torch.ops.aten


def _out(n, k, p, s, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def reference(x, k, s, p, d, ceil, greater=lambda a, b: a > b):
    """Upstream's per-window scan on the values as stored (float16/bfloat16 widened exactly)."""
    v = x.float().numpy() if x.dtype in (torch.float16, torch.bfloat16) else x.numpy()
    lead, (h, w) = v.shape[:-2], v.shape[-2:]
    oh, ow = _out(h, k, p, s, d, ceil), _out(w, k, p, s, d, ceil)
    vals = np.empty(lead + (oh, ow), v.dtype)
    idx = np.empty(lead + (oh, ow), np.int64)
    for pos in itertools.product(*(range(n) for n in lead)):
        plane = v[pos]
        for i, j in itertools.product(range(oh), range(ow)):
            rows = [r for r in range(i * s - p, i * s - p + d * (k - 1) + 1, d) if 0 <= r < h]
            cols = [c for c in range(j * s - p, j * s - p + d * (k - 1) + 1, d) if 0 <= c < w]
            best = -math.inf if v.dtype.kind == "f" else np.iinfo(v.dtype).min
            at = rows[0] * w + cols[0]
            for r, c in itertools.product(rows, cols):
                val = plane[r, c]
                if greater(val, best) or (v.dtype.kind == "f" and math.isnan(val)):
                    best, at = val, r * w + c
            vals[pos + (i, j)] = plane[at // w, at % w]
            idx[pos + (i, j)] = at
    return vals, idx


def _bits(t):
    return t.dtype, tuple(t.shape), t.stride(), t.contiguous().reshape(-1).view(torch.uint8) \
        .numpy().tobytes()


def _inputs():
    g = torch.Generator().manual_seed(0)
    yield "randn", torch.randn(2, 3, 9, 10, generator=g)
    yield "ties", torch.randint(-2, 3, (2, 3, 8, 8), generator=g).float()
    yield "int", torch.randint(-3, 3, (1, 2, 7, 7), generator=g).to(torch.int32)
    yield "int64-min", torch.full((1, 2, 5, 6), torch.iinfo(torch.int64).min)
    nan = torch.randn(2, 2, 8, 8, generator=g)
    nan[0, 0, 1, 1] = nan[0, 0, 1, 2] = nan[1, 1, 4, 4] = math.nan
    yield "nan", nan
    neg = torch.randn(1, 3, 6, 7, generator=g)
    neg[0, :, :3] = -math.inf
    yield "neginf", neg
    yield "zeros", torch.tensor([[[[0.0, -0.0], [-0.0, 0.0]]]]).repeat(2, 3, 3, 3)
    yield "float16", torch.randn(2, 2, 7, 7, generator=g).half()
    yield "bfloat16", torch.randn(2, 2, 7, 7, generator=g).bfloat16()
    yield "float64", torch.randn(3, 1, 6, 9, generator=g, dtype=torch.float64)
    yield "unbatched", torch.randn(3, 8, 8, generator=g)
    yield "channels-last", torch.randn(2, 5, 8, 7, generator=g).contiguous(
        memory_format=torch.channels_last)
    yield "many-planes", torch.randn(16, 8, 6, 6, generator=g)  # lead >= ow: transposed scan
    yield "wide-rows", torch.randn(1, 1, 4, 40, generator=g)  # lead < ow: in-place scan


CFG = [(2, 2, 0, 1, False), (3, 2, 1, 1, False), (3, 1, 1, 1, True), (2, 2, 1, 2, True),
       (3, 3, 1, 1, True), (2, 1, 0, 1, False)]


@pytest.mark.parametrize("name,x", list(_inputs()), ids=lambda v: v if isinstance(v, str) else "")
def test_against_the_scan(name, x):
    for k, s, p, d, ceil in CFG:
        if min(x.shape[-2:]) + 2 * p < d * (k - 1) + 1:
            continue
        vals, idx = A.max_pool2d_with_indices(x, [k, k], [s, s], [p, p], [d, d], ceil)
        rv, ri = reference(x, k, s, p, d, ceil)
        want_v = torch.from_numpy(rv).to(x.dtype)
        assert vals.dtype == x.dtype and idx.dtype == torch.int64
        layout = {"memory_format": torch.channels_last} if name == "channels-last" else {}
        assert vals.is_contiguous(**layout) and idx.is_contiguous(**layout)
        assert _bits(vals.contiguous()) == _bits(want_v), (name, k, s, p, d, ceil)
        assert torch.equal(idx, torch.from_numpy(ri)), (name, k, s, p, d, ceil)


def test_control_ties_catch_a_greater_or_equal_scan():
    x = torch.zeros(1, 1, 4, 4)
    vals, idx = A.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    _, ri = reference(x, 2, 2, 0, 1, False)
    _, wrong = reference(x, 2, 2, 0, 1, False, greater=lambda a, b: a >= b)
    assert torch.equal(idx, torch.from_numpy(ri))
    assert not torch.equal(idx, torch.from_numpy(wrong))


def test_both_scan_orientations_are_exercised(monkeypatch):
    seen = []
    real = nn_pool._scan_max

    def spy(xp, *args):
        seen.append(int(np.prod(xp.shape[:-2])) >= args[7])
        return real(xp, *args)

    monkeypatch.setattr(nn_pool, "_scan_max", spy)
    # overlapping windows: exactly tiling ones take the tiled scan (test_max_pool_tiles.py)
    A.max_pool2d_with_indices(torch.randn(16, 8, 7, 7), [3, 3], [2, 2], [0, 0], [1, 1], False)
    A.max_pool2d_with_indices(torch.randn(1, 1, 5, 41), [3, 3], [2, 2], [0, 0], [1, 1], False)
    assert seen == [True, False]
