"""Shared machinery of the kernel test files that replay snippet cases on upstream torch and on
ours (test_kernels_*.py, test_nn_ops_*.py, test_ops_tail.py), bound at module level by
``golden_suite``.

A case is (name, family, setup, expression, flags), run by ``prelude.run_case`` on both sides
(flags: ``trace`` also compares the operators __torch_dispatch__ sees, ``seed``, ``nograd``,
``exact``: no float64 rerun); upstream runs every case once per session in its own dtype and
again with floating inputs widened to float64 (``prelude.replay``), which measures upstream's
own error. Per (family, dtype) the tolerance is derived from that error (``golden.tolerance``); a
value passes by the golden harness's own rule (``compare.close``): within it of upstream's
(widened by how far upstream's own result moves under this machine's other CPU profiles,
``upstream.CPU_PROFILES``), or no farther from the float64 answer than upstream's own. Integers, booleans, shapes, dtypes, strides, NaN/inf positions, raised
exception types and messages compare exactly.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import prelude
import sides
from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp, tolerance

# ------------------------------------------------------------------------------ running


def leaves(d, arrays):
    """(record, values) of each tensor in an encoded result."""
    for t in prelude.tensors(d):
        yield t, arrays[t["data"]]


def flat(d):
    if d["T"] == "seq":
        for x in d["v"]:
            yield from flat(x)
    elif d["T"] == "traced":
        yield from flat(d["v"])
    else:
        yield d


def float64_tol(pairs32, factor=2):
    """float64 has no wider rerun to rescue an element by, so its bound is the worst of
    upstream's float32 error (not P90), in units of eps (rounding error scales with eps, relative
    and absolute alike), times ``factor`` (2: |ours - upstream| <= |ours - exact| +
    |upstream - exact|)."""
    base = tolerance.floor("float64")
    ratio = np.finfo(np.float64).eps / np.finfo(np.float32).eps
    if not pairs32:
        return base
    low = np.concatenate([p[0].ravel() for p in pairs32])
    high = np.concatenate([p[1].ravel() for p in pairs32])
    keep = np.isfinite(low) & np.isfinite(high)
    err, mag = np.abs(low - high)[keep], np.abs(high)[keep]
    rtol = tolerance.derive(pairs32, "float32").rtol
    atol = float(np.max(err - rtol * mag, initial=0.0))
    return tolerance.Tol(max(factor * rtol * ratio, base.rtol),
                         max(factor * atol * ratio, base.atol),
                         f"{factor} x upstream's float32 error bound in eps units", int(low.size))


def _prefixed(d, prefix):
    """An encoded result whose array keys carry ``prefix``."""
    if isinstance(d, dict):
        return {k: (prefix + v if k == "data" else _prefixed(v, prefix)) for k, v in d.items()}
    if isinstance(d, list):
        return [_prefixed(x, prefix) for x in d]
    return d


class Golden:
    """One test module's cases: upstream's results (``run_upstream``, once per module), ours
    (``ours``), and the judgement (``compare``). ``f64_factor``: families whose float64 bound
    takes a larger multiple of upstream's float32 error (documented where they are listed)."""

    def __init__(self, cases: list, f64_factor: dict | None = None):
        self.cases = cases
        self.f64_factor = f64_factor or {}
        self._tols: dict = {}

    def run_upstream(self, tmp_path_factory, label: str):
        d = tmp_path_factory.mktemp(label)
        (d / "cases.json").write_text(json.dumps(self.cases))
        doc = sides.replay_on_upstream(d / "cases.json", d / "arrays.npz")
        with np.load(d / "arrays.npz") as z:
            arrays = {k: z[k] for k in z.files}
        # upstream again as it computes on this machine's other CPU capabilities: each case's
        # "others" are those results, their arrays stored under a per-profile prefix
        for name, env in upstream.other_cpu_profiles().items():
            other = sides.replay_on_upstream(d / "cases.json", d / f"arrays_{name}.npz",
                                             low_only=True, env=env)
            with np.load(d / f"arrays_{name}.npz") as z:
                arrays.update({f"{name}:{k}": z[k] for k in z.files})
            for case, res in other.items():
                doc[case].setdefault("others", []).append(_prefixed(res["low"], f"{name}:"))
        return doc, arrays

    def ours(self, case_):
        arrays: dict = {}
        return prelude.run_case(case_, False, arrays), arrays

    def tol(self, golden, family, dtype):
        """The derived tolerance of (family, dtype): upstream's own error against its float64
        rerun over every case of the family; float64 carries float32's, scaled by eps."""
        key = (family, dtype)
        if key in self._tols:
            return self._tols[key]
        doc, arrays = golden
        real = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
        src = "float32" if real == "float64" else real
        pairs = []
        for name, fam, *_ in self.cases:
            r = doc[name]
            if fam != family or r["high"] is None:
                continue
            for (lo, la), (hi, ha) in zip(leaves(r["low"], arrays), leaves(r["high"], arrays)):
                if lo["dtype"] in (src, {"float32": "complex64"}.get(src)) and \
                        la.shape == ha.shape:
                    pairs.append((tolerance.real_view(la), tolerance.real_view(ha)))
        t = tolerance.derive(pairs, src)
        if real == "float64":
            t = float64_tol(pairs, self.f64_factor.get(family, 2))
        self._tols[key] = t
        return t

    def compare(self, golden, family, up, ours, ours_arrays, high, others=()):
        """``others``: upstream's results for the same case under this machine's other CPU
        profiles; an element may sit as far from upstream as upstream sits from itself there."""
        doc, arrays = golden
        assert ours["T"] == up["T"], f"ours {ours} where upstream {up}"
        if up["T"] == "exc":
            assert (ours["error"], ours["message"]) == (up["error"], up["message"]), ours.get("where")
            return
        if up["T"] == "traced":
            assert ours["ops"] == up["ops"], "dispatched operators differ"
        if up["T"] in ("py", "none", "other"):
            assert ours == up
        ul = list(leaves(up, arrays))
        ol = list(leaves(ours, ours_arrays))
        hl = list(leaves(high, arrays)) if high is not None else [(None, None)] * len(ul)
        pl = [list(leaves(p, arrays)) for p in others if p["T"] == up["T"]]
        pl = [p for p in pl if len(p) == len(ul)]
        assert len(ul) == len(ol), "a different number of tensors"
        assert [x["T"] for x in flat(ours)] == [x["T"] for x in flat(up)], "structure differs"
        for j, ((ud, ua), (od, oa), (_hd, ha)) in enumerate(zip(ul, ol, hl)):
            assert (od["dtype"], od["shape"], od["stride"]) == \
                (ud["dtype"], ud["shape"], ud["stride"])
            if ua.dtype.kind not in "fc":
                np.testing.assert_array_equal(oa, ua)
                continue
            u, o = tolerance.real_view(ua), tolerance.real_view(oa)
            for test in (np.isnan, np.isposinf, np.isneginf):
                np.testing.assert_array_equal(test(o), test(u),
                                              err_msg=f"{test.__name__} positions")
            t = self.tol(golden, family, ud["dtype"])
            refs = {f"other{i}": tolerance.real_view(p[j][1]) for i, p in enumerate(pl)
                    if p[j][1].shape == ua.shape and p[j][1].dtype == ua.dtype}
            h = tolerance.real_view(ha) if ha is not None and ha.shape == ua.shape else None
            why = cmp.close(u, o, h, cmp.spread(u, refs, ud["dtype"]), t)
            assert why is None, f"{why} ({t.source})"


