"""isin's kernel gives the decomposition's tensor (what served every call before it): values,
dtype, sizes and strides, on the cases it computes itself and on those it hands back; a
dispatch mode sees the one operator. A control shows the comparison sees a wrong answer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import isin as isin_kernel


def _describe(t):
    return (t.dtype, tuple(t.shape), t.stride(), t.storage_offset(),
            np.ascontiguousarray(t.numpy()).tobytes())


def _cases():
    g = torch.Generator().manual_seed(0)
    vocab = torch.arange(49152)
    ids = torch.tensor([[1, 504, 3458, 282, 4649, 314, 6, 2]])
    grown = torch.cat([ids, torch.tensor([[2]])], dim=-1)
    f = torch.randn(5, 7, generator=g)
    f[0, 0], f[1, 1], f[2, 2] = float("nan"), -0.0, 0.0
    yield "vocab, one id", (vocab, torch.tensor([2]))
    yield "vocab, three ids", (vocab, torch.tensor([2, 0, 49151]))
    yield "vocab, id absent", (vocab, torch.tensor([-5]))
    yield "ids, 0-d", (ids, torch.tensor(2))
    yield "ids, one", (ids, torch.tensor([2]))
    yield "last id of a grown row", (grown[:, -1:], torch.tensor([2]))
    yield "test 2-d", (ids, torch.tensor([[2, 6], [1, 7]]))
    yield "floats, nan and zeros", (f, torch.tensor([float("nan"), 0.0]))
    yield "floats, minus zero", (f, torch.tensor([-0.0]))
    yield "float64", (f.double(), f.double()[0, 1:3])
    yield "int32", (vocab.int()[:100], torch.tensor([3, 4], dtype=torch.int32))
    yield "uint8", (torch.arange(200, dtype=torch.uint8), torch.tensor([7], dtype=torch.uint8))
    yield "mixed dtypes", (vocab[:50], torch.tensor([3.0]))
    yield "bool", (torch.tensor([True, False]), torch.tensor([True]))
    yield "bfloat16", (f.bfloat16(), f.bfloat16()[0])
    yield "transposed", (torch.arange(12).reshape(3, 4).t(), torch.tensor([5]))
    yield "empty elements", (torch.zeros(0, 3, dtype=torch.int64).t(), torch.tensor([1]))
    yield "empty test", (ids, torch.zeros(0, dtype=torch.int64))
    yield "sorting branch", (ids, torch.arange(100))
    yield "0-d elements", (torch.tensor(5), torch.tensor([5, 6]))
    yield "scalar-like 1 element", (torch.tensor([5]), torch.tensor([5, 6]))


CASES = dict(_cases())


@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_is_decomposition(name, invert):
    a, b = CASES[name]
    decomposed = isin_kernel._decomposition()
    want = _describe(decomposed(a, b, invert=invert))
    assert _describe(isin_kernel.isin(a, b, invert=invert)) == want
    assert _describe(torch.isin(a, b, invert=invert)) == want
    assert _describe(torch.isin(a, b, assume_unique=True, invert=invert)) == want


def test_control_sees_a_wrong_answer():
    a, b = CASES["vocab, one id"]
    assert _describe(torch.isin(a, b)) != _describe(torch.isin(a, torch.tensor([3])))


def test_dispatch_mode_sees_isin_only(dispatch_recorder):
    a, b = CASES["vocab, one id"]
    strided, mixed = torch.arange(12).reshape(3, 4).t(), b.double()
    with dispatch_recorder() as rec:
        torch.isin(a, b)
        torch.isin(strided, mixed)
    assert rec.seen == ["aten.isin.Tensor_Tensor", "aten.isin.Tensor_Tensor"]
