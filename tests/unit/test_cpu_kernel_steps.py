"""torchnative-cpu's rotary embedding and float32 SiLU take the unfused layers' own float steps:
rotary's products and sum are each one correctly rounded operation in the inputs' dtype, so its
bits are the unfused layer's; SiLU's are wherever the unfused layer's exp rounds as a float64
exp rounded once does (our torch's does)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from torchnative.kernels import get_local_kernel

REPO = Path(__file__).resolve().parents[2] / "src/torchnative/kernels/repos/torchnative-cpu"


@pytest.fixture(scope="module")
def ops():
    return get_local_kernel(REPO).layers._ops


def _bits(t):
    return t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def _unfused_rotary(q, k, cos, sin, dim):
    cos, sin = cos.unsqueeze(dim), sin.unsqueeze(dim)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


def _rotary_cases(dtype):
    g = torch.Generator().manual_seed(5)

    def r(*s):
        return torch.randn(*s, generator=g, dtype=dtype) * 3

    for b, hq, hk, length, d in ((1, 9, 3, 1, 64), (1, 3, 1, 8, 16), (2, 4, 2, 5, 7), (1, 2, 1, 3, 1)):
        q = r(b, length, hq, d).transpose(1, 2)          # a projection's view, as transformers'
        k = r(b, hk, length, d)
        cos, sin = r(b, length, d), r(b, length, d)
        yield q, k, cos, sin, 1
    q = r(1, 4, 2, 16)
    q[0, 0, 0, :4] = torch.tensor([float("nan"), float("inf"), -0.0, -float("inf")], dtype=dtype)
    sin = r(1, 4, 16)
    sin[0, 1, 3] = float("nan")
    yield q, r(1, 4, 1, 16), r(1, 4, 16), sin, 2       # (batch, length, heads, dim) layout
    yield r(1, 2, 3, 8), r(1, 1, 3, 8), r(3, 8), r(3, 8), 0   # cos/sin broadcast over the batch


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rotary_bits_are_the_unfused_layers(ops, dtype):
    for q, k, cos, sin, dim in _rotary_cases(dtype):
        got = ops._rotary(q, k, cos, sin, dim)
        want = _unfused_rotary(q, k, cos, sin, dim)
        for o, w in zip(got, want):
            assert o.shape == w.shape and o.dtype == w.dtype and o.is_contiguous()
            assert torch.equal(_bits(o), _bits(w)), (tuple(q.shape), dim)


def test_control_rotary_rounded_once_is_seen(ops):
    # the test above can fail: the float64 sum rounded once (the kernel before) differs
    seen = False
    for q, k, cos, sin, dim in _rotary_cases(torch.float32):
        c, s = cos.unsqueeze(dim).double(), sin.unsqueeze(dim).double()
        once = (q.double() * c + _rotate_half(q.double()) * s).float()
        seen |= not torch.equal(_bits(once), _bits(_unfused_rotary(q, k, cos, sin, dim)[0]))
    assert seen


def test_rotary_mixed_dtypes_keep_the_float64_path(ops):
    g = torch.Generator().manual_seed(6)
    q = torch.randn(1, 2, 3, 8, generator=g).to(torch.bfloat16)
    cos, sin = torch.randn(1, 3, 8, generator=g), torch.randn(1, 3, 8, generator=g)
    out, _ = ops._rotary(q, q, cos, sin, 1)
    want = (q.double() * cos[:, None].double() + _rotate_half(q.double()) * sin[:, None].double())
    assert out.dtype == torch.float32 and torch.equal(out, want.float())


def _silu_inputs():
    g = torch.Generator().manual_seed(7)
    for shape in ((1, 1, 96), (1, 1, 1536), (1, 40, 1536), (3, 0, 4), (7,)):
        for scale in (1.0, 30.0, 120.0):
            x = torch.randn(*shape, generator=g) * scale
            if x.numel() >= 4:
                x.view(-1)[:4] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0])
            yield x
            if x.dim() > 1:
                yield x.transpose(0, -1)


@pytest.mark.filterwarnings("error")
def test_float32_silu_takes_the_unfused_steps(ops):
    # 61,440 elements of the (1, 40, 1536) input take the blocked path
    for x in _silu_inputs():
        out = ops._silu(x)
        assert out.is_contiguous() and torch.equal(_bits(out), _bits(F.silu(x))), tuple(x.shape)
        if x.dim() == 3 and x.shape[-1] % 2 == 0:
            x = x.contiguous()
            d = x.shape[-1] // 2
            both = ops._silu_and_mul(x)
            assert torch.equal(_bits(both), _bits(F.silu(x[..., :d]) * x[..., d:]))


def test_control_silu_in_float64_throughout_is_seen(ops):
    # the test above can fail: the whole formula in float64, rounded once, differs
    x = next(iter(_silu_inputs()))
    a = x.numpy().astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        once = torch.from_numpy((a / (1 + np.exp(-a))).astype(np.float32))
    assert not torch.equal(_bits(once), _bits(F.silu(x)))


def test_rms_norm_of_an_empty_last_dimension_is_empty_without_a_warning(ops):
    for shape in ((1, 1, 0), (2, 0)):
        x = torch.ones(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = ops._rms_norm(x, torch.ones(0), 1e-6)
        assert out.shape == x.shape
