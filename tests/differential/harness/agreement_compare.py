"""Comparison helpers for tests whose program runs on both torches (``upstream.run_both``).

The program (a snippet run by ``sides.on_both``) records its cases with the prelude's ``case`` and
``error`` and prints ``RESULTS``: {case: result}, a result being a tensor or a sequence as
``prelude.encode`` writes it (complex values as [re, im] pairs), or {"error": type name,
"message": text}. For each float32/complex64 case ``case`` also records "<name>@64": the same call on the
inputs widened to float64, which measures upstream's own error. A float32 element of ours agrees
when it is within the tolerance derived from upstream's float32-vs-float64 error (P90, floored at
a few ulp; testing.golden.tolerance), or no farther from upstream's float64 result than upstream's
float32 result is. float64 cases use the float32 tolerance carried over in ulps. Factorizations
and solves are only reproducible normwise (LAPACK's error bounds are normwise; a blocked and an
unblocked algorithm round differently): with ``normwise=True`` an element also agrees within the
same rtol relative to the output's largest magnitude. Where upstream disagrees with itself from
run to run (MKL's LAPACK, even on one thread: 300 calls of its lstsq of a 5x3 matrix land on
four or five results, up to 311 ulp apart), ``again`` (upstream's reruns) widens the bar to that
disagreement, as the golden harness's ``normwise`` does; so do upstream's reruns under
this machine's other CPU profiles (``sides.on_both(..., profiles=True)``): how far upstream's
numbers move from themselves across CPUs, at the output's largest element (docs/cpu.md).
"""

from __future__ import annotations

import numpy as np

import prelude
from torchnative.testing.golden import tolerance

_NARROW = {"float64": "float32", "complex128": "complex64"}


def leaves(result):
    """The tensors of an encoded result (``prelude.encode``), in order; an error as itself."""
    return [result] if "error" in result else list(prelude.tensors(result))


def arrays(result):
    return [np.array(r["values"], dtype=np.float64) for r in leaves(result)]


def tolerance_for(up: dict, name: str, dtype: str):
    """The tolerance of case ``name`` (upstream's float32 vs float64 error, carried to dtype)."""
    base = name.rsplit(".", 1)[0]
    low, high = up.get(f"{base}.float32"), up.get(f"{base}.float32@64")
    if low is None or high is None or "error" in leaves(low)[0]:
        tol32 = tolerance.floor("float32")
    else:
        tol32 = tolerance.derive(list(zip(arrays(low), arrays(high))), "float32")
    if dtype in ("float32", "complex64"):
        return tol32
    return tolerance.scaled(tol32, "float32", "float64")


def compare(ours: dict, up: dict, name: str, normwise: bool = False,
            again: list | None = None) -> str | None:
    """None when case ``name`` agrees, else the first problem."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf where both are infinite
        return _compare(ours, up, name, normwise, again)


def _compare(ours: dict, up: dict, name: str, normwise: bool, again) -> str | None:
    u, o = up[name], ours[name]
    if isinstance(u, dict) and "error" in u:
        if not (isinstance(o, dict) and "error" in o):
            return f"computed where upstream raised {u['error']}: {u['message']}"
        if (o["error"], o["message"]) != (u["error"], u["message"]):
            return f"raised {o['error']}: {o['message']!r}, upstream {u['error']}: {u['message']!r}"
        return None
    if isinstance(o, dict) and "error" in o:
        return f"raised {o['error']}: {o['message']}"
    ul, ol = leaves(u), leaves(o)
    if len(ul) != len(ol):
        return f"{len(ol)} outputs, upstream {len(ul)}"
    wide = up.get(f"{name}@64")
    for i, (a, b) in enumerate(zip(ul, ol)):
        if (a["dtype"], a["shape"]) != (b["dtype"], b["shape"]):
            return f"output {i}: {b['dtype']} {b['shape']}, upstream {a['dtype']} {a['shape']}"
        x, y = np.array(a["values"], np.float64), np.array(b["values"], np.float64)
        if a["dtype"] in ("int32", "int64", "bool"):
            if not np.array_equal(x, y):
                return f"output {i}: {y.ravel()[:6]} upstream {x.ravel()[:6]}"
            continue
        if not np.array_equal(np.isnan(x), np.isnan(y)):
            return f"output {i}: NaN at other positions"
        fin = np.isfinite(x)
        if not np.array_equal(x[~fin & ~np.isnan(x)], y[~fin & ~np.isnan(x)]):
            return f"output {i}: infinities differ"
        tol = tolerance_for(up, name, a["dtype"])
        close = np.abs(x - y) <= tol.atol + tol.rtol * np.abs(x)
        if wide is not None:
            z = np.array(leaves(wide)[i]["values"], np.float64)
            close |= np.abs(y - z) <= np.abs(x - z) + tol.atol + tol.rtol * np.abs(z)
        if normwise and fin.any():
            close |= np.abs(x - y) <= tol.atol + tol.rtol * np.abs(x[fin]).max()
        spread = 0.0
        for other in list(again or ()) + list(getattr(up, "moved", ())):
            res = other.get(name)
            if isinstance(res, (dict, list)) and not (isinstance(res, dict) and "error" in res):
                z = np.array(leaves(res)[i]["values"], np.float64)
                if z.shape == x.shape and fin.any():
                    spread = max(spread, float(np.max(np.abs(x - z), where=fin & np.isfinite(z),
                                                      initial=0.0)))
        if spread:
            close |= np.abs(x - y) <= tol.atol + tol.rtol * np.abs(x) + spread
        close |= ~fin
        if not close.all():
            j = int(np.flatnonzero(~close.ravel())[0])
            return (f"output {i}: element {j}: ours {y.ravel()[j]!r}, upstream {x.ravel()[j]!r} "
                    f"beyond rtol {tol.rtol:.3g} atol {tol.atol:.3g}")
    return None
