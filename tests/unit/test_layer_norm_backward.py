"""native_layer_norm_backward's kernel gives the very bits, dtypes, strides and errors of the
decomposition it replaced (upstream's torch/_decomp, run on our torch through the door): it
calls the same kernels with the same arguments in the same order. float32/float64/bfloat16/
float16, one and two normalized dims, with and without weight and bias, every output mask,
non-contiguous gradient and input, an empty batch. Its agreement with upstream's C++ kernel is
the gradient suites' (layer_norm rows, the MiniLM fine-tune), unchanged by construction.
Control: the decomposition with its two row sums swapped (b and c2) differs."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch._decomp.decompositions import native_layer_norm_backward as decomposition

A = torch.ops.aten


def _bits(t):
    if t is None:
        return None
    return t.dtype, tuple(t.shape), t.stride(), t.contiguous().reshape(-1).view(torch.uint8) \
        .numpy().tobytes()


def _inputs(dt, shape, k):
    torch.manual_seed(0)
    norm = list(shape[len(shape) - k:])
    x = (torch.randn(shape, dtype=torch.float64) * torch.logspace(-2, 2, shape[-1],
                                                                  dtype=torch.float64)).to(dt)
    g = torch.randn(shape).to(dt)
    w, b = torch.rand(norm).to(dt) + 0.5, torch.randn(norm).to(dt)
    _, mean, rstd = A.native_layer_norm(x, norm, w, b, 1e-5)
    return g, x, norm, mean, rstd, w, b


CASES = [(torch.float32, (4, 10, 384), 1), (torch.float64, (3, 5, 6), 2),
         (torch.bfloat16, (2, 7), 1), (torch.float16, (3, 4, 5), 1), (torch.float32, (9,), 1)]


@pytest.mark.parametrize("dt,shape,k", CASES)
def test_same_bits_as_the_decomposition(dt, shape, k):
    g, x, norm, mean, rstd, w, b = _inputs(dt, shape, k)
    for weight, bias, mask in itertools.product(
            (w, None), (b, None), ([True, True, True], [True, False, False],
                                   [False, True, True], [False, False, True])):
        args = (g, x, norm, mean, rstd, weight, bias, mask)
        ours, ref = A.native_layer_norm_backward(*args), decomposition(*args)
        assert [_bits(t) for t in ours] == [_bits(t) for t in ref], (weight is None,
                                                                     bias is None, mask)


def test_non_contiguous_operands_and_empty_batch():
    g, x, norm, mean, rstd, w, b = _inputs(torch.float32, (6, 4, 8), 1)
    gt = g.transpose(0, 1).contiguous().transpose(0, 1)
    xt = x.transpose(0, 1).contiguous().transpose(0, 1)
    args = (gt, xt, norm, mean, rstd, w, b, [True] * 3)
    assert [_bits(t) for t in A.native_layer_norm_backward(*args)] == \
        [_bits(t) for t in decomposition(*args)]
    e = torch.randn(0, 8)
    args = (e, e, [8], torch.randn(0, 1), torch.randn(0, 1), w[0], b[0], [True] * 3)
    assert [_bits(t) for t in A.native_layer_norm_backward(*args)] == \
        [_bits(t) for t in decomposition(*args)]


def test_same_errors_as_the_decomposition():
    g, x, norm, mean, rstd, w, b = _inputs(torch.float32, (4, 6), 1)
    for args in ((g[:, :5], x, norm, mean, rstd, w, b, [True] * 3),
                 (g, x, norm, mean, rstd, w[:5], b, [True] * 3),
                 (g, x, norm, mean[:3], rstd, w, b, [True] * 3)):
        errors = []
        for fn in (A.native_layer_norm_backward, decomposition):
            with pytest.raises(Exception) as info:
                fn(*args)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]


def test_control_swapped_row_sums_are_caught():
    g, x, norm, mean, rstd, w, b = _inputs(torch.float32, (4, 10, 384), 1)
    ours = A.native_layer_norm_backward(g, x, norm, mean, rstd, w, b, [True] * 3)[0]
    x_hat = (x - mean) * rstd
    gxh = g * w
    n = 384
    wrong = (rstd / n) * (gxh * n - (gxh * x_hat).sum(-1, True) - x_hat * gxh.sum(-1, True))
    assert not torch.equal(ours, wrong)


def test_layer_norm_gradient_runs_through_the_kernel():
    from torchnative.csrc.ops.dispatcher import REGISTRY

    ln = torch.nn.LayerNorm(8)
    x = torch.randn(3, 8, requires_grad=True)
    ln(x).pow(2).sum().backward()
    op = REGISTRY.find("aten::native_layer_norm_backward", "")
    assert op.cache["CPU"].path == "kernel"
