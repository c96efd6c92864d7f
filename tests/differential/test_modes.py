"""Modes and global state against upstream torch 2.13.0, each in its own process: inference mode
and inference tensors, grad modes, deterministic algorithms (and their filled allocations),
default dtype/device, anomaly mode, Generator state round trips, result_type
(tests/differential/modes_behaviour.py holds the probes).

Cases in PENDING need something torchnative refuses by name; they are strict xfails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import modes_behaviour as behaviour  # noqa: E402
from behaviour_compare import (agreement_test, case_names, ours_fixture, ran_on_upstream_test,  # noqa: E402
                               same, upstream_fixture)

PENDING: dict[str, str] = {}

CASES = case_names(behaviour)
theirs = upstream_fixture("modes_behaviour.py")
ours = ours_fixture(behaviour)
test_case_agrees = agreement_test(CASES, PENDING)
test_every_case_ran_on_upstream = ran_on_upstream_test(CASES)


def test_comparison_rejects_differences():
    base = [True, "RuntimeError: Inference tensors do not track version counter.", [1.0, 2.0]]
    assert same(base, json.loads(json.dumps(base)))
    for bad in ([False, base[1], base[2]], [True, "no error", base[2]],
                [True, base[1], [1.0, 2.0 + 1e-9]]):
        assert not same(bad, base)


def test_state_is_restored_after_the_probes(ours):
    # the probes flip process-wide switches; each must leave them as it found them
    import torch

    assert torch.get_default_dtype() == torch.float32
    assert str(torch.get_default_device()) == "cpu"
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
    assert not torch.is_anomaly_enabled()


def test_deterministic_fill_is_off_by_the_other_switch():
    import torch

    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = False
    try:
        t = torch.empty(4)
        # no fill: the allocation is whatever the allocator gave (zeros for fresh numpy memory
        # or stale bytes), and the switch reads back as set
        assert torch.utils.deterministic.fill_uninitialized_memory is False
        torch.utils.deterministic.fill_uninitialized_memory = True
        assert torch.empty(4).isnan().all()
        assert t.shape == (4,)
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = True
        torch.use_deterministic_algorithms(False)
