"""sum, nansum, mean, nll_loss, softmax and log_softmax treat float exceptions as values, as upstream's C++ does: inf - inf is
NaN and a sum past the range is inf, without a numpy RuntimeWarning (upstream warns nothing)."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from torchnative.csrc.dispatch import door


def _cases():
    x = torch.randn(64, 128, generator=torch.Generator().manual_seed(0))
    x[3, 5], x[4, 5], x[7, 9] = math.inf, -math.inf, math.nan
    huge = torch.full((200, 576), 3e38)
    return [
        ("column sum through inf - inf", lambda: x.sum(0)[5], math.nan),
        ("whole sum", lambda: x.sum(), math.nan),
        ("nansum column", lambda: x.nansum(0)[5], math.nan),
        ("mean column", lambda: x.mean(0)[5], math.nan),
        ("sum past the range", lambda: torch.full((1000,), 3e38).sum(), math.inf),
        ("mean past the range", lambda: torch.full((1000,), 3e38).mean(), math.inf),
        ("row means past the range", lambda: huge.mean(-1)[0], math.inf),
        ("empty mean", lambda: torch.empty(0).mean(), math.nan),
        ("nll_loss through inf - inf", lambda: torch.nn.functional.nll_loss(
            torch.tensor([[math.inf, 0.0], [-math.inf, 0.0]]), torch.tensor([0, 0])), math.nan),
        ("log_softmax of a row holding inf", lambda: torch.log_softmax(
            torch.tensor([[0.0, math.inf, 1.0]]), 1)[0, 0], math.nan),
        ("softmax of a row holding inf", lambda: torch.softmax(
            torch.tensor([[0.0, math.inf, 1.0]]), 1)[0, 0], math.nan),
    ]


@pytest.mark.parametrize("name,fn,want", _cases(), ids=[c[0] for c in _cases()])
def test_no_numpy_warning_and_upstreams_value(name, fn, want):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fn().item()
    assert (math.isnan(got) and math.isnan(want)) or got == want


def test_control_without_the_quiet_state_numpy_warns(monkeypatch):
    # the door sets the quiet state around our kernels (tests/unit/test_float_state.py)
    monkeypatch.setattr(door, "_QUIET_SET", lambda state: None)
    monkeypatch.setattr(door, "_QUIET_RESET", lambda token: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            for _, fn, _ in _cases():
                fn()
