"""A decode step's matrix-vector product (kernels/support/gemv.py): a weight with contiguous rows
is read as one dot per row on AMD CPUs with AVX-512 and through BLAS gemv elsewhere, on one
thread whatever the budget, and every path to that product (the inference fast lane of
``linear``, the composite autograd records, ``mm``, ``matmul``, ``mv``, ``addmv``) gives the same
bits, as upstream's do."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.csrc.kernels.support import blas_threads as bt
from torchnative.csrc.kernels.support import gemv


needs_vecdot = pytest.mark.skipif(gemv._VECDOT is None,
                                  reason="numpy < 2.0 has no vecdot: BLAS gemv throughout")
RULES = [pytest.param(True, id="dots", marks=needs_vecdot), pytest.param(False, id="gemv")]


@pytest.mark.parametrize("vendor,flags,dots", [
    ("AuthenticAMD", {"avx2", "fma", "avx512f"}, True),    # the EPYC (Zen 4) measured
    ("AuthenticAMD", {"avx2", "fma"}, False),              # the EPYC (Zen) measured
    ("GenuineIntel", {"avx2", "fma", "avx512f"}, False),   # the Xeon measured
    ("", frozenset(), False),                              # no cpuinfo (another architecture)
])
def test_the_cpus_rule(vendor, flags, dots):
    assert gemv.dots_stream_faster(vendor, frozenset(flags)) is dots


def _exact(m, v):
    return m.astype(np.float64) @ v.astype(np.float64)


@pytest.mark.parametrize("dots", RULES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1536, 576), (49152, 64), (7, 3), (1, 1)])
def test_rows_on_one_thread(applied, monkeypatch, dots, dtype, shape):
    monkeypatch.setattr(gemv, "ROWS_AS_DOTS", dots)
    rng = np.random.default_rng(0)
    m = rng.standard_normal(shape).astype(dtype)
    v = rng.standard_normal(shape[1]).astype(dtype)
    out = gemv.matrix_vector(m, v)
    assert applied == [1]  # even the 49152-row product: no thread splits its sums
    if dots:   # each output one dot of one row
        want = np.array([np.dot(m[i], v) for i in range(shape[0])], dtype)
    else:      # BLAS gemv, as one thread runs it
        want = np.dot(m, v)
    assert out.dtype == dtype and np.array_equal(out, want)
    assert np.array_equal(gemv.vector_matrix(v, m.T), out)


def test_the_rules_differ_in_the_last_bits(monkeypatch):
    """Control: equal bits above could not tell which call ran if both rules gave the same."""
    rng = np.random.default_rng(5)
    m = rng.standard_normal((1536, 576)).astype(np.float32)
    v = rng.standard_normal(576).astype(np.float32)
    if gemv._VECDOT is None:
        pytest.skip("numpy < 2.0 has no vecdot")
    got = {}
    for dots in (True, False):
        monkeypatch.setattr(gemv, "ROWS_AS_DOTS", dots)
        got[dots] = gemv.matrix_vector(m, v)
    assert not np.array_equal(got[True], got[False])


@pytest.mark.parametrize("dots", RULES)
def test_bits_do_not_depend_on_the_budget(monkeypatch, dots):
    monkeypatch.setattr(gemv, "ROWS_AS_DOTS", dots)
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


@needs_vecdot
def test_error_is_that_of_dot_products(applied, monkeypatch):
    """The per-row dots are no worse than BLAS gemv over the same rows (control: a float16
    accumulation is caught). Under the gemv rule the product is gemv itself: nothing to hold."""
    monkeypatch.setattr(gemv, "ROWS_AS_DOTS", True)
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

    monkeypatch.setattr(gemv, "ROWS_AS_DOTS", True)
    monkeypatch.setattr(gemv, "_VECDOT", refused)  # equal bits alone could not tell
    assert np.array_equal(gemv.matrix_vector(m, v), np.dot(m, v))
    assert np.array_equal(gemv.vector_matrix(v, m.T), np.dot(v, m.T))


@pytest.mark.parametrize("dots", RULES)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("lead", [(1,), (1, 1)])
def test_every_path_to_the_product_agrees(monkeypatch, dots, bias, lead):
    monkeypatch.setattr(gemv, "ROWS_AS_DOTS", dots)
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
