"""fma32 widens its operands chunk by chunk: results over several chunks, with broadcast and
0-d operands, are each lane's exactly rounded a * b + c (checked with fractions on the lanes
that could round twice and on a sample of the rest)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

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


def _planted(n, seed):
    """Operands whose lanes every 7th hit a float32 midpoint in float64 (see above), one lane a
    float32-subnormal sum, one a zero sum; the rest random."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    a[::7], b[::7], c[::7] = np.float32(1 + 2.0 ** -23), np.float32(1 - 2.0 ** -23), \
        np.float32(2.0 ** 24 + 2)
    if n > 3:
        a[3], b[3], c[3] = np.float32(3e-20), np.float32(5e-20), np.float32(0)
        a[1], b[1], c[1] = np.float32(2), np.float32(3), np.float32(-6)
    return a, b, c


SIZES = [1, 10, 4000, fpmath._SMALL, fpmath._SMALL + 1, fpmath._CHUNK - 3]


@pytest.mark.parametrize("n", SIZES)
def test_every_size_path_rounds_once(n):
    """Whole-array (small) and buffered (mid-sized) paths: planted midpoints, a subnormal-range
    sum and a zero sum are each lane's exactly rounded result."""
    a, b, c = _planted(n, n)
    got = fma32(a, b, c)
    assert got.shape == (n,) and got.dtype == np.float32
    rng = np.random.default_rng(n)
    idx = np.unique(np.r_[np.arange(0, n, 7), np.arange(min(n, 5)), rng.integers(0, n, 60)])
    for i in idx:
        assert got[i].tobytes() == _exact32(a[i], b[i], c[i]).tobytes(), i
    assert (got[::7] == np.float32(2.0 ** 24 + 2)).all()


@pytest.mark.parametrize("n", SIZES[:4])
def test_small_path_recheck_is_what_catches_the_midpoints(n, monkeypatch):
    """Control: with the recheck switched off the planted lanes round twice (2**24 + 4), so the
    test above can fail."""
    a, b, c = _planted(n, n)
    monkeypatch.setattr(fpmath, "_any_recheck", lambda s: False)
    assert (fma32(a, b, c)[::7] == np.float32(2.0 ** 24 + 4)).all()


def test_small_path_recheck_flags_exactly_the_risky_lanes():
    """The few-calls test agrees with the lane-by-lane one on midpoints, subnormal-range sums,
    zeros of both signs, infinities and NaNs."""
    vals = np.array([0.0, -0.0, 1.0, 2.0 ** 24 + 3, 2.0 ** -126, -2.0 ** -130, 2.0 ** -125,
                     np.inf, -np.inf, np.nan, 1e300, 5e-324], np.float64)
    mid = np.float64(2.0 ** 24 + 3)  # exactly a float32 midpoint (between 2**24 + 2 and + 4)
    for v in vals:
        s = np.array([1.5, v, 0.25])
        assert _any_recheck(s) == bool(fpmath._needs_recheck(s).any()), v
        assert _any_recheck(s[::-1]) == bool(fpmath._needs_recheck(s).any()), v
    assert _any_recheck(np.array([mid])) and _any_recheck(np.array([2.0 ** -130]))
    assert _any_recheck(np.array([np.nan, 2.0 ** -130]))  # a NaN hides no subnormal-range lane
    assert not _any_recheck(np.array([0.0, -0.0, 1.0, np.inf]))


def _any_recheck(s) -> bool:
    with np.errstate(over="ignore"):
        return fpmath._any_recheck(s)


@pytest.mark.parametrize("shapes", [((3, 1), (1, 5), ()), ((), (4,), (4,)), ((2, 3), (), (3,)),
                                    ((), (), ()), ((0, 3), (3,), ())])
def test_small_path_broadcasts_as_numpy(shapes):
    rng = np.random.default_rng(len(shapes[0]))
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    got = fma32(a, b, c)
    want_shape = np.broadcast_shapes(*shapes)
    assert got.shape == want_shape and got.dtype == np.float32
    A, B, C = (np.broadcast_to(v, want_shape).ravel() for v in (a, b, c))
    for i, g in enumerate(got.ravel()):
        assert g == _exact32(A[i], B[i], C[i])


@pytest.mark.parametrize("unit", [1.0, -1.0])
@pytest.mark.parametrize("where", ["a", "b"])
def test_a_unit_factor_is_one_rounding_of_the_sum(unit, where):
    """A 0-d factor of +-1 (SGD's ``alpha=1 - dampening``) makes the product exact, so the fused
    result is the float32 sum rounded once: lane by lane the exact rounding, with signed zeros,
    infinities and NaNs as the fused operation gives them, into ``out`` (``c`` itself) too."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal(5000).astype(np.float32)
    c = rng.standard_normal(5000).astype(np.float32) * np.float32(1e-6)
    x[:6] = [0.0, -0.0, -0.0, np.inf, np.nan, 2.0 ** 24 + 1]
    c[:6] = [-0.0, -0.0, 0.0, -np.inf, 1.0, 1.0]
    u = np.float32(unit)
    a, b = (u, x) if where == "a" else (x, u)
    with np.errstate(invalid="ignore"):  # inf - inf (callers hold float_state.quiet)
        got = fma32(a, b, c)
    for i in np.r_[5, rng.integers(6, 5000, 100)]:
        assert got[i].tobytes() == _exact32(a[i] if a.ndim else a, b[i] if b.ndim else b,
                                            c[i]).tobytes(), i
    # zero sums (exact in float64, which keeps their signs): -0 only for -0 + -0
    zeros = (x[:3].astype(np.float64) * unit + c[:3]).astype(np.float32)
    assert got[:3].tobytes() == zeros.tobytes() and np.signbit(zeros).any()
    assert np.isnan(got[3]) == (unit == 1.0) and np.isnan(got[4])  # inf - inf, nan
    inplace = c.copy()
    with np.errstate(invalid="ignore"):
        assert fma32(a, b, inplace, out=inplace) is inplace
    assert inplace.tobytes() == got.tobytes()
