"""The per-step calls of a generate loop (arange, scalar_tensor, where) take shortcuts that give
the general paths' tensors: arange's result made at its size against arange_out's resize and
fill, scalar_tensor's float lane against ``full``, where's copy of ``other`` against np.where.
Values byte for byte, dtype, sizes, strides, storage size; errors alike; what a dispatch mode
sees alike. Controls show the comparisons see a changed value and a changed layout."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import pointwise_compare


def _describe(t):
    a = t._np
    return (t.dtype, tuple(t.shape), t.stride(), t.storage_offset(),
            None if a is None else (a.strides, np.ascontiguousarray(a).tobytes()),
            t.untyped_storage().nbytes(), t.device.type)


def _outcome(fn):
    try:
        return _describe(fn())
    except Exception as e:  # noqa: BLE001 -- the error is the outcome compared
        return type(e).__name__, str(e)


ARANGE = [(0, 1, 1), (0, 49152, 1), (8, 9, 1), (5, 40, 3), (-7, 7, 2), (10, -3, -2), (0, 0, 1),
          (3, 3, 1), (0.5, 7.25, 0.75), (-2.5, 2.5, 0.1), (0, 100, 7), (2 ** 62, 2 ** 62 + 5, 1),
          (1, 0, 1), (0, 5, 0), (0, float("inf"), 1), (0.0, 1000.0, 1.0)]
DTYPES = [None, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.float16,
          torch.bfloat16, torch.float32, torch.float64, torch.bool, torch.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("bounds", ARANGE, ids=str)
def test_arange_is_arange_out(bounds, dtype):
    start, end, step = bounds
    want_dtype = dtype if dtype is not None else (
        torch.int64 if all(isinstance(b, int) for b in bounds) else torch.get_default_dtype())
    functional = _outcome(lambda: torch.arange(start, end, step, dtype=dtype))
    out = _outcome(lambda: torch.arange(start, end, step,
                                        out=torch.empty(0, dtype=want_dtype)))
    assert functional == out
    for device in ("meta",):
        assert _outcome(lambda: torch.arange(start, end, step, dtype=dtype, device=device))[:4] \
            == _outcome(lambda: torch.arange(start, end, step, dtype=want_dtype,
                                             out=torch.empty(0, dtype=want_dtype,
                                                             device=device)))[:4]


def test_arange_one_bound_spellings():
    assert _describe(torch.arange(49152)) == _describe(torch.arange(0, 49152, 1))
    assert _describe(torch.arange(1, dtype=torch.int64)) == _describe(
        torch.arange(0, 1, out=torch.empty(0, dtype=torch.int64)))


def _doubles():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 64, 4000, dtype=np.uint64)
    out = [struct.unpack("<d", struct.pack("<Q", int(b)))[0] for b in bits]
    # halfway between neighbouring float32 values, and the range's edges
    f = rng.standard_normal(500).astype(np.float32)
    out += [(float(a) + float(np.nextafter(a, np.float32(np.inf)))) / 2 for a in f]
    fmax = float(np.finfo(np.float32).max)
    out += [0.0, -0.0, math.inf, -math.inf, math.nan, fmax, -fmax, 3.4028235e38, -3.4028235e38,
            1e-45, 7e-46, -7e-46, 1.5e-45, 2.0 ** -150, 1e308, -1e308, float.fromhex("0x1.fffffp127")]
    out.append(struct.unpack("<d", struct.pack("<Q", 0x7FF8000000001234))[0])
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int32,
                                   None], ids=str)
def test_scalar_tensor_float_lane_is_full(dtype):
    for v in _doubles():
        lane = _outcome(lambda: torch.scalar_tensor(v, dtype=dtype))
        general = _outcome(lambda: torch.full((), v, dtype=dtype or torch.get_default_dtype()))
        assert lane == general, v


def test_scalar_tensor_other_values_and_devices():
    for v in (1, -3, True, 2 ** 70, 1 + 2j):
        for dt in (torch.float32, torch.float64, torch.int64):
            assert _outcome(lambda: torch.scalar_tensor(v, dtype=dt)) == \
                _outcome(lambda: torch.full((), v, dtype=dt))
    t = torch.scalar_tensor(-math.inf, device="meta")
    assert t.device.type == "meta" and t.dtype == torch.float32 and t.shape == ()


def _where_cases():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(1, 49152, generator=g)
    flat = logits.reshape(-1).numpy()
    flat[::97] = np.nan
    flat[1::89] = -0.0
    flat.view(np.uint32)[5] = 0x7FC01234
    mask = torch.rand(49152, generator=g) < 0.1
    yield "logits, -inf", (mask, -math.inf, logits)
    yield "logits, 0-d tensor", (mask, torch.tensor(-math.inf), logits)
    yield "logits, row tensor", (mask, torch.randn(49152, generator=g), logits)
    yield "mask 2-d", (mask.reshape(1, -1), -math.inf, logits)
    yield "mask larger", (torch.rand(3, 1, generator=g) < 0.5, 1.5, torch.randn(1, 2048, generator=g))
    yield "other smaller", (torch.rand(4, 2048, generator=g) < 0.5, 0.0, torch.randn(2048, generator=g))
    yield "other transposed", (torch.rand(64, 32, generator=g) < 0.5, -1.0,
                               torch.randn(32, 64, generator=g).t())
    yield "mask transposed", (torch.rand(32, 64, generator=g).t() < 0.5, -1.0,
                              torch.randn(64, 32, generator=g))
    yield "self full, other scalar", (mask, logits, 0.0)
    yield "float64 other", (mask, -math.inf, logits.double())
    yield "int other", (mask, 3, torch.arange(49152).reshape(1, -1))
    yield "float self into int other", (mask, 0.5, torch.arange(49152))
    yield "bfloat16", (mask, -math.inf, logits.bfloat16())
    yield "uint8 mask", (mask.to(torch.uint8), -1.0, logits)
    yield "small", (torch.tensor([True, False]), -1.0, torch.tensor([1.0, 2.0]))
    yield "empty", (torch.zeros(0, 5, dtype=torch.bool), 1.0, torch.randn(0, 5))
    yield "self and other tensors", (mask, torch.randn(1, 49152, generator=g), logits)


WHERE = dict(_where_cases())


@pytest.mark.parametrize("name", sorted(WHERE))
def test_where_copy_lane_is_np_where(name, monkeypatch):
    cond, a, b = WHERE[name]
    with monkeypatch.context() as m:
        m.setattr(pointwise_compare, "_where_over_copy", lambda *args: None)
        general = _outcome(lambda: torch.where(cond, a, b))
    assert _outcome(lambda: torch.where(cond, a, b)) == general


def test_controls_are_seen(monkeypatch):
    cond, a, b = WHERE["logits, -inf"]
    general = _describe(torch.where(cond, a, b))
    with monkeypatch.context() as m:  # a lane that wrote the other operand's elements
        m.setattr(pointwise_compare, "_where_over_copy",
                  lambda c, x, y, npdt: np.where(c, y, x) if np.ndim(y) else None)
        assert _describe(torch.where(cond, a, b)) != general
    assert _describe(torch.scalar_tensor(1.0)) != _describe(torch.scalar_tensor(
        float(np.nextafter(np.float32(1.0), np.float32(2.0)))))


def test_dispatch_mode_sees_the_operators_only(dispatch_recorder):
    scores = torch.randn(1, 4096)
    mask = torch.isin(torch.arange(4096), torch.tensor([2]))
    with dispatch_recorder() as rec:
        torch.arange(4096)
        torch.arange(3, 9, dtype=torch.int64)
        torch.scalar_tensor(-math.inf)
        torch.where(mask, -math.inf, scores)
    assert rec.seen == ["aten.arange.default", "aten.arange.start", "aten.scalar_tensor.default",
                        "aten.scalar_tensor.default", "aten.where.self"]
