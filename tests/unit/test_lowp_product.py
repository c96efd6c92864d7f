"""The blocked 16-bit float product (csrc/kernels/lowp_product.py): a weight widened a block of
rows at a time gives the whole-matrix float32 product bit for bit; a control blocked by 3 rows
(OpenBLAS's gemv sums a block's last rows in another order) is caught."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.csrc.kernels import lowp_product as lp

ml_dtypes = pytest.importorskip("ml_dtypes")

SHAPES = [(1536, 576), (576, 1536), (49152, 576), (1000, 333), (77, 5000), (3000, 7)]


def _operands(n, k, m, dtype):
    rng = np.random.default_rng(n * 7 + k)
    w = rng.standard_normal((n, k), dtype=np.float32).astype(dtype)
    x = rng.standard_normal((m, k), dtype=np.float32)
    return x, w


def _whole(x, w):
    wf = w.astype(np.float32)
    return np.dot(x[0], wf.T)[None, :] if x.shape[0] == 1 else np.matmul(x, wf.T)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("m", [1, 2, 8])
@pytest.mark.parametrize("n,k", SHAPES)
def test_blocked_equals_the_whole_product(n, k, m, dtype):
    x, w = _operands(n, k, m, dtype)
    got = lp.times_transposed(x, w)
    assert got.dtype == np.float32 and got.shape == (m, n)
    assert np.array_equal(got, _whole(x, w))


def test_blocks_of_three_rows_are_caught(monkeypatch):
    monkeypatch.setattr(lp, "_ROWS", 3)
    monkeypatch.setattr(lp, "_BLOCK", 3 * 576)
    x, w = _operands(1536, 576, 1, ml_dtypes.bfloat16)
    assert not np.array_equal(lp.times_transposed(x, w), _whole(x, w))
