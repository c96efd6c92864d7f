"""torchnative-cpu's attention operator against a plain per-head reference: grouped heads as one
product per kv head, masks, causality aligned to the last key, rows that may see no key, and
non-finite scores as values without numpy's RuntimeWarning (upstream warns nothing)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from torchnative.kernels import get_local_kernel

REPO = Path(__file__).resolve().parents[2] / "src/torchnative/kernels/repos/torchnative-cpu"


@pytest.fixture(scope="module")
def ops():
    return get_local_kernel(REPO).layers._ops


def _reference(q, k, v, mask, scaling, causal):
    """One query of one head at a time, in float64: softmax over the keys it may see."""
    q, k, v = (t.to(torch.float64).numpy() for t in (q, k, v))
    b, h, lq, d = q.shape
    lk, rep = k.shape[2], h // k.shape[1]
    out = np.zeros((b, lq, h, d))
    for i in range(b):
        for j in range(h):
            for r in range(lq):
                ok = np.ones(lk, bool)
                if causal and lq > 1:
                    ok[r + lk - lq + 1:] = False
                if mask is not None:
                    m = mask.numpy()
                    ok &= np.broadcast_to(m, (b, h, lq, lk))[i, j, r]
                if not ok.any():
                    continue   # a row that may see no key: zeros
                s = np.array([q[i, j, r] @ k[i, j // rep, c] * scaling if ok[c] else -math.inf
                              for c in range(lk)])
                with np.errstate(all="ignore"):
                    top = s.max()
                    e = np.exp(s - top) if math.isfinite(top) else np.exp(s)
                    p = e / e.sum() if e.sum() > 0 else e
                    out[i, r, j] = p @ v[i, j // rep]
    return out


def _cases():
    g = torch.Generator().manual_seed(5)
    for b, h, hkv, lq, lk in ((1, 9, 3, 1, 7), (2, 6, 2, 3, 5), (1, 4, 4, 4, 4)):
        q = torch.randn(b, h, lq, 8, generator=g, dtype=torch.float64)
        k = torch.randn(b, hkv, lk, 8, generator=g, dtype=torch.float64)
        v = torch.randn(b, hkv, lk, 8, generator=g, dtype=torch.float64)
        pad = torch.ones(b, 1, 1, lk, dtype=torch.bool)
        pad[0, ..., :2] = False
        full = torch.rand(b, 1, lq, lk, generator=g) > 0.4
        full[0, 0, 0] = False          # a query that may see no key
        for mask in (None, pad, full):
            for causal in (True, False):
                yield q, k, v, mask, causal


@pytest.mark.filterwarnings("error")
def test_attention_as_the_per_head_reference(ops):
    n = 0
    for q, k, v, mask, causal in _cases():
        got = ops._attention(q, k, v, mask, 0.3, causal).numpy()
        want = _reference(q, k, v, mask, 0.3, causal)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        n += 1
    assert n == 18


@pytest.mark.filterwarnings("error")
def test_non_finite_scores_are_values_without_a_warning(ops):
    q = torch.randn(1, 9, 1, 8, dtype=torch.float32)
    k = torch.randn(1, 3, 6, 8, dtype=torch.float32)
    v = torch.randn(1, 3, 6, 8, dtype=torch.float32)
    q[0, 0, 0, 0] = float("inf")       # +inf and -inf scores in the first group
    k[0, 1, 2, 3] = float("nan")       # a NaN score in every query of the second group
    out = ops._attention(q, k, v, None, 0.125, True)
    want = _reference(q, k, v, None, 0.125, True)
    assert torch.equal(out.isnan(), torch.from_numpy(np.isnan(want)))
    assert out.isnan()[0, 0, 3:6].all() and not out.isnan()[0, 0, 6:].any()
    grad = torch.ones_like(out)
    for g in ops._attention_backward(grad, q, k, v, None, 0.125, True):
        assert g.dtype == torch.float32   # computed (NaN where the scores were), not warned


def test_control_a_wrong_scale_is_seen(ops, monkeypatch):
    # the comparison above can fail: scores not scaled
    orig = ops._probs
    monkeypatch.setattr(ops, "_probs", lambda q, k, s, c, m: orig(q, k, 1.0, c, m))
    with pytest.raises(AssertionError):
        test_attention_as_the_per_head_reference(ops)
