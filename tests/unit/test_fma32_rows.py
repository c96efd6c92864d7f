"""fma32's row-chunked path (a broadcast operand over a large shape: batch norm's
``x * alpha + beta``) gives the flat path's bits: the same operands materialized at full shape
go through the flat chunks. Planted float32 midpoints, subnormal and zero sums, NaN and
infinities; leading-axis, channel and trailing broadcasts; 0-d operands; chunks of several rows.
Control: the row path without its recheck differs on the planted lanes."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.csrc.random import fpmath
from torchnative.csrc.random.fpmath import fma32


def _planted(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    f = x.reshape(-1)
    f[::11] = np.float32(1 + 2.0 ** -23)
    f[1::13] = np.float32(1e-30)
    f[2::17] = np.float32(np.nan)
    f[3::19] = np.float32(np.inf)
    f[4::23] = np.float32(-0.0)
    return x


def _channel(shape, seed, c_axis=1):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape[c_axis]).astype(np.float32)
    v[::3] = np.float32(1 - 2.0 ** -23)
    v[1::5] = np.float32(1e-10)
    bshape = [1] * len(shape)
    bshape[c_axis] = shape[c_axis]
    return v.reshape(bshape)


def _flat(a, b, c, shape):
    full = [np.ascontiguousarray(np.broadcast_to(v, shape)) if np.ndim(v) else v for v in (a, b, c)]
    return fma32(*full)


SHAPES = [(16, 8, 16, 16), (16, 16, 8, 8), (4, 3, 3000), (64, 1, 200), (2, fpmath._CHUNK + 7)]


@pytest.mark.parametrize("shape", SHAPES)
def test_rows_match_flat_path(shape):
    x = _planted(shape, 1)
    alpha, beta = _channel(shape, 2), _channel(shape, 3)
    beta.reshape(-1)[::4] = np.float32(2.0 ** 24 + 2)
    for a, b, c in ((x, alpha, beta), (alpha, x, beta), (x, alpha, np.float32(-0.0)),
                    (np.float32(0.5), x, beta), (x, alpha[..., :1] if alpha.ndim > 1 else alpha, x)):
        got = fma32(a, b, c)
        want = _flat(a, b, c, shape)
        assert got.shape == want.shape and got.tobytes() == want.tobytes(), shape


def test_rows_path_is_taken_and_recheck_matters(monkeypatch):
    shape = (16, 8, 16, 16)
    x = np.full(shape, np.float32(1 + 2.0 ** -23))
    alpha = np.full((1, 8, 1, 1), np.float32(1 - 2.0 ** -23))
    beta = np.full((1, 8, 1, 1), np.float32(2.0 ** 24 + 2))
    calls = []
    real = fpmath._fma32_rows
    monkeypatch.setattr(fpmath, "_fma32_rows", lambda *a: calls.append(1) or real(*a))
    got = fma32(x, alpha, beta)
    assert calls and (got == np.float32(2.0 ** 24 + 2)).all()
    monkeypatch.setattr(fpmath, "_redo_inexact", lambda *a: None)
    assert (fma32(x, alpha, beta) == np.float32(2.0 ** 24 + 4)).all()   # control
