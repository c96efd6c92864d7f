"""The chunked and causal lanes of float32 ``exact`` evaluation give the whole-array path's bits.

``pointwise_math._exact_chunks`` evaluates a large float32 array a chunk at a time, ``silu``
does its steps a chunk at a time, and the flash attention kernel's ``_causal_exp`` evaluates
only the keys a block of causal query rows can see (the rest are -inf, whose exp is 0). Each is
held here to the plain whole-array formula, bit for bit, on sizes across the chunk boundaries
and with special values; the controls show the comparison sees a change of evaluation (numpy's
own float32 exp) and a causal lane that skipped keys that are not masked."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_attention as na
from torchnative.csrc.kernels.pointwise_math import CHUNK, _REAL_UFUNCS, _exact_chunks, exact
from torchnative.csrc.kernels.pointwise_misc import _silu

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.72, -88.72, 89.0, -104.0, 1e-45,
                     -1e-45, 3.4e38, -3.4e38, 710.0, -745.2], np.float32)
SIZES = [CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 17, 200_000]


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _inputs(n: int, scale: float) -> np.ndarray:
    x = (np.random.default_rng(n).standard_normal(n) * scale).astype(np.float32)
    x[:SPECIALS.size] = SPECIALS
    return x


@pytest.mark.parametrize("n", SIZES)
def test_chunked_exact_matches_whole_array(n):
    with np.errstate(all="ignore"):
        for scale in (1.0, 30.0):
            x = _inputs(n, scale)
            for fn in _REAL_UFUNCS:
                whole = fn(x.astype(np.float64)).astype(np.float32)
                assert _bits(_exact_chunks(fn, x)) == _bits(whole), (fn, n)
                assert _bits(exact(fn, x.reshape(-1, 1))) == _bits(whole.reshape(-1, 1))
        # control: numpy's own float32 exp differs from the rounded float64 one somewhere
        x = _inputs(n, 30.0)
        assert _bits(np.exp(x)) != _bits(_exact_chunks(np.exp, x))


@pytest.mark.parametrize("n", [1, 7, 1536] + SIZES)
def test_silu_steps_match_the_formula(n):
    with np.errstate(all="ignore"):
        x = _inputs(max(n, SPECIALS.size), 10.0)[:n]
        want = x / (1 + np.exp((-x).astype(np.float64)).astype(np.float32))
        assert _bits(_silu(x)) == _bits(want)
        m = x[: n - n % 4].reshape(-1, 4)
        assert _bits(_silu(m.T)) == _bits(m.T / (1 + exact(np.exp, -m.T)))


def _shifted_causal_scores(heads, lq, s, dt):
    """Scores as the flash kernel has them before its exp: masked above the diagonal with
    -inf, each row shifted by its maximum."""
    rng = np.random.default_rng(lq * 7 + s)
    x = (rng.standard_normal((heads, lq, s)) * 4).astype(dt)
    x[np.broadcast_to(np.triu(np.ones((lq, s), bool), 1), x.shape)] = -np.inf
    m = x.max(-1, keepdims=True)
    m[m == -np.inf] = 0
    return x - m


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("heads,lq,s", [(9, 128, 128), (9, 512, 512), (2, 70, 33),
                                        (3, 33, 70), (1, 1000, 1000), (40, 5, 9)])
def test_causal_exp_matches_whole_array(dt, heads, lq, s, monkeypatch):
    x = _shifted_causal_scores(heads, lq, s, dt)
    with np.errstate(all="ignore"):
        want = exact(np.exp, x)
        for block in (na._EXP_BLOCK, heads * s, 3 * heads * s + 1):   # rows per block: 1, 3
            monkeypatch.setattr(na, "_EXP_BLOCK", block)
            got = x.copy()
            na._causal_exp(got)
            assert _bits(got) == _bits(want), block
        # control: a key that is not masked must be evaluated -- one visible past row 0's
        # block is caught
        leak = x.copy()
        leak[:, 0, -1] = 0.0
        want = exact(np.exp, leak)
        monkeypatch.setattr(na, "_EXP_BLOCK", heads * s)
        na._causal_exp(leak)
    assert _bits(leak) != _bits(want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_flash_kernel_causal_lane_equals_whole_exp(dtype, monkeypatch):
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    torch.manual_seed(3)
    q = (torch.randn(1, 200, 6, 16) * 3).to(dtype).transpose(1, 2)
    k, v = (torch.randn(1, 6, 200, 16) * 3).to(dtype), torch.randn(1, 6, 200, 16).to(dtype)
    with torch.inference_mode():
        lane = flash(q, k, v, is_causal=True)[:2]

        def whole(scores):
            scores[...] = exact(np.exp, scores)

        monkeypatch.setattr(na, "_causal_exp", whole)
        plain = flash(q, k, v, is_causal=True)[:2]
    for a, b in zip(lane, plain):
        assert a.dtype == b.dtype and a.stride() == b.stride()
        assert _bits(a.float().numpy()) == _bits(b.float().numpy())
