"""Pointwise results laid out by a kept plan are the results the general steps lay out.

``pointwise_base.finish`` keeps, per geometry, what its general steps make of a C-contiguous
result (the canonical tensor, or TensorIterator's strides on size-1 dimensions). Every case is
run with the plans switched off, then twice with them on (the plan made, then taken): values,
sizes, strides, the array's byte strides and storage offsets must agree. A control shows the
comparison sees a layout change."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import pointwise_base


def _bases():
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    head = r(1, 9, 1, 64).transpose(1, 2)
    return {
        "rotary half": head[..., 32:],
        "rotary first half": head[..., :32],
        "transposed head": head,
        "kv head": r(1, 3, 1, 64).transpose(1, 2),
        "column": r(6, 4)[:, 1:2],
        "transposed": r(5, 7).t(),
        "expanded": r(1, 4, 1).expand(3, 4, 5),
        "size-1 leading": r(1, 1, 8).transpose(0, 1),
        "permuted": r(2, 3, 4).permute(2, 0, 1),
        "offset row": r(4, 6)[2:3],
        "channels last": r(2, 3, 4, 5).contiguous(memory_format=torch.channels_last),
        "empty": r(0, 3).t(),
        "contiguous": r(3, 4),
        "float64 half": torch.randn(1, 9, 1, 64, dtype=torch.float64,
                                    generator=g).transpose(1, 2)[..., 32:],
    }


def _others(x):
    g = torch.Generator().manual_seed(1)
    shape = tuple(x.shape)
    yield "number", 0.5
    yield "same shape", torch.randn(*shape, generator=g, dtype=x.dtype)
    if len(shape) >= 1:
        yield "last dim", torch.randn(shape[-1], generator=g, dtype=x.dtype)
        yield "leading 1s", torch.randn(*([1] * (len(shape) - 1)), shape[-1], generator=g,
                                        dtype=x.dtype)
    yield "itself", x


def _describe(t):
    a = t._np
    return (t.dtype, tuple(t.shape), t.stride(), t.storage_offset(), a.strides, a.shape,
            np.ascontiguousarray(a).tobytes(), t.is_contiguous())


def _calls():
    for bname, x in _bases().items():
        yield f"neg {bname}", (lambda x=x: -x)
        yield f"abs {bname}", (lambda x=x: x.abs())
        for oname, y in _others(x):
            yield f"{bname} + {oname}", (lambda x=x, y=y: x + y)
            yield f"{bname} * {oname}", (lambda x=x, y=y: x * y)
            if isinstance(y, torch.Tensor):
                yield f"{oname} * {bname}", (lambda x=x, y=y: y * x)
                yield f"{bname} > {oname}", (lambda x=x, y=y: x > y)
                yield f"where {bname} {oname}", (lambda x=x, y=y: torch.where(x > 0, x, y))


CALLS = dict(_calls())


@pytest.mark.parametrize("name", sorted(CALLS))
def test_plan_matches_general_steps(name, monkeypatch):
    fn = CALLS[name]
    with torch.inference_mode():
        pointwise_base._C_PLANS.clear()
        with monkeypatch.context() as m:
            m.setattr(pointwise_base, "_c_plan", lambda *a: None)
            general = _describe(fn())
        pointwise_base._C_PLANS.clear()
        assert _describe(fn()) == general       # the plan made
        assert _describe(fn()) == general       # the plan taken


def test_control_sees_layout():
    """A plan that kept canonical strides where TensorIterator's differ is seen."""
    x = _bases()["rotary half"]
    general = _describe(-x)
    pointwise_base._C_PLANS.clear()
    try:
        with pytest.MonkeyPatch.context() as m:
            m.setattr(pointwise_base, "_c_plan", lambda *a: True)
            assert _describe(-x) != general
    finally:
        pointwise_base._C_PLANS.clear()
