"""threshold_backward's dense lane (ReLU's gradient on C-contiguous float32/float64 operands of
one shape, threshold 0) gives the bits, dtype and strides of the composition it shortcuts
(``where(le(self, 0), 0, grad)``, the kernel's general path): zeros of both signs, NaN and
infinities in either operand, every size class. Operands outside it (another threshold, mixed
dtypes, strided, broadcast, 0-dim) take the general path. Control: the lane's mask built from
``<`` instead of ``<=`` is caught at self == 0."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_activation_backward as nab
from torchnative.csrc.kernels.pointwise_compare import le, where

A = torch.ops.aten
_SPECIAL = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e-45, -1e-45, 3.0, -2.0]


def _operands(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(shape, generator=g, dtype=dtype)
    grad = torch.randn(shape, generator=g, dtype=dtype)
    flat_s, flat_g = s.view(-1), grad.view(-1)
    k = min(len(_SPECIAL), flat_s.numel())
    for i in range(k):
        flat_s[i] = _SPECIAL[i]
        flat_g[(i * 5) % flat_g.numel()] = _SPECIAL[(i + 3) % len(_SPECIAL)]
    return grad, s


def _composition(grad, s):
    zero = torch.zeros((), dtype=grad.dtype)
    return where(le(s, 0), zero, grad)


def _same(a, b):
    return (a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and
            a.numpy().tobytes() == b.numpy().tobytes())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(1,), (7,), (64, 128), (16, 8, 16, 16), (3, 0, 2)])
def test_lane_matches_composition(dtype, shape):
    grad, s = _operands(shape, dtype, seed=len(shape))
    for th in (0, 0.0, -0.0):
        lane = nab._relu_lane(grad, s, th)
        assert lane is not None
        assert _same(lane, _composition(grad, s))
        assert _same(A.threshold_backward(grad, s, th), lane)


def test_outside_the_lane_takes_the_general_path():
    grad, s = _operands((6, 5), torch.float32, seed=3)
    assert nab._relu_lane(grad, s, 0.25) is None
    assert nab._relu_lane(grad.double(), s, 0) is None
    assert nab._relu_lane(grad.t(), s.t(), 0) is None
    assert nab._relu_lane(grad[:, :1], s, 0) is None
    assert nab._relu_lane(grad.bfloat16(), s.bfloat16(), 0) is None
    assert nab._relu_lane(torch.tensor(1.0), torch.tensor(-1.0), 0) is None
    assert nab._relu_lane(grad, s, True) is None
    # and the kernel still answers them as the composition does
    for args in ((grad, s, 0.25), (grad.t(), s.t(), 0), (torch.tensor(1.0), torch.tensor(0.0), 0)):
        ours = A.threshold_backward(*args)
        ref = where(le(args[1], args[2]), torch.zeros((), dtype=ours.dtype), args[0])
        assert _same(ours, ref)


def test_control_strict_mask_is_caught(monkeypatch):
    grad, s = _operands((4, 9), torch.float32, seed=5)
    ref = _composition(grad, s)
    monkeypatch.setattr(nab.np, "less_equal", np.less)
    assert not _same(nab._relu_lane(grad, s, 0), ref)


def test_relu_gradient_through_autograd():
    x = torch.randn(8, 9)
    x.view(-1)[:4] = torch.tensor([0.0, -0.0, float("nan"), 1.0])
    x.requires_grad_()
    (g,) = torch.autograd.grad((torch.relu(x) * 3.0).sum(), x)
    ref = torch.where(x.detach() <= 0, 0.0, torch.full_like(x, 3.0))
    assert g.numpy().tobytes() == ref.numpy().tobytes()
