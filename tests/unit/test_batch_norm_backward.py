"""native_batch_norm_backward's kernel gives the very bits, dtypes and strides of the
decomposition it replaced (upstream's torch/_decomp, run on our torch) with the decomposition's
two per-channel ``torch.sum`` calls taken in double and rounded once in float32 (as upstream's
C++ kernel accumulates them): train and eval, with and without weight, every output mask,
float32/float64/bfloat16, ranks 2 to 5, channels-last input, and the same errors. Its agreement with upstream's C++ kernel is the gradient suites' (batch_norm
rows, tests/test_training.py's CNN), unchanged by construction. Control: a batch size off by one
in the mean's normalisation is caught by the same comparison."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch._decomp.decompositions import native_batch_norm_backward as _decomposition

A = torch.ops.aten
_SUM = torch.sum


def _double_sum(x, dims):
    return _SUM(x.double(), dims).to(x.dtype) if x.dtype == torch.float32 else _SUM(x, dims)


def decomposition(*args):
    """The decomposition with its float32 per-channel sums in double (its only torch.sum calls)."""
    torch.sum = _double_sum
    try:
        return _decomposition(*args)
    finally:
        torch.sum = _SUM


def _bits(t):
    if t is None:
        return None
    return t.dtype, tuple(t.shape), t.stride(), t.contiguous().reshape(-1).view(torch.uint8) \
        .numpy().tobytes()


def _inputs(dt, shape, channels_last=False):
    torch.manual_seed(0)
    c = shape[1]
    x, g = torch.randn(shape).to(dt), torch.randn(shape).to(dt)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    w, rm, rv = torch.rand(c).to(dt) + 0.5, torch.randn(c).to(dt), torch.rand(c).to(dt) + 0.5
    _, mean, invstd = A.native_batch_norm(x, w, None, rm.clone(), rv.clone(), True, 0.1, 1e-5)
    return g, x, w, rm, rv, mean, invstd


@pytest.mark.parametrize("dt,shape", [(torch.float32, (4, 3, 5, 5)), (torch.float64, (6, 3)),
                                      (torch.bfloat16, (2, 1, 4)),
                                      (torch.float32, (3, 2, 2, 2, 2))])
def test_same_bits_as_the_decomposition(dt, shape):
    g, x, w, rm, rv, mean, invstd = _inputs(dt, shape)
    for train, weight, mask in itertools.product(
            (True, False), (w, None), ([True, True, True], [True, False, False],
                                       [False, True, True])):
        args = (g, x, weight, rm, rv, mean, invstd, train, 1e-5, mask)
        ours, ref = A.native_batch_norm_backward(*args), decomposition(*args)
        assert [_bits(t) for t in ours] == [_bits(t) for t in ref], (train, weight is None, mask)


def test_channels_last_input():
    g, x, w, rm, rv, mean, invstd = _inputs(torch.float32, (4, 3, 5, 5), channels_last=True)
    args = (g, x, None, None, None, mean, invstd, True, 1e-5, [True, True, True])
    assert [_bits(t) for t in A.native_batch_norm_backward(*args)] == \
        [_bits(t) for t in decomposition(*args)]


def test_same_errors_as_the_decomposition():
    g, x, w, rm, rv, mean, invstd = _inputs(torch.float32, (4, 3))
    for args in ((g, x, w, None, None, mean, invstd, False, 1e-5, [True] * 3),
                 (g, x, w, rm, rv, None, None, True, 1e-5, [True] * 3),
                 (g[:, 0], x[:, 0], None, rm, rv, mean, invstd, True, 1e-5, [True] * 3)):
        errors = []
        for fn in (A.native_batch_norm_backward, decomposition):
            with pytest.raises(Exception) as info:
                fn(*args)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]


def test_control_wrong_normalisation_is_caught():
    g, x, w, rm, rv, mean, invstd = _inputs(torch.float32, (4, 3, 5, 5))
    ours = A.native_batch_norm_backward(g, x, w, rm, rv, mean, invstd, True, 1e-5, [True] * 3)[0]
    xc = x - mean.view(1, 3, 1, 1)
    n = 4 * 25 + 1  # off by one
    wrong = (g - xc * ((g * xc).sum((0, 2, 3)) / n * invstd ** 2).view(1, 3, 1, 1)
             - (g.sum((0, 2, 3)) / n).view(1, 3, 1, 1)) * (invstd * w).view(1, 3, 1, 1)
    assert not torch.equal(ours, wrong)


def test_batch_norm_gradient_runs_through_the_kernel():
    from torchnative.csrc.ops.dispatcher import REGISTRY

    bn = torch.nn.BatchNorm2d(3).train()
    x = torch.randn(2, 3, 4, 4, requires_grad=True)
    bn(x).pow(2).sum().backward()
    op = REGISTRY.find("aten::native_batch_norm_backward", "")
    assert op.cache["CPU"].path == "kernel"


@pytest.mark.parametrize("dt,shape", [(torch.float16, (3, 4, 5)), (torch.float32, (7, 5, 3, 9)),
                                      (torch.float64, (2, 6, 7, 3)), (torch.float32, (1, 2))])
def test_dense_numpy_steps_are_the_decompositions_bits(dt, shape):
    """Dense operands of one dtype take numpy's elementwise steps directly: odd shapes, large
    and tiny values, eval mode and a transposed gradient (which keeps the kernel calls) agree
    bit for bit with the decomposition."""
    g, x, w, rm, rv, mean, invstd = _inputs(dt, shape)
    g = (g.double() * torch.logspace(-3, 3, shape[-1], dtype=torch.float64)).to(dt)
    grads = [g]
    if len(shape) > 2:
        grads.append(g.transpose(-1, -2).contiguous().transpose(-1, -2))
    for grad, train in itertools.product(grads, (True, False)):
        args = (grad, x, w, rm, rv, mean, invstd, train, 1e-5, [True, True, True])
        ours, ref = A.native_batch_norm_backward(*args), decomposition(*args)
        assert [_bits(t) for t in ours] == [_bits(t) for t in ref], (train, grad.stride())
