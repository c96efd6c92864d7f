"""``torch.tensor`` of Python ints past int64 as upstream unpacks them: unsigned 64-bit into
uint64 (a negative int or one past 2**64 raises upstream's OverflowError), a double into floating
dtypes, int64's ValueError into the other integer dtypes and when the dtype is inferred; against
upstream torch 2.13.0 in separate processes."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, torch
r = []
for d in [torch.uint64, torch.int64, torch.float32, torch.uint32, torch.float64, torch.complex64, None]:
    for v in [2**63 + 5, 2**64 - 1, 2**64, -1, [[1, 2**63], [3, 4]], [1, 2]]:
        try: r.append(str(torch.tensor(v if isinstance(v, list) else [v], dtype=d).tolist()))
        except Exception as e: r.append(type(e).__name__ + " " + str(e))
print(json.dumps(r))
'''


def test_big_python_ints_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert theirs[0] == "[9223372036854775813]" and theirs[3].startswith("OverflowError")
    assert ours == theirs
