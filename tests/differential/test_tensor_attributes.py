"""torch.Tensor's public attributes are upstream's, no more and no fewer: what ours does not
have is refused by name when called, never answered by a placeholder upstream lacks (a removed
``names`` or ``is_hpu``). Names starting with an underscore are internal on both sides and
are not compared."""

from __future__ import annotations

from torchnative.testing import upstream

PROGRAM = r"""
import json, torch

t = torch.rand(2, 2)


def has(name):
    try:
        return hasattr(t, name)
    except Exception as e:  # a property that refuses this tensor (imag of a real one)
        return type(e).__name__


public = sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
print(json.dumps({"public": public, "on an instance": {n: has(n) for n in public}}))
"""


def test_public_tensor_attributes_as_upstream():
    ours, theirs = upstream.run_both(PROGRAM)
    extra = sorted(set(ours["public"]) - set(theirs["public"]))
    missing = sorted(set(theirs["public"]) - set(ours["public"]))
    assert not extra and not missing, (extra, missing)
    assert ours["on an instance"] == theirs["on an instance"]
    assert len(theirs["public"]) > 500  # control: the listing reached torch.Tensor's methods
