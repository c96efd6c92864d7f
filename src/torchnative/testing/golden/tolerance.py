"""Floating tolerances derived from upstream's own error, never chosen by hand.

For every floating sample, generation reran upstream's call with the floating inputs widened to
float64. Upstream's own error on an element is |low - high| (low = its result in the sample's dtype,
high = the float64 rerun). Per op and dtype:

    rtol = max(P90 of |low - high| / |high|,                 FLOOR_ULPS * eps(dtype))
    atol = max(P90 of the errors rtol does not explain,      FLOOR_ULPS * smallest normal(dtype))

float64 and complex128 have nothing wider to rerun in, so their samples are rerun narrowed to
float32 (complex64): that error, derived the same way, is carried over to float64 in ulps (the error
an algorithm makes, in units of its precision, is a property of the algorithm and the inputs'
conditioning, not of the width). Without such reruns, the op's float32 tolerance is carried over.

Where upstream disagrees with itself between runs (generate.py's "again" reruns), the largest such
disagreement seen for the op and dtype, relative to the output's largest magnitude, is accepted too
(``normwise``): LAPACK-style results are only reproducible normwise, and upstream sets the bar.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import codec

PERCENTILE = 90
FLOOR_ULPS = 4  # "a few ulp": two correctly rounded implementations may differ by ~1-2 ulp
SCALED_FROM = {"float64": "float32", "complex128": "complex64"}


@dataclass(frozen=True)
class Tol:
    rtol: float
    atol: float
    source: str  # how it was obtained, for the report
    n: int = 0   # elements it was derived from
    normwise: float = 0.0  # nondeterministic ops: upstream's largest run-to-run max|diff| / max|value|

    def ulps(self, dtype: str) -> tuple[float, float]:
        eps, tiny = codec.finfo(dtype)
        return self.rtol / eps, self.atol / tiny


def floor(dtype: str) -> Tol:
    eps, tiny = codec.finfo(dtype)
    return Tol(FLOOR_ULPS * eps, FLOOR_ULPS * tiny, "floor")


def derive(pairs: list[tuple[np.ndarray, np.ndarray]], dtype: str) -> Tol:
    """Tolerance from (low, high) float64 arrays of upstream's own results (finite elements only)."""
    base = floor(dtype)
    if not pairs:
        return base
    low = np.concatenate([p[0].ravel() for p in pairs])
    high = np.concatenate([p[1].ravel() for p in pairs])
    keep = np.isfinite(low) & np.isfinite(high)
    low, high = low[keep], high[keep]
    if low.size == 0:
        return base
    err, mag = np.abs(low - high), np.abs(high)
    nz = mag > 0
    rtol = max(float(np.percentile(err[nz] / mag[nz], PERCENTILE)) if nz.any() else 0.0, base.rtol)
    rest = err[err > rtol * mag]
    atol = max(float(np.percentile(rest, PERCENTILE)) if rest.size else 0.0, base.atol)
    return Tol(rtol, atol, f"p{PERCENTILE} of upstream {dtype} vs float64", int(low.size))


def scaled(tol: Tol, src: str, dst: str) -> Tol:
    """Carry ``tol`` from dtype ``src`` to ``dst`` in ulps (floored at dst's own few ulp)."""
    r_ulps, a_ulps = tol.ulps(src)
    eps, tiny = codec.finfo(dst)
    base = floor(dst)
    return Tol(max(r_ulps * eps, base.rtol), max(a_ulps * tiny, base.atol),
               f"{src} tolerance in ulps ({tol.source})", tol.n)


def real_view(values: np.ndarray) -> np.ndarray:
    """float64 values; complex as (..., 2) real/imaginary pairs so each part is checked."""
    if np.iscomplexobj(values):
        return np.stack([values.real, values.imag], axis=-1).astype(np.float64)
    return values.astype(np.float64)


class OpTolerances:
    """Tolerances of one OpInfo entry, per dtype, from the reruns stored in its case file."""

    def __init__(self, doc: dict, arrays: dict):
        cases = {c["id"]: c for c in doc["cases"]}
        self.pairs: dict[str, list] = {}   # dtype -> [(low, high)] measured in that dtype
        self.spread: dict[str, float] = {}  # dtype -> normwise run-to-run spread (nondeterministic ops)
        for s in doc["samples"]:
            if s.get("random") or s.get("undefined") or "ref_case" not in s:
                continue
            ref = cases[s["ref_case"]]["upstream"]
            if not ref.get("ok"):
                continue
            if s.get("high") is not None and s["dtype"] not in codec.NARROW:  # low = upstream in the sample's dtype, high = float64 rerun
                self.pairs.setdefault(s["dtype"], []).extend(float_leaves(ref["value"], s["high"], arrays))
            for again in s.get("again") or []:  # upstream against itself, normwise
                for lo, hi in float_leaves(again, ref["value"], arrays):
                    scale = np.nanmax(np.abs(np.where(np.isfinite(hi), hi, np.nan)), initial=0.0)
                    with np.errstate(invalid="ignore"):
                        dev = np.nanmax(np.where(np.isfinite(lo) & np.isfinite(hi), np.abs(lo - hi), np.nan),
                                        initial=0.0)
                    if scale > 0:
                        self.spread[s["dtype"]] = max(self.spread.get(s["dtype"], 0.0), float(dev / scale))
            if s.get("narrow") is not None:  # float64 sample: its float32 rerun against itself
                narrow = codec.NARROW[s["dtype"]]
                self.pairs.setdefault(narrow + "<" + s["dtype"], []).extend(
                    float_leaves(s["narrow"], ref["value"], arrays))
        self.cache: dict[str, Tol] = {}

    def __call__(self, dtype: str) -> Tol:
        if dtype not in self.cache:
            narrowed = f"{codec.NARROW.get(dtype)}<{dtype}"
            if dtype in self.pairs:
                self.cache[dtype] = derive(self.pairs[dtype], dtype)
            elif narrowed in self.pairs:  # this dtype's own samples, measured one step down
                src = codec.NARROW[dtype]
                self.cache[dtype] = scaled(derive(self.pairs[narrowed], src), src, dtype)
            elif dtype in SCALED_FROM and SCALED_FROM[dtype] in self.pairs:
                src = SCALED_FROM[dtype]
                self.cache[dtype] = scaled(self(src), src, dtype)
            else:
                self.cache[dtype] = floor(dtype)
            if dtype in self.spread:
                t = self.cache[dtype]
                self.cache[dtype] = Tol(t.rtol, t.atol, t.source + "; upstream's run-to-run spread", t.n,
                                        self.spread[dtype])
        return self.cache[dtype]


def float_leaves(low: dict, high: dict, arrays: dict):
    """Parallel floating tensor leaves of two encoded results of the same structure."""
    if low.get("T") != high.get("T"):
        return
    if low["T"] == "tensor":
        if codec.is_float_name(low["dtype"]) and low["shape"] == high["shape"]:
            yield (real_view(codec.to_numpy_values(low, arrays[low["data"]])),
                   real_view(codec.to_numpy_values(high, arrays[high["data"]])))
    elif low["T"] in ("list", "tuple") and len(low["v"]) == len(high["v"]):
        for a, b in zip(low["v"], high["v"]):
            yield from float_leaves(a, b, arrays)
