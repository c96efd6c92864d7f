"""fma32's recheck reads the operands at the flagged lanes only (``_redo_lanes``), whatever
their broadcast: results equal one rounding of the exact ``a * b + c`` (round-to-odd on
materialized float64 operands) on planted midpoints and subnormal sums, and broadcast operands
give the bits of the same operands materialized (NaN, infinities, signed zeros included), on
the small path, the row-chunked path and 0-d shapes. Control: skipping the redo is seen."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.csrc.random import fpmath
from torchnative.csrc.random.fpmath import fma32

SHAPES = [((), (), ()), ((7,), (), (7,)), ((4, 4), (1, 4), (4, 1)), ((3, 5, 6), (5, 1), (1, 1, 6)),
          ((64, 128), (), (64, 128)), ((16, 8, 16, 16), (1, 8, 1, 1), (1, 8, 1, 1)),
          ((2, 3, 4), (1, 1, 1), (3, 4))]


def _operands(shapes, seed, finite=True):
    rng = np.random.default_rng(seed)
    out = []
    for k, s in enumerate(shapes):
        v = (rng.standard_normal(s) * np.exp2(rng.integers(-60, 4, s))).astype(np.float32)
        f = np.atleast_1d(v).reshape(-1) if np.ndim(v) else None
        if f is not None:
            # (1 + 2**-12)**2 is a float32 midpoint; a float64 sum with 2**-60 rounds back to
            # it, one rounding of the exact sum does not
            f[::2] = np.float32(1 + 2.0 ** -12) if k < 2 else np.float32(2.0 ** -60)
            f[1::5] = np.float32(2.0 ** -70) if k < 2 else f[1::5]             # tiny sums
            if not finite:
                f[2::7] = [np.nan, np.inf, -np.inf, -0.0][k % 4]
        out.append(np.asarray(v, np.float32))
    return out


def _exact(a, b, c, shape):
    full = [np.broadcast_to(np.asarray(v, np.float64), shape).reshape(-1) for v in (a, b, c)]
    return fpmath._fma32_exact(*full).reshape(shape)


@pytest.mark.parametrize("shapes", SHAPES)
def test_one_rounding_on_planted_lanes(shapes):
    for seed in range(6):
        a, b, c = _operands(shapes, seed)
        shape = np.broadcast_shapes(*shapes)
        with np.errstate(all="ignore"):
            got = fma32(a, b, c)
        assert got.shape == shape
        assert got.tobytes() == _exact(a, b, c, shape).tobytes(), (shapes, seed)


@pytest.mark.parametrize("shapes", SHAPES)
def test_broadcast_matches_materialized(shapes):
    for seed in range(6):
        a, b, c = _operands(shapes, seed, finite=False)
        shape = np.broadcast_shapes(*shapes)
        full = [np.ascontiguousarray(np.broadcast_to(v, shape)) for v in (a, b, c)]
        with np.errstate(all="ignore"):
            assert fma32(a, b, c).tobytes() == fma32(*full).tobytes(), (shapes, seed)


def test_control_without_redo(monkeypatch):
    a, b, c = _operands(((16, 8, 16, 16), (1, 8, 1, 1), (1, 8, 1, 1)), 0)
    a.reshape(-1)[::2] = np.float32(1 + 2.0 ** -12)
    b[...] = np.float32(1 + 2.0 ** -12)
    c[...] = np.float32(2.0 ** -60)                      # sums just past a midpoint
    want = _exact(a, b, c, a.shape)
    assert fma32(a, b, c).tobytes() == want.tobytes()
    monkeypatch.setattr(fpmath, "_redo_lanes", lambda *args: None)
    assert fma32(a, b, c).tobytes() != want.tobytes()
