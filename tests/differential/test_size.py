"""torch.Size against upstream's: indexing, slicing (a Size), concatenation, repetition, repr,
hashing and the constructor's checks."""

from __future__ import annotations

from torchnative.testing import upstream

PROGRAM = r"""
import json, torch
s = torch.zeros(2, 3, 4, 5).shape
out = []
for item in (0, -1, slice(None, -1), slice(1, None), slice(None, None, -1), slice(5, 9),
             slice(0, 4, 2)):
    r = s[item]
    out.append([type(r).__name__, repr(r)])
for r in (s + (7,), (7,) + s, s * 2, 2 * s, s[1:] + s[:1]):
    out.append([type(r).__name__, repr(r)])
out.append([s.numel(), s[:2].numel(), hash(s[:-1]) == hash((2, 3, 4)), s[:-1] == (2, 3, 4),
            list(s[::2]), str(s[1:3]), torch.Size([2, 3])[1:] == torch.Size([3])])
for bad in (lambda: s[4], lambda: torch.Size(["a"]), lambda: torch.Size([1.5]), lambda: s["x"]):
    try:
        bad()
        out.append("no error")
    except Exception as e:
        out.append([type(e).__name__, str(e)])
print(json.dumps(out))
"""


def test_size_as_upstream():
    ours = upstream.run_json_ours(PROGRAM)
    assert ours == upstream.run_json(PROGRAM)
    assert ours[2] == ["Size", "torch.Size([2, 3, 4])"]   # a slice stays a Size
