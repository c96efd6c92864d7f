"""Our kernels compute in C++'s float state: a float exception is a value (inf - inf is NaN, an
overflow inf), never a numpy RuntimeWarning, whatever numpy's error state the caller set
(upstream's C++ warns and raises nothing). The door sets the quiet state around every kernel of
ours that is not a view (platform/float_state.py); Python kernels registered by users and
``__torch_dispatch__`` modes run in the caller's own numpy state, as they do on upstream."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from torchnative.csrc.dispatch import door

INF, NAN = math.inf, math.nan


def _full(*shape, v=INF):
    return torch.full(shape, v)


# operators whose numpy calls raised a float flag without the door's quiet state (products,
# normalizations, distances), with the value upstream gives
CASES = {
    "mm, inf x 0": (lambda: torch.tensor([[INF, 1.0]]) @ torch.zeros(2, 2), NAN),
    "bmm": (lambda: torch.bmm(_full(2, 3, 3), torch.full((2, 3, 3), -1.0).triu()), NAN),
    "matmul, stacked": (lambda: _full(2, 5, 3) @ torch.zeros(3, 4), NAN),
    "linear": (lambda: F.linear(_full(4, 3), torch.zeros(2, 3)), NAN),
    "linear, one row": (lambda: F.linear(_full(1, 3), torch.zeros(2, 3)), NAN),
    "mv": (lambda: torch.mv(torch.zeros(2, 3), _full(3)), NAN),
    "addmm": (lambda: torch.addmm(torch.zeros(2, 2), _full(2, 3), torch.zeros(3, 2)), NAN),
    "baddbmm": (lambda: torch.baddbmm(torch.zeros(1, 2, 2), _full(1, 2, 2), torch.zeros(1, 2, 2)),
                NAN),
    "dot": (lambda: torch.dot(torch.tensor([INF, 1.0]), torch.tensor([0.0, 1.0])), NAN),
    "einsum": (lambda: torch.einsum("ij,jk->ik", _full(2, 2), torch.zeros(2, 2)), NAN),
    "conv1d": (lambda: F.conv1d(_full(1, 1, 5), torch.tensor([[[1.0, -1.0]]])), NAN),
    "layer_norm": (lambda: F.layer_norm(torch.tensor([[INF, 1.0]]), (2,)), NAN),
    "batch_norm": (lambda: F.batch_norm(torch.tensor([[INF], [1.0]]), None, None, training=True),
                   NAN),
    "cdist": (lambda: torch.cdist(_full(1, 2, 3), _full(1, 2, 3)), NAN),
    "sub, inf - inf": (lambda: _full(3) - _full(3), NAN),
    "sub_ in place": (lambda: _full(3).sub_(_full(3)), NAN),
    "exp past the range": (lambda: torch.exp(torch.tensor([1000.0])), INF),
    "log of -1": (lambda: torch.log(torch.tensor([-1.0])), NAN),
    "silu, exp(-x) past the range": (lambda: F.silu(torch.tensor([-1000.0])), -0.0),
    "mean past the range": (lambda: torch.full((1000,), 3e38).mean(), INF),
    "softmax of a row holding inf": (lambda: torch.softmax(torch.tensor([0.0, INF]), 0), NAN),
    "matmul backward": (lambda: _backward_of_matmul(), NAN),
}


def _backward_of_matmul():
    a = _full(2, 2).requires_grad_()
    (a @ torch.zeros(2, 2)).sum().backward()
    return (a @ torch.zeros(2, 2)).detach()


def _first(t):
    return t.reshape(-1)[0].item()


@pytest.mark.parametrize("name", list(CASES))
def test_float_exceptions_are_values_without_a_warning(name):
    fn, want = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _first(fn())
    assert (math.isnan(got) and math.isnan(want)) or got == want


def test_the_callers_numpy_state_raising_is_not_ours():
    """Under ``np.seterr(all="raise")`` our kernels still give values, and the caller's state is
    as it was after each call: numpy raises for the caller's own arithmetic."""
    saved = np.seterr(all="raise")
    try:
        for fn, _ in CASES.values():
            fn()
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise",
                               "invalid": "raise"}
        with pytest.raises(FloatingPointError):
            np.float64(1.0) / np.float64(0.0)
    finally:
        np.seterr(**saved)


def test_a_users_python_kernel_runs_in_the_callers_state():
    """A custom operator's numpy code is the user's: it warns as it would on upstream."""
    lib = torch.library.Library("tn_float_state_test", "DEF")
    lib.define("half_inverse(Tensor x) -> Tensor")

    def half_inverse(x):
        return torch.from_numpy(0.5 / x.numpy())   # 0.5 / 0: numpy's divide warning

    lib.impl("half_inverse", half_inverse, "CPU")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeWarning, match="divide by zero"):
                torch.ops.tn_float_state_test.half_inverse(torch.zeros(2))
    finally:
        lib._destroy()


def test_a_dispatch_mode_runs_in_the_callers_state():
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Probe(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(np.geterr()["invalid"])
            return func(*args, **(kwargs or {}))

    saved = np.seterr(invalid="raise")
    try:
        with Probe():
            _full(2) - _full(2)
    finally:
        np.seterr(**saved)
    assert seen and set(seen) == {"raise"}


def test_views_skip_the_quiet_state():
    """Views do no float arithmetic: their CPU kernels are resolved without the quiet state
    (what it costs: bench/float_state_cost.py); kernels that compute keep it."""
    from torchnative.csrc.dispatch.call import op

    x = torch.randn(4, 6)
    x.view(6, 4), x.transpose(0, 1), x[1], x.unsqueeze(0), x + x, x @ x.t(), torch.cat((x, x))
    for name in ("view", "transpose.int", "select.int", "unsqueeze"):
        assert door.resolve(op(name), "CPU").quiet is False, name
    for name in ("add.Tensor", "mm", "cat"):
        assert door.resolve(op(name), "CPU").quiet is True, name


def test_control_without_the_door_quiet_state_numpy_warns(monkeypatch):
    """The cases above can fail: with the door's two calls made no-ops, numpy warns."""
    monkeypatch.setattr(door, "_QUIET_SET", lambda state: None)
    monkeypatch.setattr(door, "_QUIET_RESET", lambda token: None)
    silent = []
    for name, (fn, _) in CASES.items():
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            fn()
        if not any(issubclass(w.category, RuntimeWarning) for w in ws):
            silent.append(name)
    assert not silent   # every case warns without it: none passes for another reason
