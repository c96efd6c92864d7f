"""Views and in-place operations under autograd (CopySlices, rebased views, creation modes,
detach/.data) against upstream torch 2.13.0, run in its own process (one run per module).

The cases are in autograd_views_behaviour.py. Cases listed in PENDING need a change outside
torch._C's autograd package (named in the reason); they are strict xfails, so they fail loudly
once that change lands and the entry must go.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest


HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import autograd_views_behaviour as behaviour  # noqa: E402
from behaviour_compare import (agreement_test, case_names, ours_fixture, ran_on_upstream_test, same,
                               upstream_fixture)


# Cases that need a change outside torch._C's autograd package, as strict xfails (none now).
PENDING: dict = {}

CASES = case_names(behaviour)
theirs = upstream_fixture("autograd_views_behaviour.py")
ours = ours_fixture(behaviour)
test_case_agrees = agreement_test(CASES, PENDING)
test_every_case_ran_on_upstream = ran_on_upstream_test(CASES)


def test_comparison_rejects_differences():
    base = [["AsStridedBackward0", True], [1.0, 2.5, -3.0], "RuntimeError: boom"]
    assert same(base, json.loads(json.dumps(base)))
    for bad in ([["AsStridedBackward0", False], [1.0, 2.5, -3.0], "RuntimeError: boom"],
                [["SliceBackward0", True], [1.0, 2.5, -3.0], "RuntimeError: boom"],
                [["AsStridedBackward0", True], [1.0, 2.5 * (1 + 1e-9), -3.0], "RuntimeError: boom"],
                [["AsStridedBackward0", True], [1.0, 2.5], "RuntimeError: boom"],
                [["AsStridedBackward0", True], [1.0, 2.5, -3.0], "no error"],
                [["AsStridedBackward0", 1], [1.0, 2.5, -3.0], "RuntimeError: boom"]):
        assert not same(bad, base)


# --- the machinery, on our side only -------------------------------------------------------

def test_stamped_view_is_refreshed_when_its_base_is_rebased():
    """What view_of's stamp enables: a view made before its base had history reads its slice of
    the base's new history (AsStridedBackward0 -> CopyBackwards), as upstream's lazy grad_fn."""
    import torch
    from torchnative.csrc.autograd import views
    from torchnative.csrc.autograd.node import gradient_edge
    from torchnative.csrc.core.creation_meta import note_view

    x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64, requires_grad=True)
    base = torch.zeros(4, dtype=torch.float64)
    v = base[1:3]
    note_view(v, base)
    assert views.grad_fn_of(v) is None and not views.requires_grad(v)
    base.copy_(x * 2)
    assert views.requires_grad(v)
    fn = views.grad_fn_of(v)
    assert fn.name() == "AsStridedBackward0"
    assert fn.next_functions[0][0] is base.grad_fn
    assert gradient_edge(v) == (fn, 0)
    g = fn(torch.ones(2, dtype=torch.float64))
    assert g.tolist() == [0.0, 1.0, 1.0, 0.0]


def test_stamped_views_refuse_rebase_by_creation_mode():
    import torch
    from torchnative.csrc.autograd import views
    from torchnative.csrc.core.creation_meta import note_view

    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    b = x * 2
    with torch.no_grad():
        v = b[:2]
        note_view(v, b)
        v.mul_(2)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base or "
                                           "another view of its base has been modified inplace"):
        views.grad_fn_of(v)
    w = b[1:]
    note_view(w, b, multi_output=True)
    with pytest.raises(RuntimeError, match="Output 0 of Slice is a view and is being modified "
                                           "inplace. This view is the output of a function that "
                                           "returns multiple views"):
        views.check_inplace(w, True)


def test_unstamped_view_keeps_its_history():
    """Without view_of's stamp nothing is known of when a view was made: its history stays."""
    import torch
    from torchnative.csrc.autograd import views

    base = torch.zeros(3, dtype=torch.float64)
    v = base[:2]
    v._tn_view = None  # as a view kernel that does not stamp leaves it
    base.copy_(torch.ones(3, dtype=torch.float64, requires_grad=True) * 1)
    assert views.grad_fn_of(v) is None


def test_views_of_parameters_are_not_remembered():
    """A leaf that requires grad is never rebased: views of it (weight.t() in every linear)
    cost no bookkeeping on the leaf."""
    import torch

    w = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    for _ in range(3):
        w.t()
    assert not hasattr(w, "_tn_views")
    h = w * 1
    h.t()
    assert len(h._tn_views) == 0  # weakly held: the view is gone
