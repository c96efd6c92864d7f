"""The flash kernel's causal second product by blocks of query rows (``_causal_product``).

A block of rows multiplies its visible keys only. Its sums are the whole product's terms less
exact zeros, so they agree with a float64 reference as closely as the whole product does (not
always to the bit: BLAS may split a long sum differently); short prompts take the whole product
itself; a value that is inf or NaN takes the whole product, so the rows that multiply it by a
masked 0 are NaN as upstream's are (control: the blocks alone would not be)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_attention as na


def _probs(heads, lq, s, dt, seed):
    rng = np.random.default_rng(seed)
    p = rng.random((heads, lq, s)).astype(dt)
    p[:, np.triu(np.ones((lq, s), bool), 1)] = 0
    v = rng.standard_normal((heads, s, 16)).astype(dt)
    return p, v


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("lq,s", [(64, 64), (100, 100), (128, 128), (130, 129), (96, 200),
                                  (300, 300), (512, 512)])
def test_blocks_agree_as_the_whole_product(dt, lq, s):
    p, v = _probs(3, lq, s, dt, lq + s)
    got, whole = na._causal_product(p, v), np.matmul(p, v)
    ref = np.matmul(p.astype(np.float64), v.astype(np.float64))
    assert got.shape == whole.shape and got.dtype == whole.dtype and got.flags.c_contiguous
    # the derived bound of a sum of s products, |err| <= s eps (|p| @ |v|): the whole product
    # meets it, and the blocks must too
    bound = s * np.finfo(dt).eps * (np.abs(p).astype(np.float64) @ np.abs(v.astype(np.float64)))
    assert (np.abs(whole - ref) <= bound).all()
    assert (np.abs(got - ref) <= bound).all()


def test_short_prompts_take_the_whole_product():
    p, v = _probs(9, 2 * na._PRODUCT_ROWS - 1, 70, np.float32, 1)
    assert na._causal_product(p, v).tobytes() == np.matmul(p, v).tobytes()


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_value_takes_the_whole_product(bad):
    p, v = _probs(2, 128, 128, np.float32, 2)
    v[1, 127, 0] = bad                                # the last key: masked for rows 0..126
    with np.errstate(all="ignore"):
        got, whole = na._causal_product(p, v), np.matmul(p, v)
        blocks = np.concatenate([np.matmul(p[:, r:r + 32, :r + 32], v[:, :r + 32])
                                 for r in range(0, 128, 32)], axis=1)
    assert np.isnan(whole[1, :127, 0]).all()
    assert np.array_equal(got, whole, equal_nan=True)
    assert not np.isnan(blocks[1, :96, 0]).any()     # control: the blocks alone differ


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_flash_kernel_blocks_agree_with_the_whole_product(dtype, monkeypatch):
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    torch.manual_seed(0)
    q = torch.randn(1, 300, 4, 16).to(dtype).transpose(1, 2)
    k, v = torch.randn(1, 4, 300, 16).to(dtype), torch.randn(1, 4, 300, 16).to(dtype)
    with torch.inference_mode():
        got = flash(q, k, v, is_causal=True)
        monkeypatch.setattr(na, "_PRODUCT_ROWS", 1 << 20)   # every shape: the whole product
        want = flash(q, k, v, is_causal=True)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.stride() == b.stride()
        tol = {torch.float32: 2e-6, torch.float64: 1e-14, torch.bfloat16: 1e-2}[dtype]
        torch.testing.assert_close(a.float(), b.float(), rtol=tol, atol=tol)
