"""Running an ecosystem program on our torch and upstream's, and comparing what came back.

Ours runs in float32; upstream runs in float32 and in float64. An array agrees when it is within
upstream's own float32 error (the p90 of its float32-vs-float64 error, floored at a few ulp:
``torchnative.testing.golden.tolerance``); integer arrays (indices kept, argmax positions) must be
identical. The upstream side runs in upstream's own interpreter with only our ``src`` on its path,
and the program records which ``torch._C`` it ran on, so a test can prove upstream was upstream.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp, tolerance

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "harness.py"


class Run:
    def __init__(self, arrays: dict, info: dict):
        self.arrays, self.info = arrays, info
        self.refused = info["refused"]

    def case(self, name: str) -> dict:
        pre = name + "/"
        return {k[len(pre):]: v for k, v in self.arrays.items() if k.startswith(pre)}


def run(side: str, program: str, dtype: str, out_dir: Path, cases=(), timeout=1800) -> Run:
    out = out_dir / f"{program}-{side}-{dtype}.npz"
    if side == "ours":
        argv, env = [upstream.ours_python()], None
    else:
        argv = [str(upstream.UPSTREAM_PYTHON)]
        env = upstream.upstream_env()
    proc = subprocess.run(argv + [str(HARNESS), program, dtype, str(out), *cases],
                          capture_output=True, text=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{side} run of {program} failed:\n{proc.stderr[-4000:]}")
    with np.load(out) as z:
        arrays = {k: z[k] for k in z.files}
    info = json.loads(out.with_suffix(".json").read_text())
    if side == "upstream" and not str(info["torch_C"]).endswith(".so"):
        raise RuntimeError(f"the upstream side did not run upstream's compiled torch._C: {info['torch_C']}")
    return Run(arrays, info)


def disagreements(ours: dict, up32: dict, up64: dict, tol_from: dict | None = None) -> dict:
    """name -> why, for every array of a case that does not agree (missing ones included).

    ``tol_from`` maps an array whose float64 rerun is not the same computation (dropout draws
    other masks in float64) to the array whose upstream error sets its tolerance instead; such an
    array is held to that tolerance alone, without its own float64 values."""
    bad = {}
    tol_from = tol_from or {}
    for k, u in up32.items():
        o = ours.get(k)
        if o is None:
            bad[k] = "missing on ours"
            continue
        if u.dtype.kind in "iub":
            if o.shape != u.shape or not np.array_equal(o, u):
                bad[k] = f"integers differ: {o.ravel()[:12].tolist()} vs {u.ravel()[:12].tolist()}"
            continue
        src = tol_from.get(k, k)
        tol = tolerance.derive([(up32[src], up64[src])], "float32")
        why = cmp.close(u, o.astype(np.float64), None if src != k else up64[k], 0.0, tol)
        if why is None and not np.array_equal(np.isfinite(o), np.isfinite(u)):
            why = "non-finite elements differ"
        if why:
            bad[k] = why
    return bad
