"""Programs whose every result must equal upstream's bit for bit: kernels that reproduce
upstream's own loop (its order of operations, its rounding) rather than approximate it.

A program prints a JSON object of named results (lists of floats, records compared as they
are, or an exception's "Type: message"); ``run`` gives (ours, upstream) and ``mismatches`` names each key whose values
differ anywhere (NaN equals NaN; -0.0 and 0.0 are told apart by their sign)."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.testing import upstream


RECORDING = """
import json, torch, torch.nn.functional as F
out = {}
def rec(name, fn):
    try:
        out[name] = fn().double().tolist()
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
"""


def program(body: str) -> str:
    """``body`` run with ``rec(name, thunk)`` recording a tensor's values (as float64) or the
    error it raised, printed as the JSON object ``run`` reads."""
    return RECORDING + body + "\nprint(json.dumps(out))\n"


def run(code: str):
    if not upstream.available():
        upstream.missing("the upstream comparison environment")
    ours, up = upstream.run_both(code)
    assert set(ours) == set(up), sorted(set(ours) ^ set(up))
    return ours, up


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    try:
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    except (ValueError, TypeError):  # a record of mixed fields (dtype, shape, values as text)
        return a == b
    if x.shape != y.shape:
        return False
    eq = (x == y) & (np.signbit(x) == np.signbit(y))
    return bool(np.all(eq | (np.isnan(x) & np.isnan(y))))


def mismatches(ours: dict, up: dict) -> list[str]:
    return [k for k in up if not _same(ours[k], up[k])]


def distinct(up: dict, a: str, b: str) -> bool:
    """Control: two upstream results a test tells apart (so agreeing with one is not agreeing
    with any)."""
    return not _same(up[a], up[b])


__all__ = ["program", "run", "mismatches", "distinct", "pytest"]
