"""relu's lane (support/relu_max.py): whichever of numpy's ``maximum(0, x)`` and the bit select
the probe keeps, the result has the bit select's bits -- -0.0 and NaN payloads kept, negatives
+0.0 -- and the probe refuses a maximum that picks the other of two equal zeros or another
operand order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels.support import relu_max
from torchnative.csrc.kernels.support.zero_select import zero_where


def _specials(dt):
    bits = np.dtype(f"u{np.dtype(dt).itemsize}")
    nan = np.array([np.nan, -np.nan], dt).view(bits)
    odd = (nan | 5).view(dt)                     # NaNs with a payload, both signs
    return np.concatenate((np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-45, 2.5, -2.5], dt),
                           odd))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_relu_keeps_the_bit_select_bits(dt):
    rng = np.random.default_rng(3)
    bits = np.dtype(f"u{np.dtype(dt).itemsize}")
    s = _specials(dt)
    for n in (1, 7, 16, 33, 100, 4097, 2 * relu_max._BLOCK + 5):   # (the last: blocks)
        x = rng.choice(np.concatenate((s, rng.standard_normal(16).astype(dt))), n)
        want = zero_where(np.less(x, dt(0)), x).view(bits)
        assert np.array_equal(relu_max.relu_array(x).view(bits), want), n
        got = torch.relu(torch.from_numpy(x.reshape(1, -1))).numpy().reshape(-1)
        assert np.array_equal(got.view(bits), want), n
    neg_zero = torch.relu(torch.tensor([-0.0, -3.0], dtype=torch.float32 if dt is np.float32
                                       else torch.float64))
    assert np.signbit(neg_zero.numpy()).tolist() == [True, False]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_probe_refuses_another_zero_or_order(dt, monkeypatch):
    def select(z, x, out=None):
        r = np.where(x < z, z, x)
        return r if out is None else np.copyto(out, r)

    monkeypatch.setattr(relu_max, "_maximum", lambda z, x, out=None: np.fmax(x, z, out=out))
    assert not relu_max.maximum_is_select(dt)          # (+0.0 for -0.0)
    monkeypatch.setattr(relu_max, "_maximum", lambda z, x, out=None: np.maximum(x, z, out=out))
    assert not relu_max.maximum_is_select(dt)
    monkeypatch.setattr(relu_max, "_maximum", select)  # the select itself
    assert relu_max.maximum_is_select(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_probe_reaches_the_blocks(dt, monkeypatch):
    """A maximum that goes wrong only in a call with ``out`` (the blocks after the first of a
    long array) is refused too."""
    def wrong_in_blocks(z, x, out=None):
        if out is None:
            return np.where(x < z, z, x)
        np.copyto(out, np.fmax(x, z))
        return out

    monkeypatch.setattr(relu_max, "_maximum", wrong_in_blocks)
    assert not relu_max.maximum_is_select(dt)
