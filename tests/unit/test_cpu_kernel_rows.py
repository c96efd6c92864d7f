"""torchnative-cpu's RMSNorm works out a single row's scale (a decode step) from Python floats
and a batch's with numpy: the same IEEE operations, so a row gives the same bits either way."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from torchnative.kernels import get_local_kernel

REPO = Path(__file__).resolve().parents[2] / "src/torchnative/kernels/repos/torchnative-cpu"


@pytest.fixture(scope="module")
def ops():
    return get_local_kernel(REPO).layers._ops


def _bits(t):
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("eps", [1e-5, 1e-6, 0.0])
def test_one_row_equals_its_row_in_a_batch(ops, dtype, eps):
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(6, 576, generator=g, dtype=torch.float64) *
         torch.tensor([1e-20, 1e-3, 1.0, 7.0, 1e3, 1e18], dtype=torch.float64)[:, None]).to(dtype)
    w = (1 + 0.3 * torch.randn(576, generator=g, dtype=torch.float64)).to(dtype)
    batch = ops._rms_norm(x[None], w, eps)[0]
    for i in range(x.shape[0]):
        row = ops._rms_norm(x[i].reshape(1, 1, 576), w, eps).reshape(576)
        assert torch.equal(_bits(row), _bits(batch[i])), (i, eps)


def _unfused(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("rows", [1, 3])
def test_zero_and_infinite_rows_as_the_unfused_layer_without_a_warning(ops, rows):
    w = torch.ones(8)
    zero = torch.zeros(rows, 1, 8)
    assert ops._rms_norm(zero, w, 0.0).isnan().all() and _unfused(zero, w, 0.0).isnan().all()
    assert torch.equal(ops._rms_norm(zero, w, 1e-6), torch.zeros(rows, 1, 8))
    inf = torch.ones(rows, 1, 8)
    inf[..., 2] = float("inf")
    assert torch.equal(ops._rms_norm(inf, w, 1e-6).isnan(), _unfused(inf, w, 1e-6).isnan())
    assert torch.equal(ops._rms_norm(inf, w, 1e-6).nan_to_num(), _unfused(inf, w, 1e-6).nan_to_num())


def test_control_a_changed_row_operation_is_seen(ops, monkeypatch):
    # the test above can fail: a single-row scale that divides first rounds differently
    import math

    def off(x, eps, _orig=ops._normalized):
        h, r = _orig(x, eps)
        if isinstance(r, float):
            r = math.sqrt(1.0 / ((x.astype("float64") ** 2).sum() / x.shape[-1] + eps))
            h = x * r
        return h, r

    monkeypatch.setattr(ops, "_normalized", off)
    with pytest.raises(AssertionError):
        for dtype in (torch.float64,):
            test_one_row_equals_its_row_in_a_batch(ops, dtype, 1e-5)
