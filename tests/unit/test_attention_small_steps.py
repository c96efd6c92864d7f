"""The flash attention kernel's small-input steps give the general steps' bits.

For scores of up to a few thousand values (a decode step's), the kernel widens the shifted
scores in the subtraction itself, tests the few row maxima and sums for -inf and 0 in Python,
and writes the normalized rows straight into empty_like(query)'s layout. Here the kernel's
outputs (values, strides, logsumexp) are held byte for byte to the general sequence of numpy
steps written out below (the kernel's own before these shortcuts), on float32/float64/bfloat16,
GQA, masks, causal, fully masked rows, infinities and NaN, contiguous and transposed queries.
The causal second product is the kernel's blocked one on both sides: its sums drop exact zeros,
which BLAS need not keep to the bit (OpenBLAS's Haswell kernels do not), and
test_causal_product.py holds it to the whole product's error bound."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_attention as na
from torchnative.csrc.kernels.pointwise_math import exact

RNG = np.random.default_rng(0)


def _reference(q, k, v, mask, causal, scale, dt):
    """The kernel's steps, each on the whole array (float32/float64 compute)."""
    acc = np.float64 if dt is torch.float64 else np.float32
    b, h, lq, e = q.shape
    hk, s = k.shape[1], k.shape[2]
    g = h // hk
    qa = q.float().numpy() if dt is torch.bfloat16 else q.numpy()
    ka = k.float().numpy() if dt is torch.bfloat16 else k.numpy()
    va = v.float().numpy() if dt is torch.bfloat16 else v.numpy()
    sc = np.float64(scale if scale is not None else 1.0 / math.sqrt(e)).astype(acc)
    scores = np.matmul(qa.astype(acc).reshape(b, hk, g, lq, e),
                       np.swapaxes(ka.astype(acc)[:, :, None], -1, -2))
    if mask is not None:
        m = mask.numpy() if mask.dtype is not torch.bfloat16 else mask.float().numpy()
        if m.dtype == np.bool_:
            m = np.where(m, acc(0), acc(-np.inf))
        m4 = np.broadcast_to(m.reshape((1,) * (4 - m.ndim) + m.shape), (b, h, lq, s))
        scores = na.fma(scores, sc, m4.astype(acc).reshape(b, hk, g, lq, s))
    else:
        scores *= sc
    if causal:
        np.copyto(scores, -np.inf, where=na._above_diagonal(lq, s))
    row_max = np.maximum.reduce(scores, axis=-1, keepdims=True)
    if mask is None:  # upstream's unmasked block maximum passes over a NaN past the vectors
        na._skip_tail_nan_blocks(scores, row_max,
                                 na.cpu_capability.VEC_BYTES // np.dtype(acc).itemsize)
    np.copyto(row_max, 0, where=row_max == -np.inf)
    np.subtract(scores, row_max, out=scores)
    scores = exact(np.exp, scores)
    total = np.add.reduce(scores, axis=-1, keepdims=True)
    if dt is torch.bfloat16:
        scores = torch.from_numpy(scores).to(torch.bfloat16).float().numpy()
    dst = (na._causal_product if causal else np.matmul)(scores, va.astype(acc)[:, :, None])
    np.copyto(total, 1, where=total == 0)
    dst *= np.reciprocal(total)
    np.log(total, out=total)
    total += row_max
    return dst.reshape(b, h, lq, e), total.reshape(b, h, lq)


def _tensor(shape, dt, special):
    x = (RNG.standard_normal(shape) * 3).astype(np.float32)
    if special:
        f = x.reshape(-1)
        f[RNG.integers(f.size)] = np.inf
        f[RNG.integers(f.size)] = -np.inf
        f[RNG.integers(f.size)] = np.nan
    return torch.from_numpy(x).to(dt)


SHAPES = [(1, 9, 3, 1, 40, 64), (1, 9, 3, 1, 1, 64), (2, 4, 2, 3, 17, 8), (1, 2, 2, 5, 5, 16),
          (1, 6, 3, 1, 300, 64), (1, 2, 1, 70, 70, 8), (1, 2, 2, 40, 200, 4)]


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
def test_flash_kernel_matches_general_steps(dt, shape, mask):
    b, h, hk, lq, s, e = shape
    for special in (False, True):
        for transposed in (False, True):
            q = _tensor((b, lq, h, e), dt, special).transpose(1, 2) if transposed else \
                _tensor((b, h, lq, e), dt, special)
            k, v = _tensor((b, hk, s, e), dt, False), _tensor((b, hk, s, e), dt, False)
            m = None
            if mask == "bool":
                m = torch.from_numpy(RNG.random((lq, s)) < 0.6)
                m[-1] = False                      # a fully masked row
            elif mask == "float":
                m = _tensor((b, 1, lq, s), dt if dt is not torch.bfloat16 else torch.float32,
                            False)
                m[..., 0, :] = -math.inf
            scale = 0.3 if special else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
                    q, k, v, 0.0, mask == "causal", attn_mask=m, scale=scale)[:2]
                ref, ref_lse = _reference(q, k, v, m, mask == "causal", scale, dt)
            want = torch.from_numpy(np.ascontiguousarray(ref))
            if dt is torch.bfloat16:
                want = want.to(torch.bfloat16)
            assert out.stride() == torch.empty_like(q).stride()
            assert out.dtype == dt and lse.stride() == (lq * h, 1, h)
            got_b = out.float().numpy().tobytes() if dt is torch.bfloat16 else \
                np.ascontiguousarray(out.numpy()).tobytes()
            want_b = want.float().numpy().tobytes() if dt is torch.bfloat16 else \
                want.numpy().tobytes()
            assert got_b == want_b
            assert np.ascontiguousarray(lse.numpy()).tobytes() == \
                np.ascontiguousarray(ref_lse).tobytes()


def test_control_a_float32_exp_is_seen(monkeypatch):
    """The comparison sees the exp evaluated another way (numpy's own float32 exp)."""
    q, k, v = (_tensor((1, 9, 1, 64), torch.float32, False),
               _tensor((1, 3, 300, 64), torch.float32, False),
               _tensor((1, 3, 300, 64), torch.float32, False))
    out = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, False)[0]
    got = np.ascontiguousarray(out.numpy()).tobytes()
    assert _reference(q, k, v, None, False, None, torch.float32)[0].tobytes() == got
    monkeypatch.setitem(globals(), "exact", lambda fn, x: fn(x))
    assert _reference(q, k, v, None, False, None, torch.float32)[0].tobytes() != got


@pytest.mark.parametrize("lq", [1, 40, 300])
@pytest.mark.parametrize("mask", [None, "causal", "float"])
def test_non_finite_inputs_raise_no_float_warning(lq, mask):
    """inf - inf in a row's shift is a NaN value, as in upstream's C++ kernel, never a numpy
    RuntimeWarning (upstream prints nothing)."""
    q = torch.randn(1, 4, lq, 16)
    k, v = torch.randn(1, 2, 300, 16), torch.randn(1, 2, 300, 16)
    k = k.repeat_interleave(2, 1)
    v = v.repeat_interleave(2, 1)
    k[0, 1, 0, 3] = math.inf      # the first key: every row sees it
    q[0, 2, 0, 5] = math.nan
    m = torch.zeros(lq, 300) if mask == "float" else None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q, k, v, 0.0, mask == "causal", attn_mask=m)[:2]
    assert out[0, 2, 0].isnan().all()          # the NaN query's row
    assert not out[0, 0].isnan().any()         # a head without either
