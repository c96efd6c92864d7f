"""A TensorIterator out= overload given an out it must resize: upstream restrides the resized out
to the layout the iterator computed from its inputs (a transposed input's permutation, a
channels-last input's), where an out of the right shape keeps its own strides. Each case records
the out's shape, strides, values and whether the call returned the out itself; ours and upstream
compared case for case, the control being a contiguous input (a contiguous out). (Not yet as
upstream: mse_loss_backward, huber_loss_backward and smooth_l1_loss_backward's out=, whose
functional results are contiguous while their iterators lay a resized out like the inputs.)"""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, warnings
import torch
A = torch.ops.aten
torch.manual_seed(0)
a, b = torch.randn(5, 7), torch.randn(5, 7)
cl = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)

def into(fn, out, values=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (resizing a non-empty out warns on both sides)
        r = fn(out)
    return [list(out.shape), list(out.stride()), out.tolist() if values else None, r is out]

cases = {
    "neg of a transposed input": lambda o: torch.neg(a.t(), out=o),
    "exp of a transposed input": lambda o: torch.exp(a.t(), out=o),
    "add of transposed inputs": lambda o: torch.add(a.t(), b.t(), out=o),
    "mul of a channels-last input": lambda o: torch.mul(cl, 2.0, out=o),
    "silu_backward transposed": lambda o: A.silu_backward.grad_input(a.t(), b.t(), grad_input=o),
    "threshold_backward transposed":
        lambda o: A.threshold_backward.grad_input(a.t(), b.t(), 0.0, grad_input=o),
    # not structured, but their C++ builds the iterator over out
    "soft_margin_loss_backward transposed":
        lambda o: A.soft_margin_loss_backward.grad_input(a.t(), b.t(), a.t(), 0, grad_input=o),
    "log_sigmoid_backward transposed":
        lambda o: A.log_sigmoid_backward.grad_input(a.t(), b.t(), a.t(), grad_input=o),
    "hardtanh_backward transposed":
        lambda o: A.hardtanh_backward.grad_input(a.t(), b.t(), -1.0, 1.0, grad_input=o),
    "neg of a contiguous input (control)": lambda o: torch.neg(a, out=o),
}
# (soft margin's exp is within tolerance of upstream's, not bitwise: its layout alone is compared)
layout_only = {"soft_margin_loss_backward transposed"}
res = {}
for name, fn in cases.items():
    keep = name not in layout_only
    res[name + ", empty out"] = into(fn, torch.empty(0), keep)
    res[name + ", non-empty out of another shape"] = into(fn, torch.empty(3), keep)
# an out of the right shape keeps its strides
res["add into a transposed out"] = into(lambda o: torch.add(a, b, out=o), torch.empty(7, 5).t())
res["add into a contiguous out"] = into(lambda o: torch.add(a.t(), b.t(), out=o), torch.empty(7, 5))
print(json.dumps(res))
'''


def test_resized_out_takes_the_iterators_layout():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert set(ours) == set(theirs) and len(theirs) == 22
    assert {k: v for k, v in ours.items() if v != theirs[k]} == {}
    # the rule is observable: a transposed input's resized out is not contiguous, the control's is
    assert theirs["neg of a transposed input, empty out"][1] == [1, 7]
    assert theirs["neg of a contiguous input (control), empty out"][1] == [7, 1]
