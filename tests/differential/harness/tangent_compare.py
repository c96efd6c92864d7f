"""Judging a program's tangents on ours against upstream's: the program prints one JSON object
{case: {"torch.float32": [...], "torch.float64": [...], optionally "signbit": [...]}}, run in
float32 on both sides and float64 on upstream; ours' float32 values are judged by
``compare.elementwise`` (tolerance from upstream's own float32-vs-float64 error)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare


def ours_json(code: str) -> dict:
    """The last line ``code`` prints on our torch, as JSON (its own process)."""
    proc = subprocess.run([upstream.ours_python(), "-c", code], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-4000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def disagreements(ours: dict, up: dict, signs: bool = False) -> dict:
    """{case: why} for every case of upstream's where ours is missing or disagrees; with
    ``signs`` the sign bit of each of upstream's zeros must match too."""
    bad = {}
    for k, u in up.items():
        o = ours.get(k)
        if o is None:
            bad[k] = "missing"
            continue
        why = compare.elementwise(o["torch.float32"], u["torch.float32"], u["torch.float64"],
                                  "float32", summed=True)
        if not why and signs:
            zeros = np.asarray(u["torch.float32"]) == 0
            if list(np.asarray(o["signbit"])[zeros]) != list(np.asarray(u["signbit"])[zeros]):
                why = f"signs of zeros: ours {o['signbit']}, upstream {u['signbit']}"
        if why:
            bad[k] = why
    return bad


needs_upstream = pytest.mark.skipif(not upstream.available(), reason="no upstream environment")


def upstream_fixture(program: str):
    """A module-scoped fixture: ``program``'s JSON on upstream, run once per test file."""
    @pytest.fixture(scope="module")
    def theirs():
        if not upstream.available():
            upstream.missing("the upstream environment")
        return upstream.run_json(program)
    return theirs


def agreement_test(program: str):
    """The test that ``program``'s cases on ours agree with upstream's (fixture ``theirs``)."""
    @needs_upstream
    def test(theirs):
        ours = ours_json(program)
        assert set(ours) == set(theirs)
        assert not disagreements(ours, theirs)
    return test
