"""Verdicts for the OpInfo-under-vmap results (vmap_opinfo.py): per op, a float32 tolerance
derived from upstream's own float32-vs-float64 error on these samples (golden.tolerance.derive:
p90, floored at a few ulp); each sample agrees when every output element of ours lies within
it of upstream's float32 result (NaN where upstream has NaN, integers and bools exactly)."""

from __future__ import annotations

import numpy as np

from torchnative.testing.golden.tolerance import floor

_F64 = floor("float64")  # outputs asked for in float64: a few ulp of it


def _pairs(cases):
    out = {}
    for c in cases:
        if "low" in c and "high" in c:
            for (shape, dt, lo), (_, _, hi) in zip(c["low"], c["high"]):
                if dt in ("float32", "complex64"):
                    out.setdefault(c["op"], []).append((np.array(lo, float), np.array(hi, float)))
    return out


def _agrees(ours, theirs, high, tol) -> bool:
    if len(ours) != len(theirs):
        return False
    for k, ((s1, d1, v1), (s2, d2, v2)) in enumerate(zip(ours, theirs)):
        if s1 != s2 or d1 != d2:
            return False
        a, b = np.array(v1, float), np.array(v2, float)
        if d1 in ("float64", "complex128"):  # a float32 input's result asked for in float64
            if not np.allclose(a, b, rtol=_F64.rtol, atol=_F64.atol, equal_nan=True):
                return False
            continue
        if d1 not in ("float32", "complex64"):
            if not np.array_equal(a, b, equal_nan=True):
                return False
            continue
        h = np.array(high[k][2], float) if high is not None else b
        nan = np.isnan(b)
        if not np.array_equal(np.isnan(a), nan):
            return False
        same_inf = np.isinf(b) & (a == b)
        ok = nan | same_inf | (np.abs(a - b) <= tol.atol + tol.rtol * np.abs(h))
        if not ok.all():
            return False
    return True


def _as_accurate(ours, theirs, high) -> bool:
    """Every float output of ours no farther from upstream's float64 rerun than upstream's own
    float32 result is at its worst element (accumulation order differs, accuracy does not)."""
    if high is None or len(ours) != len(theirs):
        return False
    for (s1, d1, v1), (s2, d2, v2), (_, _, vh) in zip(ours, theirs, high):
        if s1 != s2 or d1 != d2:
            return False
        a, b, h = (np.array(v, float) for v in (v1, v2, vh))
        if d1 in ("float64", "complex128"):
            continue  # checked by _agrees
        if d1 not in ("float32", "complex64"):
            if not np.array_equal(a, b, equal_nan=True):
                return False
            continue
        if a.size == 0:
            continue
        fin = np.isfinite(b) & np.isfinite(h)
        if not np.array_equal(np.isfinite(a), np.isfinite(b)) or not fin.any():
            return False
        if np.abs(a - h)[fin].max() > np.abs(b - h)[fin].max():
            return False
    return True


# outputs whose values upstream leaves undefined: only shape and dtype are compared
UNDEFINED = {"empty_like", "empty", "new_empty", "new_empty_strided", "empty_strided",
             "empty_permuted"}


def _same_geometry(ours, theirs) -> bool:
    return [o[:2] for o in ours] == [t[:2] for t in theirs]


def verdicts(cases: list, ours: list) -> dict:
    """(op, n) -> 'agrees' | 'close' (beyond the p90 tolerance, as accurate as upstream) |
    'errors as upstream' | 'diverges' | 'ours errors: ...' | 'upstream errors'"""
    from torchnative.testing.golden.tolerance import derive

    tols = {op: derive(p, "float32") for op, p in _pairs(cases).items()}

    mine = {(r["op"], r["n"]): r for r in ours}
    out = {}
    for c in cases:
        key = (c["op"], c["n"])
        r = mine.get(key, {"err": "no result"})
        if "err" in c:
            out[key] = "errors as upstream" if "err" in r else "upstream errors"
        elif "err" in r:
            out[key] = "ours errors: " + r["err"]
        else:
            tol = tols.get(c["op"], floor("float32"))
            if c["op"] in UNDEFINED:
                out[key] = "agrees" if _same_geometry(r["low"], c["low"]) else "diverges"
            elif _agrees(r["low"], c["low"], c.get("high"), tol):
                out[key] = "agrees"
            elif _as_accurate(r["low"], c["low"], c.get("high")):
                out[key] = "close"
            else:
                out[key] = "diverges"
    return out
