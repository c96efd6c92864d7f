"""tensordot over a contracted dimension of size 1 on one side sums the other side there first, in
the inputs' dtype (a plain sum would promote int32 to int64 and the matrix product would refuse
the mixed pair). Compared with upstream in separate processes."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, torch
out = {}
for dt in (torch.int32, torch.int16, torch.int64, torch.float32):
    a = (torch.arange(6) % 5 - 2).to(dt).reshape(1, 2, 3)
    b = (torch.arange(12) % 7 - 3).to(dt).reshape(2, 3, 2)
    for dims in (([0, 1], [2, 0]), ([1, 2], [0, 1]), ([0], [0])):
        try:
            r = torch.tensordot(a, b, dims=dims)
            out[f"{dt} {dims}"] = [str(r.dtype), r.tolist()]
        except RuntimeError as e:
            out[f"{dt} {dims}"] = ["RuntimeError", str(e)]
print(json.dumps(out))
'''


def test_tensordot_broadcast_dims_match_upstream():
    if not upstream.available():
        upstream.missing("upstream torch environment (.venv-upstream)")
    ours, theirs = upstream.run_both(PROGRAM)
    # control: the cases exercise the size-1 path and keep int32 (a promoting sum would not)
    assert theirs["torch.int32 ([0, 1], [2, 0])"][0] == "torch.int32"
    assert theirs["torch.int16 ([0], [0])"][0] == "torch.int16"
    assert ours == theirs
