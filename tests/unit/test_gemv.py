"""A decode step's matrix-vector product (kernels/support/gemv.py): a weight with contiguous rows
is read as one dot per row, whatever the thread budget, and every path to that product (the
inference fast lane of ``linear``, the composite autograd records, ``mm``, ``matmul``, ``mv``,
``addmv``) gives the same bits, as upstream's do."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.csrc.kernels.support import blas_threads as bt
from torchnative.csrc.kernels.support import gemv


needs_vecdot = pytest.mark.skipif(gemv._VECDOT is None,
                                  reason="numpy < 2.0 has no vecdot: BLAS gemv throughout")


def _exact(m, v):
    return m.astype(np.float64) @ v.astype(np.float64)


@needs_vecdot
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1536, 576), (49152, 64), (7, 3), (1, 1)])
def test_rows_are_dotted_one_by_one_on_one_thread(applied, dtype, shape):
    rng = np.random.default_rng(0)
    m = rng.standard_normal(shape).astype(dtype)
    v = rng.standard_normal(shape[1]).astype(dtype)
    out = gemv.matrix_vector(m, v)
    assert applied == [1]  # even the 49152-row product: per-row sums a thread would not split
    rows = np.array([np.dot(m[i], v) for i in range(shape[0])], dtype)
    assert out.dtype == dtype and np.array_equal(out, rows)  # each output one dot of one row
    assert np.array_equal(gemv.vector_matrix(v, m.T), out)


@needs_vecdot
def test_bits_do_not_depend_on_the_budget():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((49152, 576)).astype(np.float32)  # above SMALL_FLOPS
    v = rng.standard_normal(576).astype(np.float32)
    saved = dict(bt._state)
    try:
        bt.set_budget(1)
        one = gemv.matrix_vector(m, v)
        bt.set_budget(2)
        two = gemv.matrix_vector(m, v)
    finally:
        bt.set_budget(saved["budget"] or 1)
    assert np.array_equal(one, two)


def test_error_is_that_of_dot_products(applied):
    """No worse than BLAS gemv over the same rows (control: a float16 accumulation is caught)."""
    rng = np.random.default_rng(2)
    m = rng.standard_normal((2048, 1536)).astype(np.float32)
    v = rng.standard_normal(1536).astype(np.float32)
    ref = _exact(m, v)
    err = np.abs(gemv.matrix_vector(m, v) - ref).max()
    blas = np.abs(np.dot(v, m.T) - ref).max()
    assert err <= 2 * blas
    coarse = np.abs((m.astype(np.float16) @ v.astype(np.float16)).astype(np.float64) - ref).max()
    assert coarse > 2 * blas


@pytest.mark.parametrize("case", ["columns", "strided rows", "integers", "empty"])
def test_other_layouts_keep_blas(applied, case, monkeypatch):
    rng = np.random.default_rng(3)
    m = rng.standard_normal((64, 32)).astype(np.float32)
    v = rng.standard_normal(32).astype(np.float32)
    if case == "columns":
        m = np.asfortranarray(m)
    elif case == "strided rows":
        m = rng.standard_normal((64, 64)).astype(np.float32)[:, ::2]
    elif case == "integers":
        m, v = (m * 10).astype(np.int64), (v * 10).astype(np.int64)
    else:
        m, v = m[:, :0], v[:0]
    def refused(*_):
        raise AssertionError("took the per-row dots")

    monkeypatch.setattr(gemv, "_VECDOT", refused)  # equal bits alone could not tell
    assert np.array_equal(gemv.matrix_vector(m, v), np.dot(m, v))
    assert np.array_equal(gemv.vector_matrix(v, m.T), np.dot(v, m.T))


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("lead", [(1,), (1, 1)])
def test_every_path_to_the_product_agrees(bias, lead):
    import torch
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(4)
    x = torch.randn(*lead, 576, generator=g)
    w = torch.randn(1536, 576, generator=g)
    b = torch.randn(1536, generator=g) if bias else None
    with torch.no_grad():
        fast = F.linear(x, w, b)
    recorded = F.linear(x.clone().requires_grad_(), w, b)  # the composite, through addmm/matmul
    assert recorded.grad_fn is not None
    assert torch.equal(fast, recorded.detach())
    plain = x.reshape(1, 576) @ w.t()
    if b is not None:
        plain = plain + b
    assert torch.equal(fast.reshape(1, 1536), plain)
    assert torch.equal(torch.mm(x.reshape(1, 576), w.t()), (x.reshape(1, 576) @ w.t()))
    # the matrix-vector spellings of the same product (upstream's agree bit for bit too)
    v = x.reshape(576)
    assert torch.equal(torch.mv(w, v), (x.reshape(1, 576) @ w.t()).reshape(1536))
    assert torch.equal(w @ v, torch.mv(w, v))
    if b is not None:
        assert torch.equal(torch.addmv(b, w, v), fast.reshape(1536))
