"""Autograd's extension points against upstream torch 2.13.0, run in its own process (one run
per module): saved-tensor hooks and saved attributes, the Node API, module hooks,
checkpointing, anomaly mode, batched gradients (is_grads_batched, vectorize=True, gradcheck's
check_batched_grad) and torch.autograd.functional.

The cases are in autograd_hooks_behaviour.py. Cases in PENDING need a change outside torch._C's
autograd package (named in the reason); they are strict xfails.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest


HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import autograd_hooks_behaviour as behaviour  # noqa: E402
from behaviour_compare import (agreement_test, case_names, ours_fixture, ran_on_upstream_test,
                               upstream_fixture)


PENDING: dict[str, str] = {}

CASES = case_names(behaviour)
theirs = upstream_fixture("autograd_hooks_behaviour.py")
ours = ours_fixture(behaviour)
test_case_agrees = agreement_test(CASES, PENDING)
test_every_case_ran_on_upstream = ran_on_upstream_test(CASES)


# --- refusals by name (upstream computes these; we refuse clearly) ----------------------------

def test_legacy_vmap_over_other_functions_refuses_by_name():
    import torch
    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TorchnativeNotImplementedError, match="legacy vmap"):
            torch._vmap_internals.vmap(lambda t: t * 2)(torch.ones(2, 3))
    b = torch._add_batch_dim(torch.ones(2, 3), 0, 1)
    assert tuple(b.shape) == (3,)  # one element's geometry, as upstream's BatchedTensor
    for read in (b.tolist, b.item, b.numpy, lambda: repr(b), lambda: b + 1):
        with pytest.raises(TorchnativeNotImplementedError, match="legacy vmap"):
            read()


def test_backward_with_batched_grads_refuses_by_name():
    import torch
    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    x = torch.ones(3, requires_grad=True)
    y = x * 2
    b = torch._add_batch_dim(torch.ones(2, 3), 0, 1)
    with pytest.raises(TorchnativeNotImplementedError, match="backward\\(\\) with batched"):
        torch.autograd.backward([y], [b])


def test_forward_mode_vectorized_jacobian_refuses_by_name():
    import torch
    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    with pytest.raises(TorchnativeNotImplementedError, match="legacy vmap"):
        torch.autograd.functional.jacobian(lambda t: t * 2, torch.ones(3), vectorize=True,
                                           strategy="forward-mode")


def test_batched_grads_equal_a_loop_of_single_passes():
    """Negative control for the batching: each row is the single vjp of its grad_output, and a
    wrong row would be seen."""
    import torch

    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = x.sin() * x.exp()
    v = torch.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]], dtype=torch.float64)
    g, = torch.autograd.grad(y, x, v, is_grads_batched=True, retain_graph=True)
    rows = [torch.autograd.grad(y, x, r, retain_graph=True)[0] for r in v]
    assert torch.equal(g, torch.stack(rows))
    assert not torch.equal(g, torch.stack(rows[::-1]))


def test_anomaly_traceback_is_users_code_only():
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            y = torch.ones(2, requires_grad=True) * 3
    stack = y.grad_fn.metadata["traceback_"]
    assert "test_anomaly_traceback_is_users_code_only" in stack[-1]
    assert not any("torchnative" in f for f in stack)
