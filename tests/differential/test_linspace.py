"""torch.linspace in float32/float64 bit for bit: upstream's scalar loop computes the step in the
dtype and fills the first half forwards from start and the rest backwards from end, each
``a * b + c`` contracted as its build does (checked here at the capability in force; the same
bits hold under ATEN_CPU_CAPABILITY=default)."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import available, run_both

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import json, torch
out = {}
for dt in (torch.float32, torch.float64):
    for a, b, n in [(-3, 3, 64), (0, 1, 7), (0.1, 7.3, 1000), (-1e3, 2.5, 33), (5, -5, 17),
                    (0, 1, 1), (0, 1, 2), (0, 1, 0), (1e-3, 1e7, 40000), (2, 2, 9), (0, 1, 100003)]:
        out[f"{dt} {a} {b} {n}"] = torch.linspace(a, b, n, dtype=dt).tolist()
print(json.dumps(out))
'''


def test_linspace_is_bit_identical_to_upstream():
    ours, theirs = run_both(PROGRAM)
    assert ours.keys() == theirs.keys()
    wrong = {k: sum(x != y for x, y in zip(ours[k], theirs[k])) for k in theirs
             if ours[k] != theirs[k]}
    assert wrong == {}
