"""soft_margin_loss computes as Loss.cpp does, each step (neg, mul_, exp_, log1p_) rounded to the
input's dtype: in float16 exp(-x*y) overflows to inf where float32 arithmetic would not, and the
loss is inf as upstream's. Values compared bit for bit with upstream, in separate processes."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json
import torch
x = torch.tensor([-8.4765625, -1.765625, -4.32421875, -2.400390625, -7.94921875])
y = torch.tensor([3.611328125, -8.0703125, -0.57373046875, 3.12890625, -3.033203125])
res = {}
for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    for red in ("none", "mean", "sum"):
        r = torch.nn.functional.soft_margin_loss(x.to(dt), y.to(dt), reduction=red)
        res[f"{dt}/{red}"] = [str(dt), r.double().reshape(-1).tolist()]
print(json.dumps(res))
'''


def test_soft_margin_loss_rounds_each_step_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert theirs["torch.float16/none"][1][0] == float("inf")  # exp(30.6) overflows float16
    assert theirs["torch.float32/none"][1][0] != float("inf")
    assert ours == theirs
