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
        self.moved: list[Run] = []  # upstream's float32 runs under the other CPU profiles

    def case(self, name: str) -> dict:
        pre = name + "/"
        return {k[len(pre):]: v for k, v in self.arrays.items() if k.startswith(pre)}


def run(side: str, program: str, dtype: str, out_dir: Path, cases=(), timeout=1800,
        profile: str | None = None) -> Run:
    """``profile``: upstream under one of this CPU's other capability profiles (ATen, MKL and
    oneDNN code paths), to see how far upstream moves from itself."""
    out = out_dir / f"{program}-{side}-{dtype}{'-' + profile if profile else ''}.npz"
    if side == "ours":
        argv, env = [upstream.ours_python()], None
    else:
        argv = [str(upstream.UPSTREAM_PYTHON)]
        env = upstream.ecosystem_env() | (upstream.CPU_PROFILES[profile] if profile else {})
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


def _profile_calls(program: str, out_dir: Path, cases) -> list:
    return [lambda name=name: run("upstream", program, "float32", out_dir, cases, profile=name)
            for name in upstream.other_cpu_profiles()]


def disagreements(ours: dict, up32: dict, up64: dict, tol_from: dict | None = None,
                  moved: list | None = None) -> dict:
    """name -> why, for every array of a case that does not agree (missing ones included).

    ``tol_from`` maps an array whose float64 rerun is not the same computation (dropout draws
    other masks in float64) to the array whose upstream error sets its tolerance instead; such an
    array is held to that tolerance alone, without its own float64 values. ``moved``: the same
    case from upstream's other CPU profiles; where upstream moves from itself, that is allowed."""
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
        refs = {f"other{i}": m[k] for i, m in enumerate(moved or ()) if k in m and m[k].shape == u.shape}
        why = cmp.close(u, o.astype(np.float64), None if src != k else up64[k],
                        cmp.spread(u, refs, "float32"), tol)
        if why is None and not np.array_equal(np.isfinite(o), np.isfinite(u)):
            why = "non-finite elements differ"
        if why:
            bad[k] = why
    return bad


def sides(program: str, out_dir: Path, cases=(), profiles: bool = True) -> tuple:
    """(ours float32, upstream float32, upstream float64, [upstream float32 under each other CPU
    profile]; empty without ``profiles``): processes that share nothing, run at once."""
    ours, up32, up64, *moved = upstream.concurrently(
        lambda: run("ours", program, "float32", out_dir, cases),
        lambda: run("upstream", program, "float32", out_dir, cases),
        lambda: run("upstream", program, "float64", out_dir, cases),
        *(_profile_calls(program, out_dir, cases) if profiles else ()))
    return ours, up32, up64, moved


def three_runs(program: str, out_dir: Path, cases=()) -> tuple[Run, Run, Run]:
    """(ours float32, upstream float32, upstream float64): what ``disagreements`` compares;
    upstream's float32 run carries its reruns under the other CPU profiles (``Run.moved``)."""
    ours, up32, up64, up32.moved = sides(program, out_dir, cases)
    return ours, up32, up64


def check(runs: tuple[Run, Run, Run], case: str) -> None:
    """Assert that ``case`` ran on both sides and that ours agrees with upstream."""
    ours, up32, up64 = runs
    assert case not in up32.refused, up32.refused.get(case)
    assert case not in ours.refused, ours.refused[case]
    bad = disagreements(ours.case(case), up32.case(case), up64.case(case),
                        moved=[m.case(case) for m in up32.moved])
    assert not bad, bad


def runs_fixture(program: str, cases=()):
    """A module-scoped pytest fixture holding ``three_runs`` of ``program`` (its ``cases``)."""
    import pytest

    @pytest.fixture(scope="module")
    def runs(tmp_path_factory):
        if not upstream.available():
            pytest.skip("upstream environment missing")
        return three_runs(program, tmp_path_factory.mktemp("-".join([program, *cases])), cases)

    return runs
