"""``torch._C._autograd._unsafe_set_version_counter`` (DDP's buffer broadcast hides its in-place
copy from autograd with it), compared with upstream in separate processes."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

needs_upstream = pytest.mark.skipif(not upstream.available(), reason="needs .venv-upstream")

PROGRAM = r"""
import json
import numpy as np
import torch
from torch.autograd.grad_mode import _unsafe_preserve_version_counter

set_vc = torch._C._autograd._unsafe_set_version_counter
out = {}

def attempt(name, fn):
    try:
        out[name] = fn()
    except Exception as e:
        out[name] = [type(e).__name__, str(e).splitlines()[0]]

a = torch.zeros(3)
v = a[1:]
a.add_(1)
set_vc((a,), (7,))
out["shared_with_view"] = [a._version, v._version]
set_vc([v], [np.int64(2)])
out["through_view"] = [a._version, v._version]
attempt("length", lambda: set_vc((a,), (1, 2)))
attempt("negative", lambda: set_vc((a,), (-1,)))
attempt("not_a_sequence", lambda: set_vc(a, 3))
attempt("not_tensors", lambda: set_vc((1,), (2,)))
attempt("not_ints", lambda: set_vc((a,), ("x",)))
attempt("empty", lambda: set_vc((), ()))
with torch.inference_mode():
    inf = torch.zeros(2)
attempt("inference", lambda: set_vc((inf,), (1,)))

# hiding an in-place change from autograd: backward then uses the changed value, unchecked
x = torch.tensor([0.5, -1.0], requires_grad=True)
y = x.exp()
z = y * 3
with _unsafe_preserve_version_counter(y):
    with torch.no_grad():
        y.mul_(2)
out["preserved_version"] = y._version
z.sum().backward()
out["grad_after_hidden_change"] = x.grad.tolist()

# the counter moved forward instead: autograd refuses, as it must
x2 = torch.tensor([0.5], requires_grad=True)
y2 = x2.exp()
z2 = y2 * 1
set_vc((y2,), (y2._version + 1,))
attempt("moved_forward", lambda: z2.sum().backward())
print(json.dumps(out))
"""


@needs_upstream
def test_unsafe_set_version_counter_agrees_with_upstream():
    ours, theirs = upstream.run_both(PROGRAM, timeout=600)
    assert ours == theirs
    # the program sees what it claims to: shared counters, refusals, and the hidden change
    assert theirs["shared_with_view"] == [7, 7] and theirs["through_view"] == [2, 2]
    assert theirs["length"] == ["RuntimeError", "tensors_len=1, versions_len=2"]
    assert theirs["moved_forward"][0] == "RuntimeError" and theirs["preserved_version"] == 0
    assert theirs["grad_after_hidden_change"][0] != pytest.approx(3 * 1.6487212707)
