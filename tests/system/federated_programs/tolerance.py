"""The project's agreement rule for federated results: upstream's own float32 error, from the
same run in float64 (p90, floored at 4 float32 ulp of the values); a candidate must have a p90
error within it and a worst error no larger than upstream's worst plus it."""

from __future__ import annotations

import numpy as np


def within(candidate, f32, f64) -> tuple[bool, dict]:
    """Flat float64 vectors in; (agrees, the figures it was decided on)."""
    ref = np.asarray(f64, np.float64)
    err32 = np.abs(np.asarray(f32, np.float64) - ref)
    tol = max(float(np.percentile(err32, 90)), 4 * float(np.finfo(np.float32).eps) * float(np.abs(ref).max()))
    err = np.abs(np.asarray(candidate, np.float64) - ref)
    p90, worst = float(np.percentile(err, 90)), float(err.max())
    return p90 <= tol and worst <= float(err32.max()) + tol, {"p90": p90, "max": worst, "tol": tol,
                                                              "upstream_max": float(err32.max())}
