"""fma32 widens its operands chunk by chunk: results over several chunks, with broadcast and
0-d operands, are each lane's exactly rounded a * b + c (checked with fractions on the lanes
that could round twice and on a sample of the rest)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from torchnative.csrc.random import fpmath
from torchnative.csrc.random.fpmath import fma32


def _exact32(x, y, z) -> np.float32:
    exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
    near = np.float32(float(exact))
    cands = [np.nextafter(near, np.float32(-np.inf)), near, np.nextafter(near, np.float32(np.inf))]
    return min(cands, key=lambda v: (abs(Fraction(float(v)) - exact),
                                     int(np.array(v).view(np.uint32)) & 1))


def test_lanes_across_chunks_round_once():
    rng = np.random.default_rng(7)
    n = 2 * fpmath._CHUNK + 123
    a = rng.integers(1, 1 << 24, n).astype(np.float32)
    b = np.full(n, 2.0 ** -24, np.float32)
    c = rng.integers(1 << 23, 1 << 24, n).astype(np.float32)
    # (1 + 2**-23)(1 - 2**-23) + (2**24 + 2) is 2**24 + 3 - 2**-46: its float64 sum lands on the
    # float32 midpoint 2**24 + 3, which ties to 2**24 + 4; rounded once it is 2**24 + 2
    a[::997] = np.float32(1 + 2.0 ** -23)
    b[::997] = np.float32(1 - 2.0 ** -23)
    c[::997] = np.float32(2.0 ** 24 + 2)
    got = fma32(a, b, c)
    idx = np.unique(np.r_[np.arange(0, n, 997), rng.integers(0, n, 300),
                          fpmath._CHUNK - 1, fpmath._CHUNK, 2 * fpmath._CHUNK])
    for i in idx:
        assert got[i] == _exact32(a[i], b[i], c[i]), i
    # a plain float64 sum rounded to float32 differs on the planted lanes: the check can fail
    naive = (a.astype(np.float64) * b + c).astype(np.float32)
    assert (got[::997] == np.float32(2.0 ** 24 + 2)).all()
    assert (naive[::997] == np.float32(2.0 ** 24 + 4)).all()


def test_broadcast_and_scalar_operands_match_lane_by_lane():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, fpmath._CHUNK // 2 + 5)).astype(np.float32)
    b = rng.standard_normal(a.shape[1]).astype(np.float32)
    c = np.float32(-0.3)
    got = fma32(a.T, b[:, None], c)  # non-contiguous and broadcast operands
    assert got.shape == a.T.shape and got.dtype == np.float32
    for i, j in zip(rng.integers(0, a.shape[1], 200), rng.integers(0, 3, 200)):
        assert got[i, j] == _exact32(a[j, i], b[i], c)
    assert fma32(np.float32(2), np.float32(3), np.float32(1)) == np.float32(7)
    assert fma32(a[0, :0], b[:0], c).shape == (0,)


def test_zero_sums_keep_fma_signs():
    """Zero sums skip the exactness recheck (they are exact); their signs are the fused
    operation's: +0 for x + (-x) and 0 + -0, -0 only for -0 + -0."""
    a = np.array([0.0, -0.0, 2.0, 1e-30, 0.0], np.float32)
    b = np.array([1.0, 1.0, 3.0, 1e-10, 5.0], np.float32)
    c = np.array([-0.0, -0.0, -6.0, 0.0, 0.0], np.float32)
    got = fma32(np.tile(a, 9000), np.tile(b, 9000), np.tile(c, 9000))[:5]
    assert np.array_equal(got, [0.0, -0.0, 0.0, np.float32(1e-30) * np.float32(1e-10), 0.0])
    assert np.signbit(got).tolist() == [False, True, False, False, False]
    assert got[3] == _exact32(a[3], b[3], c[3])  # a float32-subnormal result, redone exactly
