"""A product of a few rows times a row-major weight's transpose (kernels/linalg.py ``_gemm``) is
taken turned round, ``(w @ a.T).T`` copied to C order: OpenBLAS packs the whole weight for a gemm
of so few rows. Each element stays one dot over k (within the float64 reference's bound), the
result is C-contiguous, every path to the product gives the same bits (the fast lane, the
composite autograd records, ``mm``, ``@``), and only the shapes of the rule are turned."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from torchnative.csrc.kernels import linalg


def _operands(m, k, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(dtype),
            rng.standard_normal((n, k)).astype(dtype))


def _within_dots_bound(out, a, w) -> bool:
    """|out - a @ w.T| <= k eps (|a| @ |w.T|), the float64 reference's bound for dots over k."""
    a64, w64 = a.astype(np.float64), w.astype(np.float64)
    bound = a.shape[1] * np.finfo(a.dtype).eps * (np.abs(a64) @ np.abs(w64.T))
    return bool((np.abs(out - a64 @ w64.T) <= bound).all())


@pytest.fixture
def turned(monkeypatch):
    """The shapes np.matmul is called with from linalg: (a.shape, b.shape) per call."""
    seen = []

    def matmul(a, b, *args, **kw):
        seen.append((a.shape, b.shape))
        return np.matmul(a, b, *args, **kw)

    monkeypatch.setattr(linalg, "np", types.SimpleNamespace(**{**vars(np), "matmul": matmul}))
    return seen


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", [(2, 576, 576), (3, 576, 1536), (8, 1536, 576), (16, 64, 4096),
                                   (5, 7, 3)])
def test_turned_product_is_dots_over_k(turned, dtype, m, k, n):
    a, w = _operands(m, k, n, dtype)
    out = linalg._gemm(a, w.T)
    assert turned == [((n, k), (k, m))]
    assert out.shape == (m, n) and out.dtype == dtype and out.flags.c_contiguous
    assert _within_dots_bound(out, a, w)


@pytest.mark.parametrize("m,k,n,layout", [(17, 64, 64, "weight"), (16, 64, 4097, "weight"),
                                          (8, 64, 64, "row-major b")])
def test_other_shapes_keep_the_plain_product(turned, m, k, n, layout):
    a, w = _operands(m, k, n, np.float32)
    b = w.T if layout == "weight" else np.ascontiguousarray(w.T)
    out = linalg._gemm(a, b)
    assert turned == [((m, k), (k, n))]
    assert np.array_equal(out, np.matmul(a, b))


def test_control_a_wrong_dot_is_caught():
    """The bound rejects a product accumulated in float16."""
    a, w = _operands(8, 576, 576, np.float32, 1)
    assert _within_dots_bound(linalg._gemm(a, w.T), a, w)
    assert not _within_dots_bound(a.astype(np.float16) @ w.T.astype(np.float16), a, w)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("lead", [(4,), (1, 7), (2, 8)])
def test_every_path_to_the_product_agrees(bias, lead):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(*lead, 576, generator=g)
    w = torch.randn(1536, 576, generator=g)
    b = torch.randn(1536, generator=g) if bias else None
    rows = x.numel() // 576
    with torch.no_grad():
        fast = F.linear(x, w, b)
    recorded = F.linear(x.clone().requires_grad_(), w, b)  # the composite: addmm / matmul
    assert recorded.grad_fn is not None and fast.is_contiguous()
    assert torch.equal(fast, recorded.detach())
    plain = x.reshape(rows, 576) @ w.t()
    if b is not None:
        plain = plain + b
    assert torch.equal(fast.reshape(rows, 1536), plain)
    assert torch.equal(torch.mm(x.reshape(rows, 576), w.t()), x.reshape(rows, 576) @ w.t())
