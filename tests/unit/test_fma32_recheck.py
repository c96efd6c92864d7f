"""fma32's quick test for lanes that could round twice (``_any_recheck``: a masked compare for
float32 midpoints, a smallest magnitude for the subnormal range) answers as the lane-by-lane mask
it stands for (``_needs_recheck``) on sums built to sit on float32 midpoints, in and at the edges
of float32's subnormal range, at zero, NaN and infinity (what the recheck then does with the
flagged lanes: test_fma32_redo_lanes.py)."""

from __future__ import annotations

import numpy as np

from torchnative.csrc.random import fpmath


def _sums(rng) -> np.ndarray:
    n = int(rng.integers(1, 40))
    s = rng.standard_normal(n) * 10.0 ** int(rng.integers(-45, 5))
    pick = rng.random(n)
    s[pick < 0.1] = 0.0
    bits = s.view(np.int64)
    mid = pick > 0.97
    bits[mid] = (bits[mid] & ~np.int64((1 << 29) - 1)) | (1 << 28)
    tiny = (pick > 0.94) & (pick <= 0.97)
    s[tiny] = rng.standard_normal(int(tiny.sum())) * 2.0 ** -140
    edge = [np.nan, -np.inf, np.inf, 2.0 ** -125, -np.nextafter(2.0 ** -125, 0), 5e-324, -0.0]
    if rng.random() < 0.3:
        s[int(rng.integers(n))] = edge[int(rng.integers(len(edge)))]
    return s


def test_quick_test_answers_as_the_lane_mask():
    rng = np.random.default_rng(3)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        s = _sums(rng)
        want = bool(fpmath._needs_recheck(s).any())
        assert fpmath._any_recheck(s) is want, s
        seen[want] += 1
    assert min(seen.values()) > 300  # both answers exercised


def test_edges_of_the_subnormal_test():
    at = np.array([2.0 ** -125, -(2.0 ** -125), 0.0, -0.0, 1.0])
    assert not fpmath._any_recheck(at)
    below = np.nextafter(2.0 ** -125, 0)
    assert fpmath._any_recheck(np.array([1.0, below]))
    assert fpmath._any_recheck(np.array([5e-324]))