def golden_suite(cases: list, label: str, f64_factor: dict | None = None,
                 errors_family: str | None = None):
    """(harness, fixture ``golden``, test ``test_agrees_with_upstream``) for ``cases``; a test
    module binds them at module level under those names. ``errors_family``: the family that
    holds the module's error cases, when it keeps them apart: its cases must raise on upstream
    and every other case must compute there (else a case would test nothing it claims to)."""
    harness = Golden(cases, f64_factor)

    @pytest.fixture(scope="module")
    def golden(tmp_path_factory):
        if not upstream.available():
            upstream.missing("upstream environment (.venv-upstream) not installed")
        return harness.run_upstream(tmp_path_factory, label)

    @pytest.mark.parametrize("case_", cases, ids=[c[0] for c in cases])
    def test_agrees_with_upstream(golden, case_):
        doc, _ = golden
        up = doc[case_[0]]
        if errors_family is not None:
            raised = up["low"]["T"] == "exc"
            assert raised == (case_[1] == errors_family), \
                f"the case {'raises' if raised else 'computes'} on upstream: {up['low']}"
        ours, ours_arrays = harness.ours(case_)
        harness.compare(golden, case_[1], up["low"], ours, ours_arrays, up["high"],
                        up.get("others", ()))

    return harness, golden, test_agrees_with_upstream
