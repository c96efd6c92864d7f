"""relu / clamp_min(x, 0)'s lane (support/relu_max.py; C-contiguous float32/float64, a +0
bound) gives the bits, dtype and strides of the general path it shortcuts
(``where(x < 0, 0, x)``: -0.0 and NaN kept, negatives to +0.0): zeros of both signs, NaN
payloads, infinities, subnormals, every size class. Tensors and bounds outside it (strided,
other dtypes, a -0.0 or non-zero bound) take the general path. Control: a mask built from
``<=`` is caught at -0.0."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import pointwise_misc as pm

A = torch.ops.aten
_SPECIAL = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e-45, -1e-45, 5e-320,
            -5e-320, 3.0, -2.0]


def _input(shape, dtype, seed):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    flat = x.view(-1)
    for i in range(min(len(_SPECIAL), flat.numel())):
        flat[i] = _SPECIAL[i]
    if flat.numel() > len(_SPECIAL):   # a NaN with a payload and its sign bit set
        bits = np.int32 if dtype == torch.float32 else np.int64
        flat.numpy().view(bits)[len(_SPECIAL)] = np.array(-1, bits) ^ 0x10
    return x


def _general(x, lo=0):
    dt = x.dtype
    return pm._apply(lambda a: pm._above(a, pm.checked(lo, dt)), x, dt)


def _bytes(t):
    # numpy has no bfloat16 (Tensor.numpy() refuses it, as upstream's): its 16 bits
    return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()


def _same(a, b):
    return (a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and
            _bytes(a) == _bytes(b))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(1,), (7,), (64, 128), (16, 8, 16, 16), (3, 0, 2)])
def test_lane_matches_general_path(dtype, shape, monkeypatch):
    x = _input(shape, dtype, seed=len(shape))
    calls = []
    real = pm.relu_array
    monkeypatch.setattr(pm, "relu_array", lambda v: calls.append(1) or real(v))
    for ours in (A.relu(x), A.clamp_min(x, 0), A.clamp_min(x, 0.0), torch.relu(x)):
        assert _same(ours, _general(x))
    assert len(calls) == 4
    y = x.clone()
    assert _same(A.relu_(y), _general(x)) and _same(y, _general(x))


def test_outside_the_lane_takes_the_general_path(monkeypatch):
    monkeypatch.setattr(pm, "relu_array", None)        # the lane would fail if taken
    x = _input((6, 5), torch.float32, seed=3)
    for ours, ref in ((A.relu(x.t()), _general(x.t())),
                      (A.relu(x[:, :2]), _general(x[:, :2])),
                      (A.relu(x.half()), _general(x.half())),
                      (A.relu(x.bfloat16()), _general(x.bfloat16())),
                      (A.relu(torch.tensor(-1.5)), _general(torch.tensor(-1.5))),
                      (A.clamp_min(x, -0.0), _general(x, -0.0)),
                      (A.clamp_min(x, 0.5), _general(x, 0.5)),
                      (A.relu((x * 10).int()), _general((x * 10).int()))):
        assert _same(ours, ref)
    assert A.clamp_min(x, -0.0).numpy()[x.numpy() < 0].view(np.int32).tolist()[0] == \
        np.array(-0.0, np.float32).view(np.int32)


def test_control_non_strict_mask_is_caught(monkeypatch):
    x = _input((4, 9), torch.float32, seed=5)
    ref = _general(x)
    monkeypatch.setattr(pm, "relu_array",
                        lambda v: np.where(np.less_equal(v, 0), v.dtype.type(0), v))
    assert not _same(A.relu(x), ref)


def test_relu_through_autograd():
    x = _input((8, 9), torch.float32, seed=6).requires_grad_()
    y = torch.relu(x)
    y.sum().backward()
    assert _same(y.detach(), _general(x.detach()))
    assert torch.equal(x.grad, (~(y.detach() <= 0)).float())     # NaN passes its gradient
