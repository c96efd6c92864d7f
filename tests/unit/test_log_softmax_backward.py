"""_log_softmax_backward_data's kernel gives the very bits, dtypes and strides of the
decomposition it replaced (upstream's torch/_decomp, run on our torch), over dtypes, dims,
layouts and input_dtype casts, and the same errors. Its agreement with upstream's C++ kernel is
the gradient suites' (log_softmax and cross_entropy rows), unchanged by construction. Control: a
decomposition with the sum taken over the wrong dim is caught by the same comparison."""

from __future__ import annotations

import pytest
import torch
from torch._decomp.decompositions import _log_softmax_backward_data as decomposition

A = torch.ops.aten


def _bits(t):
    raw = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    return t.dtype, tuple(t.shape), t.stride(), raw


def _cases():
    torch.manual_seed(0)
    x = torch.randn(6, 7) * 4
    o, g = torch.log_softmax(x, 1), torch.randn(6, 7)
    o3, g3 = torch.log_softmax(torch.randn(2, 3, 5), 0), torch.randn(2, 3, 5)
    # rows of a float32 vector or more (the sum's planned lanes); float exceptions as values:
    # inf and NaN gradients, -0.0, an output of -inf (exp gives 0)
    o10, g10 = torch.log_softmax(torch.randn(6, 10) * 4, 1), torch.randn(6, 10)
    gs, os_ = g10.clone(), o10.clone()
    gs[0, 0], gs[1, 2], gs[2, 3], os_[3, 4] = float("inf"), float("nan"), -0.0, -float("inf")
    f32, f64, bf16, f16 = torch.float32, torch.float64, torch.bfloat16, torch.float16
    return [(g, o, 1, f32), (g, o, 0, f32), (g, o, -1, f32), (g.double(), o.double(), 1, f64),
            (g.bfloat16(), o.bfloat16(), 1, bf16), (g.half(), o.half(), 1, f16),
            (g.bfloat16(), o.bfloat16(), 1, f32), (g, o, 1, bf16), (g.t(), o.t(), 0, f32),
            (g[0], o[0], 0, f32), (g.double(), o, 1, f32), (g3, o3, 0, f32), (g3, o3, 2, f32),
            (g[:0], o[:0], 1, f32), (torch.tensor(1.5), torch.tensor(-0.2), 0, f32),
            (g10, o10, 1, f32), (gs, os_, 1, f32), (gs.double(), os_.double(), 0, f64),
            (gs, os_, -1, f32)]


@pytest.mark.parametrize("k", range(19))
def test_same_bits_as_the_decomposition(k):
    args = _cases()[k]
    assert _bits(A._log_softmax_backward_data(*args)) == _bits(decomposition(*args))


def test_same_errors_as_the_decomposition():
    g = torch.randn(3, 4)
    for args in ((g, g, 2, torch.float32), (g, torch.randn(4, 3), 1, torch.float32)):
        errors = []
        for fn in (A._log_softmax_backward_data, decomposition):
            with pytest.raises(Exception) as info:
                fn(*args)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]


def test_control_wrong_dim_is_caught():
    g, o, _, f32 = _cases()[0]
    wrong = g - torch.exp(o) * g.sum(0, keepdim=True)
    assert _bits(A._log_softmax_backward_data(g, o, 1, f32)) != _bits(wrong)


def test_dense_operands_take_the_array_lane():
    """The contiguous float32/float64 cases above are computed by the array lane (so the bit
    comparison covers it); a transposed or reduced-precision operand is not."""
    from torchnative.csrc.kernels.nn_softmax_backward import _dense_lane

    cases = _cases()
    assert all(_dense_lane(*cases[k]) is not None for k in (1, 3, 11, 15, 16, 17, 18))
    assert all(_dense_lane(*cases[k]) is None for k in (4, 5, 6, 7, 8, 10, 13, 14))


def test_log_softmax_gradient_runs_through_the_kernel():
    from torchnative.csrc.ops.dispatcher import REGISTRY

    op = REGISTRY.find("aten::_log_softmax_backward_data", "")
    x = torch.randn(4, 5, requires_grad=True)
    torch.log_softmax(x, 1).sum().backward()
    assert op.cache["CPU"].path == "kernel"
