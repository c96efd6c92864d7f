"""The float32 copies matrix products keep of bfloat16/float16 weights
(csrc/kernels/support/widened_cache.py): after every kind of write into a weight whose copy is
held, our product equals the one from a never-cached clone bit for bit and agrees with
upstream's at the tolerance derived from upstream's own error (its bfloat16 result against
float64 over the same values). A control cache that ignores writes and version counters is
caught by the same comparison."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp, tolerance

PROGRAM = Path(__file__).with_name("widened_cache_program.py")
# writes that keep the storage object and change its bytes: only the write counter and the
# version can tell the broken control's copy is stale
COUNTED = ("in-place op", "in-place op in inference mode", ".data write", "load_state_dict",
           "copy_", "SGD step", "Adam step (foreach)", "write through a view",
           "item write through a flat view", "detach() alias",
           "second tensor set_ on the storage", "UntypedStorage.fill_", "UntypedStorage.copy_")


def _run(python, *args, env=None) -> dict:
    proc = subprocess.run([str(python), str(PROGRAM), *args], capture_output=True, text=True,
                          env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs():
    if not upstream.available():
        pytest.skip("no upstream interpreter")
    return (_run(upstream.ours_python()), _run(upstream.UPSTREAM_PYTHON, env=upstream.upstream_env()),
            _run(upstream.ours_python(), "--break"))


def _problem(ours: dict, up: dict) -> str | None:
    o, u, wide = (np.array(x) for x in (ours["after"], up["after"], up["float64"]))
    tol = tolerance.derive([(u, wide)], "bfloat16")
    return cmp.close(u, o, wide, 0.0, tol)


def test_every_case_ran_on_both_sides(runs):
    ours, up, _ = runs
    assert set(ours) == set(up) and len(up) >= 30


@pytest.mark.parametrize("case", ["no write", *COUNTED, ".data = assignment", "set_",
                                  "numpy alias", "DLPack alias", "numpy-owned memory"])
def test_write_reaches_the_product(runs, case):
    ours, up, _ = runs
    assert ours[case]["after"] == ours[case]["clone"], "the cached copy differs from a clone's"
    problem = _problem(ours[case], up[case])
    assert problem is None, problem


def test_products_agree_with_upstream(runs):
    ours, up, _ = runs
    products = [k for k in up if k.startswith(("bfloat16:", "float16:"))]
    assert len(products) == 14
    for case in products:
        assert ours[case]["after"] == ours[case]["clone"], case
        problem = _problem(ours[case], up[case])
        assert problem is None, f"{case}: {problem}"


@pytest.mark.parametrize("case", COUNTED)
def test_a_cache_ignoring_writes_is_caught(runs, case):
    """The control: the same comparison rejects what a cache keyed on the storage alone serves."""
    _, up, broken = runs
    assert _problem(broken[case], up[case]) is not None
