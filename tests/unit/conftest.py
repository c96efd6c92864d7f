"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def applied(monkeypatch):
    """The BLAS thread counts applied (kernels/support/blas_threads.py), recorded instead of set,
    with the budget set to two."""
    from torchnative.csrc.kernels.support import blas_threads as bt

    seen = []

    def fake_apply(n):
        seen.append(n)
        bt._state["current"] = n

    monkeypatch.setitem(bt._state, "current", 2)   # BLAS running at the budget
    monkeypatch.setattr(bt, "_apply", fake_apply)
    monkeypatch.setitem(bt._state, "budget", 2)
    return seen


@pytest.fixture
def dispatch_recorder():
    """A ``TorchDispatchMode`` class whose instances list the operators they see (``.seen``)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(str(func))
            return func(*args, **(kwargs or {}))

    return Recorder
