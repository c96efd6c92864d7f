"""A prefill's many-row lanes give the general steps' bits.

``reduction_rows.row_plan`` of many rows (a prefill's RMSNorm ``mean(-1)``: 128 or 512 rows)
adds whole slices instead of numpy's reduce along a middle axis and its accumulate; it is held
to ``cascade_rows.row_sums`` and ``mean`` to the general path (asked with an explicit dtype,
which no plan takes). The flash kernel's causal mask by blocks of rows (``_mask_causal``) is
held to the one boolean-masked copy, alone and through the kernel. Special values throughout
(NaN payloads, infinities, signed zeros, subnormals); the controls show the comparisons see
another order of the sum and a mask one diagonal off."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_attention as na
from torchnative.csrc.kernels import reduction_rows as rr
from torchnative.csrc.kernels.support.cascade_rows import row_sums

SPECIAL = [0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38, 1.0, -1.0]


def _values(shape, dt, seed, special=0.0):
    rng = np.random.default_rng(seed)
    x = np.asarray(rng.standard_normal(shape) * 10.0 ** rng.integers(-20, 20, shape), dt)
    if special:
        mask = rng.random(shape) < special
        x[mask] = rng.choice(np.array(SPECIAL, dt), int(mask.sum()))
        flat = x.reshape(-1)
        bits = flat.view(np.uint32 if dt == np.float32 else np.uint64)
        bits[rng.integers(flat.size)] = 0x7FC01234 if dt == np.float32 else 0x7FF8000000001234
    return x


LENGTHS = [8, 9, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 511, 512, 513, 576,
           1000, 1536, 4095, 4096, 4097, 8200]


@pytest.mark.parametrize("dt,vs", [(np.float32, 8), (np.float64, 4)])
@pytest.mark.parametrize("R", [rr.MANY_ROWS - 1, rr.MANY_ROWS, 33, 128, 512])
def test_many_rows_plan_is_row_sums(dt, vs, R):
    for i, n in enumerate(LENGTHS):
        if R * n > 2_000_000:
            continue
        for special in (0.0, 0.02) if i % 2 else (0.02,):
            X = _values((R, n), dt, n * 7 + R, special)
            with np.errstate(all="ignore"):
                a, b = row_sums(X, vs), rr.row_plan(R, n, vs)(X)
            assert a.shape == b.shape and a.tobytes() == b.tobytes(), (R, n, special)


def test_many_rows_control_sees_another_order():
    X = _values((64, 576), np.float32, 3)
    got = rr.row_plan(64, 576, 8)(X).tobytes()
    assert got != np.add.reduce(X, axis=1).tobytes() or \
        got != rr.row_plan(64, 576, 8)(X[:, ::-1].copy()).tobytes()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(1, 128, 576), (1, 512, 576), (2, 40, 100), (33, 7)])
def test_prefill_mean_is_general_mean(dtype, shape):
    np_dt = np.float32 if dtype is torch.float32 else np.float64
    for seed, special in ((0, 0.0), (1, 0.05)):
        x = torch.from_numpy(_values(shape, np_dt, seed, special))
        for keepdim in (True, False):
            for _ in range(2):   # the plan is made on the first call, taken on the second
                with np.errstate(all="ignore"):
                    fast, general = x.mean(-1, keepdim=keepdim), x.mean(-1, keepdim, dtype=dtype)
                assert fast.stride() == general.stride()
                assert fast.numpy().tobytes() == general.numpy().tobytes()


MASK_SHAPES = [(9, 128, 128), (9, 512, 512), (2, 64, 64), (3, 65, 65), (1, 200, 37),
               (1, 37, 200), (4, 100, 300), (2, 300, 100), (1, 63, 63), (5, 1, 9)]


@pytest.mark.parametrize("heads,lq,s", MASK_SHAPES)
def test_mask_by_blocks_is_the_masked_copy(heads, lq, s):
    x = _values((heads, lq, s), np.float32, lq * 3 + s, 0.05)
    want = x.copy()
    np.copyto(want, -np.inf, where=na._above_diagonal(lq, s))
    got = x.copy()
    na._mask_causal(got)
    assert got.tobytes() == want.tobytes()
    # control: a mask one diagonal off is seen
    off = x.copy()
    np.copyto(off, -np.inf, where=np.triu(np.ones((lq, s), bool), 2))
    assert lq < 2 or s < 2 or off.tobytes() != got.tobytes()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("lq,s", [(128, 128), (300, 300), (100, 170), (170, 100)])
def test_flash_kernel_with_mask_blocks_is_whole_mask(dtype, lq, s, monkeypatch):
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    torch.manual_seed(lq + s)
    q = (torch.randn(1, lq, 6, 16) * 3).to(dtype).transpose(1, 2)
    k, v = (torch.randn(1, 3, s, 16) * 3).to(dtype), torch.randn(1, 3, s, 16).to(dtype)
    q[0, 1, lq // 2, 3] = float("inf")
    k[0, 0, s // 3, 1] = float("-inf")
    k, v = k.repeat_interleave(2, 1), v.repeat_interleave(2, 1)
    with torch.inference_mode(), np.errstate(all="ignore"):
        got = flash(q, k, v, is_causal=True)[:2]
        monkeypatch.setattr(na, "_MASK_ROWS", 1 << 20)   # every shape takes the masked copy
        want = flash(q, k, v, is_causal=True)[:2]
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.stride() == b.stride()
        assert a.float().numpy().tobytes() == b.float().numpy().tobytes()
