"""Cases run on both torches, each in its own process, recorded as plain JSON.

A case is a Python expression; its record is the error (type and first line of the message) or
the result's kind, shape, dtype, device and, for tensors with data, the exact values. The cases
here are copies, shape computations and integer-valued arithmetic, so exact equality is
upstream's own float32 error (zero), not a guess.
"""
from __future__ import annotations

import json

from torchnative.testing.upstream import run_both

PRELUDE = r'''
import json, torch
import torch.nn.functional as F

def record(value):
    if isinstance(value, torch.Tensor):
        out = {"type": type(value).__name__, "shape": list(value.shape), "dtype": str(value.dtype),
               "device": str(value.device)}
        if value.device.type != "meta":
            out["values"] = value.detach().double().reshape(-1).tolist()
        return out
    if isinstance(value, (tuple, list)):
        return [record(v) for v in value]
    if isinstance(value, (int, float, bool, str)) or value is None:
        return value
    return type(value).__name__

def run(expr):
    try:
        return record(eval(expr, globals()))
    except Exception as exc:  # the error itself is what is compared
        return {"error": type(exc).__name__, "message": str(exc).splitlines()[0]}
'''


def records(cases: dict[str, str], setup: str = "") -> tuple[dict, dict]:
    """(ours, upstream): each case's record, keyed by name."""
    code = (PRELUDE + setup + "\nprint(json.dumps({k: run(v) for k, v in "
            + repr(cases) + ".items()}))\n")
    return run_both(code)


def assert_agree(cases: dict[str, str], setup: str = "") -> None:
    ours, theirs = records(cases, setup)
    bad = {k: {"ours": ours[k], "upstream": theirs[k]} for k in cases if ours[k] != theirs[k]}
    assert not bad, json.dumps(bad, indent=1)
