"""The flash kernel's causal first product by blocks of query rows (``_causal_scores``).

A block of rows multiplies only the keys before its last row's diagonal; the scores it leaves
unwritten all lie above the diagonal, where ``_mask_causal`` writes -inf. Each written score is
one dot over the head dimension, as in the whole product, within the whole product's error bound
of a float64 reference (BLAS may round a block's differently); short prompts take the whole
product itself; through the kernel, infinities and NaN in the queries and keys give the whole
product's outputs (control: a block that skips its diagonal square is caught)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_attention as na


def _operands(heads, lq, s, e, dt, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, heads, 3, lq, e)).astype(dt)
    k = rng.standard_normal((1, heads, 1, s, e)).astype(dt)
    return q, np.swapaxes(k, -1, -2)


def _masked(scores):
    out = scores.copy()
    na._mask_causal(out)
    return out


def _within_bound(got, q, kt, sc, dt) -> bool:
    """Visible scores within the derived bound of a dot of e products, e eps (|q| @ |k|) |sc|;
    the masked ones -inf."""
    lq, s = got.shape[-2:]
    ref = np.matmul(q.astype(np.float64), kt.astype(np.float64)) * float(sc)
    e = q.shape[-1]
    bound = e * np.finfo(dt).eps * np.matmul(np.abs(q).astype(np.float64),
                                             np.abs(kt).astype(np.float64)) * abs(float(sc))
    above = na._above_diagonal(lq, s)
    visible = ~above
    with np.errstate(invalid="ignore"):
        ok = (np.abs(got - ref) <= bound)[..., visible].all()
    return bool(ok and (got[..., above] == -np.inf).all())


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("lq,s", [(128, 128), (130, 129), (200, 300), (300, 200), (512, 512)])
def test_blocks_agree_as_the_whole_product(dt, lq, s):
    q, kt = _operands(3, lq, s, 64, dt, lq + s)
    sc = dt(0.125)
    got = _masked(na._causal_scores(q, kt, sc))
    whole = np.matmul(q, kt)
    whole *= sc
    whole = _masked(whole)
    assert got.shape == whole.shape and got.dtype == whole.dtype and got.flags.c_contiguous
    assert _within_bound(whole, q, kt, sc, dt)
    assert _within_bound(got, q, kt, sc, dt)
    # control: blocks that leave their diagonal square unwritten (zeros there) are caught
    broken = np.zeros_like(got)
    rows = na._SCORE_ROWS
    for r0 in range(0, lq, rows):
        c = min(s, r0)
        np.matmul(q[..., r0:r0 + rows, :], kt[..., :c], out=broken[..., r0:r0 + rows, :c])
    broken *= sc
    assert not _within_bound(_masked(broken), q, kt, sc, dt)


def test_short_prompts_take_the_whole_product():
    q, kt = _operands(3, 2 * na._SCORE_ROWS - 1, 70, 16, np.float32, 1)
    sc = np.float32(0.3)
    whole = np.matmul(q, kt)
    whole *= sc
    assert na._causal_scores(q, kt, sc).tobytes() == whole.tobytes()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("special", [False, True])
def test_flash_kernel_blocks_agree_with_the_whole_product(dtype, special, monkeypatch):
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    torch.manual_seed(0)
    q = torch.randn(1, 300, 6, 16).to(dtype).transpose(1, 2)
    k, v = torch.randn(1, 6, 300, 16).to(dtype), torch.randn(1, 6, 300, 16).to(dtype)
    if special:  # each in a score some rows mask and others see
        q[0, 1, 150, 3] = float("inf")
        k[0, 2, 200, 1] = float("nan")
        k[0, 4, 10, 0] = float("-inf")
    with torch.inference_mode(), np.errstate(all="ignore"):
        got = flash(q, k, v, is_causal=True)
        monkeypatch.setattr(na, "_SCORE_ROWS", 1 << 20)   # every shape: the whole product
        want = flash(q, k, v, is_causal=True)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.stride() == b.stride()
        assert torch.equal(a.isnan(), b.isnan())
        tol = {torch.float32: 2e-6, torch.float64: 1e-14, torch.bfloat16: 1e-2}[dtype]
        torch.testing.assert_close(a.float(), b.float(), rtol=tol, atol=tol, equal_nan=True)
