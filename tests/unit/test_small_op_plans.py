"""The planned small-operator paths give the general paths' bits.

``reduction_rows.row_plan`` is held to ``cascade_rows.row_sums``, ``mean(dim)``'s plan
(``reduction_mean_plan``) to the general mean (asked with an explicit ``dtype``, which the plan
never takes), and cat's dense lane to the general cat (the lane switched off), byte for byte, on
special values (NaN payloads, infinities, signed zeros, subnormals), many shapes, strides and
layouts; the controls show the comparisons see a change of order and of layout."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import joining
from torchnative.csrc.kernels.reduction_rows import row_plan
from torchnative.csrc.kernels.support.cascade_rows import row_sums

SPECIAL32 = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38, 1.0, -1.0],
                     np.float32)


def _values(shape, dt, seed, special=0.0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-20, 20, shape)
    x = np.asarray(x, dtype=dt)
    if special and x.size:
        mask = rng.random(shape) < special
        x[mask] = rng.choice(SPECIAL32.astype(dt), int(mask.sum()))
        if rng.random() < 0.5:   # a NaN with its own payload
            flat = x.reshape(-1)
            bits = flat.view(np.uint32 if dt == np.float32 else np.uint64)
            bits[rng.integers(flat.size)] = 0x7FC01234 if dt == np.float32 else 0x7FF8000000001234
    return x


def _bits(t) -> tuple:
    return (t.dtype, tuple(t.shape), t.stride(), np.ascontiguousarray(t.numpy()).tobytes())


LENGTHS = list(range(4, 140)) + [255, 256, 257, 511, 512, 513, 576, 1000, 1536, 4095, 4096,
                                 4097, 8192, 8200, 20000]


@pytest.mark.parametrize("dt,vs", [(np.float32, 8), (np.float64, 4)])
@pytest.mark.parametrize("R", [1, 2, 5])
def test_row_plan_is_row_sums(dt, vs, R):
    for i, n in enumerate(LENGTHS):
        if n < vs:
            continue
        X = _values((R, n), dt, n * 7 + R, special=0.02 if i % 3 == 0 else 0.0)
        a, b = row_sums(X, vs), row_plan(R, n, vs)(X)
        assert a.shape == b.shape and a.tobytes() == b.tobytes(), (R, n)


def test_row_plan_control_sees_another_order():
    X = _values((1, 576), np.float32, 3)
    assert np.add.reduce(X, axis=1).tobytes() != row_plan(1, 576, 8)(X).tobytes() or \
        np.add.reduce(X[:, ::-1], axis=1).tobytes() != row_plan(1, 576, 8)(X).tobytes()


MEAN_CASES = [((1, 1, 576), -1), ((1, 9, 576), -1), ((2, 3, 64), 2), ((3, 5, 8), [-1, -2]),
              ((4, 7), 1), ((576,), 0), ((576,), -1), ((3, 1, 9), -1), ((2, 3, 4, 5), [3, 2, 1]),
              ((5, 3), 0), ((2, 4096, 9), -1), ((1, 40000), -1), ((3, 12000), -1),
              ((2, 3), -1), ((0, 64), -1), ((64, 0), -1), ((), 0), ((7, 16), None),
              ((7, 16), []), ((4, 16), [1, 1])]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,dim", MEAN_CASES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean_plan_is_general_mean(dtype, shape, dim, keepdim):
    np_dt = np.float32 if dtype is torch.float32 else np.float64
    for seed, special in ((0, 0.0), (1, 0.05)):
        base = torch.from_numpy(_values(shape, np_dt, seed, special))
        views = [base]
        if len(shape) >= 2:
            views.append(base.transpose(0, -1).contiguous().transpose(0, -1))  # same values
            views.append(base.transpose(0, -1))
        for x in views:
            for _ in range(2):   # the plan is made on the first call, taken on the second
                try:
                    fast = x.mean(dim, keepdim=keepdim)
                except Exception as e:   # the same error as the general path
                    with pytest.raises(type(e), match=None):
                        x.mean(dim, keepdim=keepdim, dtype=dtype)
                    break
                assert _bits(fast) == _bits(x.mean(dim, keepdim=keepdim, dtype=dtype))


def test_mean_plan_control_sees_another_order():
    x = torch.from_numpy(_values((1, 1, 576), np.float32, 5))
    pairwise = torch.from_numpy(np.add.reduce(x.numpy(), axis=-1, keepdims=True)
                                / np.float32(576))
    reversed_ = x.flip(-1).mean(-1, keepdim=True)
    got = x.mean(-1, keepdim=True)
    assert _bits(got) != _bits(pairwise) or _bits(got) != _bits(reversed_)


def _cat_cases():
    a = torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5)
    cl = a.contiguous(memory_format=torch.channels_last)
    h = torch.rand(1, 9, 1, 64)
    yield [h[..., :32], h[..., 32:]], -1
    yield [h[..., 32:].neg(), h[..., :32]], 3
    yield [a, a], 1
    yield [cl, cl], 1                       # every input channels-last
    yield [cl, a], 0                        # mixed
    yield [a.transpose(1, 2), a.transpose(1, 2)], 2
    yield [a[:, :, ::2], a[:, :, 1::2]], 2
    yield [torch.rand(3, 0), torch.rand(3, 2)], 1
    yield [torch.rand(3), torch.rand(4)], 0
    yield [torch.rand(2, 3), torch.rand(2, 4)], 0   # mismatched: the error
    yield [torch.rand(2, 3), torch.rand(2, 3, dtype=torch.float64)], 0
    yield [torch.rand(2, 3).to(torch.bfloat16), torch.rand(2, 3).to(torch.bfloat16)], -2
    yield [torch.tensor(1.0), torch.tensor(2.0)], 0
    yield [torch.rand(2, 3), torch.rand(2, 3)], 5
    k = torch.rand(1, 3, 7, 64)
    yield [k, torch.rand(1, 3, 1, 64)], -2


def _outcome(fn):
    try:
        return _bits(fn())
    except Exception as e:   # noqa: BLE001
        return type(e), str(e)


@pytest.mark.parametrize("case", range(15))
def test_cat_dense_lane_is_general_cat(case, monkeypatch):
    tensors, dim = list(_cat_cases())[case]
    fast = [_outcome(lambda: torch.cat(tensors, dim)) for _ in range(2)]
    monkeypatch.setattr(joining, "_cat_dense", lambda tensors, dim: None)
    general = _outcome(lambda: torch.cat(tensors, dim))
    assert fast[0] == fast[1] == general


def test_cat_control_sees_layout():
    cl = torch.rand(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    assert torch.cat([cl, cl], 1).stride() != torch.cat([cl.contiguous(), cl.contiguous()], 1).stride()


def _softmax_reference(x: np.ndarray, axis: int) -> np.ndarray:
    m = np.maximum.reduce(x, axis=axis, keepdims=True)
    e = np.subtract(x, m)
    np.exp(e, out=e)
    s = np.add.reduce(e, axis=axis, keepdims=True)
    np.reciprocal(s, out=s)
    e *= s
    return e


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(12, 1, 64), (1, 9, 1, 40), (3, 5), (7,), (2, 3, 300),
                                   (4, 1), (1, 1), (0, 5), ()])
def test_softmax_as_the_keyword_steps(dtype, shape):
    np_dt = np.float32 if dtype is torch.float32 else np.float64
    for seed, special in ((0, 0.0), (1, 0.1)):
        base = _values(shape, np_dt, seed, special)
        if base.ndim and base.size:
            base[..., 0] = -np.inf                     # rows with -inf, one all -inf
            base.reshape(-1, base.shape[-1])[0] = -np.inf
        x = torch.from_numpy(base)
        for t in ([x, x.transpose(0, -1)] if x.dim() >= 2 else [x]):
            for dim in range(-max(t.dim(), 1), max(t.dim(), 1)):
                with np.errstate(all="ignore"):
                    got = torch.softmax(t, dim)
                    if not t.numel():
                        assert got.shape == t.shape and got.dtype == dtype
                        continue
                    a = np.ascontiguousarray(t.numpy()).reshape(t.shape or (1,))
                    want = _softmax_reference(a, dim % max(t.dim(), 1)).reshape(t.shape)
                assert got.is_contiguous() and got.dtype == dtype
                assert got.numpy().tobytes() == np.ascontiguousarray(want).tobytes()
