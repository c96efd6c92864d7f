"""nn_loss_cascade.cascade_total is LossNLL.cpp's loop of partial sums, transcribed literally
here: the same bits for float32 and float64 over batch sizes around runs of 16, 256 and 4096,
signed zeros, ignored items (at multiples of 16 too, which lengthen a run; and enough of them
to take the run-by-run path), losses (subtracted) and weights (added). Control: a literal loop
with runs of 8 is caught."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.csrc.kernels.nn_loss_cascade import cascade_total


def literal_loop(values, index, batch, subtract, dt, power=None):
    """nll_loss_out_frame's loop, one item at a time, in numpy scalars of ``dt``."""
    if power is None:
        power = max(4, (batch - 1).bit_length() // 8 if batch > 1 else 0)
    mask = (1 << power) - 1
    p = [dt.type(0)] * 8
    with np.errstate(all="ignore"):
        for v, b in zip(values, index):
            p[0] = dt.type(p[0] - v) if subtract else dt.type(p[0] + v)
            for j in range(7):
                if b & (mask << (j * power)):
                    break
                p[j + 1] = dt.type(p[j + 1] + p[j])
                p[j] = dt.type(0)
        total = dt.type(0)
        for x in p:
            total = dt.type(total + x)
    return total


def _cases(dt):
    rng = np.random.default_rng(11)
    for batch in (1, 2, 15, 16, 17, 33, 255, 256, 257, 1000, 4096, 4097):
        for kind in ("all", "zeros", "some ignored", "run ends ignored", "most ignored"):
            vals = (rng.standard_normal(batch) * np.exp(rng.uniform(-6, 6, batch))).astype(dt)
            keep = np.ones(batch, bool)
            if kind == "zeros":
                vals[rng.integers(0, batch, max(1, batch // 4))] = -0.0
            elif kind == "some ignored":
                keep = rng.random(batch) > 0.3
            elif kind == "run ends ignored":
                keep[::16] = False
                keep[::48] = True
            elif kind == "most ignored":
                keep[:] = False
                keep[rng.integers(0, batch, max(1, batch // 20))] = True
                keep[batch // 2:] = True
            idx = np.flatnonzero(keep)
            yield batch, kind, vals[idx], idx


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_matches_the_literal_loop(dt):
    dt = np.dtype(dt)
    for batch, kind, vals, idx in _cases(dt):
        for subtract in (True, False):
            with np.errstate(all="ignore"):
                got = cascade_total(vals, idx, batch, subtract)
            want = literal_loop(vals, idx, batch, subtract, dt)
            assert np.dtype(type(got)) == dt and got.tobytes() == want.tobytes(), \
                (batch, kind, subtract, got, want)
            if idx.size == batch:     # every item kept: the index may be left out
                with np.errstate(all="ignore"):
                    whole = cascade_total(vals, None, batch, subtract)
                assert whole.tobytes() == want.tobytes(), (batch, kind, subtract)


def test_control_another_run_length_is_caught():
    dt = np.dtype(np.float32)
    differ = 0
    for batch, kind, vals, idx in _cases(dt):
        with np.errstate(all="ignore"):
            got = cascade_total(vals, idx, batch, True)
        differ += got.tobytes() != literal_loop(vals, idx, batch, True, dt, power=3).tobytes()
    assert differ >= 10, differ
