"""``torch.range`` (deprecated upstream, inclusive of ``end``) against upstream: the accumulate
type per dtype, the truncated size, the checks' messages, ``out=`` (contiguous or not) and the
default dtype. Integral dtypes with a step below 1 are left out: upstream divides by the
truncated step before checking it and the process dies of SIGFPE."""

from __future__ import annotations

import pytest

import sides
from torchnative.testing.upstream import available

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import warnings
warnings.simplefilter("ignore")
ints = (torch.int64, torch.int32, torch.uint8)
out = {}
for args in [(0, 2), (0, 2, 0.5), (0.1, 10, 0.1), (1, -1, -0.25), (-3.7, 3.7, 0.7), (0, 1e5, 1),
             (0, 10, 3), (5, 5), (0, 10, -1), (0, 10, 0), (0, float("inf")), (float("nan"), 1),
             (0.5, 7.9, 1.3), (1, 300, 7), (0.1, 100, 0.37)]:
    for dt in (None, torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8,
               torch.float16, torch.bfloat16, torch.bool, torch.complex64):
        if dt in ints and len(args) > 2 and abs(args[2]) < 1:
            continue
        out[f"{args} {dt}"] = outcome(lambda: torch.range(*args, dtype=dt), bits=True)
out["out float64"] = outcome(lambda: torch.range(0, 1, 0.1, out=torch.zeros(3, dtype=torch.float64)), bits=True)
out["out strided"] = outcome(lambda: torch.range(0, 4, out=torch.zeros(10)[::2]), bits=True)
out["aten range"] = outcome(lambda: torch.ops.aten.range(0, 3), bits=True)
out["aten range.out_"] = outcome(lambda: torch.ops.aten.range.out_(0, 3, out=torch.empty(0)), bits=True)
out["requires_grad"] = outcome(lambda: torch.range(0, 3, requires_grad=True).requires_grad)
print(json.dumps(out))
'''


def test_range_agrees_with_upstream():
    ours, theirs = sides.on_both(PROGRAM)
    assert ours.keys() == theirs.keys()
    assert sum("inconsistent with step sign" in str(v) for v in theirs.values()) >= 5
    wrong = sides.differing(ours, theirs)
    assert wrong == {}
