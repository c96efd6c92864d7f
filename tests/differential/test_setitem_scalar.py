"""``t[index] = <Python number>`` as upstream's setitem: the number becomes a 0-dim tensor of
t's dtype filled as one element is (a float16 overflow stores inf, as upstream), lifted
(``lift_fresh``), then copied or filled into the indexed part; the operators a dispatch mode
sees and the values, against upstream torch 2.13.0 in separate processes."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, torch
from torch.utils._python_dispatch import TorchDispatchMode
class M(TorchDispatchMode):
    def __init__(s): super().__init__(); s.ops = []
    def __torch_dispatch__(s, f, t, a, k=None):
        s.ops.append(str(f)); return f(*a, **(k or {}))
r = {}
t = torch.zeros(2, 3)
for name, idx, v in [("elem", (0, 1), 1.0), ("row", 0, 2.0), ("tensor_index", torch.tensor([0]), 3.0),
                     ("column", (slice(None), 1), 4), ("mask", torch.tensor([[True, False, True]] * 2), 5.5)]:
    with M() as m:
        t[idx] = v
    r[name] = [m.ops, t.tolist()]
h = torch.zeros(2, 3, dtype=torch.half)
def tr(f):
    try:
        f(); return str(h.tolist())
    except Exception as e:
        return type(e).__name__ + ": " + str(e)
r["half"] = [tr(lambda: h.__setitem__((0, 1), 1e6)), tr(lambda: h.__setitem__(0, 1e6)),
             tr(lambda: h.__setitem__((slice(None), 1), -1e6))]
i8 = torch.zeros(3, dtype=torch.int8)
r["int8"] = [str((lambda: (i8.__setitem__(0, 2.7), i8.tolist())[1])()), tr(lambda: i8.__setitem__(1, 300))]
print(json.dumps(r))
'''


def test_setitem_with_a_number_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert "aten.lift_fresh.default" in theirs["elem"][0]  # the cases see what they claim
    assert ours == theirs
