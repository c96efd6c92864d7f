"""The row plan (cascade_rows.row_sums) gives the general cascade loop's bits on every row it
takes: random lengths (short, long, across the cascade's level boundaries), float32 and float64,
one row and several, dense and with gaps between rows. Upstream itself is compared in
tests/differential/test_sum_order.py; here the plan is held to the loop it replaces, and a
control shows the comparison sees a different order (numpy's pairwise sum)."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.csrc.kernels.support import cascade_rows as cr
from torchnative.csrc.kernels.support import cascade_sum as cs


def _general(X: np.ndarray) -> np.ndarray:
    """The general path's stores for rows of X, as CascadeSum._serial computes them."""
    R, n = X.shape
    g = cs.Geometry((R, n), (X.strides[0] // X.itemsize, 1), (1,))
    s = cs.CascadeSum(g, X.itemsize, False, cs.exact, 1)
    vals, offs = s._serial(g.arrange(X), g.sizes, g.outs)
    return cs._accumulate(vals, offs, R, cs.exact)


def _rows(rng, dt, R, n, gap=0):
    x = rng.standard_normal((R, n + gap)) * np.exp(rng.uniform(-3, 3, (R, n + gap)))
    return x.astype(dt)[:, :n]


LENGTHS = [8, 9, 31, 32, 33, 127, 128, 129, 511, 512, 513, 576, 1536, 4095, 4096, 4097,
           16 * 32 * 4 - 1, 16 * 32 * 4, 16 * 16 * 32 * 4 + 5, 16 ** 3 * 32 * 4 + 33]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_row_plan_matches_general_loop(dt):
    rng = np.random.default_rng(5)
    vs = 32 // np.dtype(dt).itemsize
    lengths = [n for n in LENGTHS if n >= vs] + rng.integers(vs, 3000, 40).tolist()
    for n in lengths:
        for R, gap in ((1, 0), (3, 0), (4, 3)):
            X = _rows(rng, dt, R, n, gap)
            assert cr.row_sums(X, vs).tobytes() == _general(X).tobytes(), (dt, R, n, gap)


def test_control_other_order_is_seen():
    rng = np.random.default_rng(6)
    differ = 0
    for n in range(100, 3000, 97):
        X = _rows(rng, np.float32, 2, n)
        differ += np.add.reduce(X, axis=1).tobytes() != _general(X).tobytes()
    assert differ >= 10, differ


def test_reduce_adds_in_order_along_a_slow_axis():
    # the plan's chains rely on numpy adding term by term when lanes are the fastest axis
    rng = np.random.default_rng(7)
    for k in (3, 5, 16, 17, 40):
        for lanes in (2, 8, 32):
            x = _rows(rng, np.float32, k * 3, lanes).reshape(3, k, lanes)
            assert (np.add.reduce(x, axis=1).tobytes() ==
                    np.add.accumulate(x, axis=1)[:, -1].tobytes()), (k, lanes)


def test_geometries_the_plan_takes():
    assert cs.Geometry((1, 1, 576), (576, 576, 1), (2,)).rows
    assert cs.Geometry((1, 128, 576), (73728, 576, 1), (2,)).rows
    assert cs.Geometry((4, 600), (601, 1), (1,)).rows           # rows with a gap
    assert cs.Geometry((576,), (1,), (0,)).rows                 # one full row
    assert not cs.Geometry((128, 576), (1, 128), (1,)).rows     # transposed: strided rows
    assert not cs.Geometry((128, 576), (576, 1), (0,)).rows     # columns
    assert not cs.Geometry((4, 5, 6), (30, 6, 1), (0, 2)).rows  # two reduced dims apart
    assert not cs.Geometry((), (), ()).rows
