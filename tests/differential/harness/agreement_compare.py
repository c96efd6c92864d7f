"""Comparison helpers for tests whose program runs on both torches (``upstream.run_both``).

The program prints {case: result}; a result is {"dtype", "shape", "values"} (complex values as
[re, im] pairs), a list of such results, or {"error": type name, "message": text}. For each
float32/complex64 case the program also records the case "<name>@64": the same call on the
inputs widened to float64, which measures upstream's own error. A float32 element of ours agrees
when it is within the tolerance derived from upstream's float32-vs-float64 error (P90, floored at
a few ulp; testing.golden.tolerance), or no farther from upstream's float64 result than upstream's
float32 result is. float64 cases use the float32 tolerance carried over in ulps. Factorizations
and solves are only reproducible normwise (LAPACK's error bounds are normwise; a blocked and an
unblocked algorithm round differently): with ``normwise=True`` an element also agrees within the
same rtol relative to the output's largest magnitude. Where upstream disagrees with itself from
run to run (MKL's LAPACK under a loaded machine), ``again`` (a second upstream run) widens the
bar to that disagreement, as the golden harness's ``normwise`` does.
"""

from __future__ import annotations

import numpy as np

from torchnative.testing.golden import tolerance

_NARROW = {"float64": "float32", "complex128": "complex64"}


def leaves(result):
    return result if isinstance(result, list) else [result]


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
            again: dict | None = None) -> str | None:
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
        if again is not None and isinstance(again.get(name), (dict, list)):
            z = np.array(leaves(again[name])[i]["values"], np.float64)
            if z.shape == x.shape:
                spread = np.abs(x - z)[fin].max() if fin.any() else 0.0
                close |= np.abs(x - y) <= spread
        close |= ~fin
        if not close.all():
            j = int(np.flatnonzero(~close.ravel())[0])
            return (f"output {i}: element {j}: ours {y.ravel()[j]!r}, upstream {x.ravel()[j]!r} "
                    f"beyond rtol {tol.rtol:.3g} atol {tol.atol:.3g}")
    return None


# Executed by both interpreters before a test's cases: seeded inputs and the result encoding.
PRELUDE = r'''
import json, warnings
import numpy as np
import torch
warnings.simplefilter("ignore")

def enc(r):
    if isinstance(r, (tuple, list)):
        return [enc(x) for x in r]
    if not isinstance(r, torch.Tensor):
        r = torch.tensor(r)
    v = r.detach()
    if v.is_complex():
        v = torch.view_as_real(v.resolve_conj())
    return {"dtype": str(r.dtype).replace("torch.", ""), "shape": list(r.shape),
            "values": v.double().tolist() if v.dtype != torch.bool else v.tolist()}

RESULTS = {}

def case(name, fn, *arrays, widen=True):
    """Runs fn on torch tensors made from numpy arrays, in float32, float64 (and complex forms
    when the arrays are complex), plus float32's inputs widened to float64 ("@64")."""
    cplx = any(np.iscomplexobj(a) for a in arrays if isinstance(a, np.ndarray))
    kinds = (("complex64", "complex128") if cplx else ("float32", "float64"))
    for dt in kinds:
        tens = [torch.tensor(a, dtype=getattr(torch, dt)) if isinstance(a, np.ndarray) and
                a.dtype.kind in "fc" else (torch.tensor(a) if isinstance(a, np.ndarray) else a)
                for a in arrays]
        key = f"{name}.{'float32' if dt in ('float32', 'complex64') else 'float64'}"
        try:
            RESULTS[key] = enc(fn(*tens))
        except Exception as e:
            RESULTS[key] = {"error": type(e).__name__, "message": str(e)}
        if widen and dt in ("float32", "complex64"):
            wide = [t.to(torch.complex128 if t.is_complex() else torch.float64)
                    if isinstance(t, torch.Tensor) and t.is_floating_point() or
                    isinstance(t, torch.Tensor) and t.is_complex() else t for t in tens]
            try:
                RESULTS[key + "@64"] = enc(fn(*wide))
            except Exception as e:
                RESULTS[key + "@64"] = {"error": type(e).__name__, "message": str(e)}

def error(name, fn):
    try:
        fn()
        RESULTS[name] = {"error": "none", "message": "computed"}
    except Exception as e:
        RESULTS[name] = {"error": type(e).__name__, "message": str(e)}
'''
