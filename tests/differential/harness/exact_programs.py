"""Programs whose every result must equal upstream's bit for bit: kernels that reproduce
upstream's own loop (its order of operations, its rounding) rather than approximate it.

A test file registers its program (``register``) when it is imported; a program prints a JSON
object of named results (lists of floats, records compared as they
are, or an exception's "Type: message"); ``run`` gives (ours, upstream) and ``mismatches`` names each key whose values
differ anywhere (NaN equals NaN; -0.0 and 0.0 are told apart by their sign)."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.testing import upstream


RECORDING = """
import json, torch, torch.nn.functional as F
out = {}
def rec(name, fn):
    try:
        out[name] = fn().double().tolist()
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
"""


def program(body: str) -> str:
    """``body`` run with ``rec(name, thunk)`` recording a tensor's values (as float64) or the
    error it raised, printed as the JSON object ``run`` reads."""
    return RECORDING + body + "\nprint(json.dumps(out))\n"


# Every program the exact tests register runs in one process per side, all at the first test
# that asks (each in its own namespace): two interpreter starts for the whole group, not two a
# file. A program that raises is recorded as failed and its test fails on it.
_PROGRAMS: dict[str, str] = {}
_RESULTS: dict[str, tuple] = {}

_DRIVER = """
import contextlib, io, json, sys
results = {}
for name, code in json.loads(sys.stdin.read()).items():
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(code, name, "exec"), {"__name__": "__main__"})
        results[name] = json.loads(buf.getvalue().strip().splitlines()[-1])
    except Exception as e:
        results[name] = {"program failed": f"{type(e).__name__}: {e}"}
print(json.dumps(results))
"""


def register(name: str, code: str) -> str:
    """Queue ``code`` (it prints one JSON object last) to run with the others; returns ``name``."""
    _PROGRAMS[name] = code
    return name


def _both(payload: str):
    import json
    import subprocess

    env = upstream.upstream_env()
    up = subprocess.run(upstream.code_command(_DRIVER), input=payload, capture_output=True,
                        text=True, env=env, timeout=1800)
    if up.returncode:
        raise upstream.failure("the exact programs on upstream", up.returncode, up.stderr)
    ours = subprocess.run([upstream.ours_python(), "-c", _DRIVER], input=payload,
                          capture_output=True, text=True, timeout=1800)
    if ours.returncode:
        raise RuntimeError(f"our exact programs failed:\n{ours.stderr[-4000:]}")
    return json.loads(ours.stdout.strip().splitlines()[-1]), \
        json.loads(up.stdout.strip().splitlines()[-1])


def run(name: str):
    """(ours, upstream) of the registered program ``name``."""
    import json

    if not upstream.available():
        upstream.missing("the upstream comparison environment")
    if name not in _RESULTS:
        pending = {k: v for k, v in _PROGRAMS.items() if k not in _RESULTS}
        ours_all, up_all = _both(json.dumps(pending))
        for k in pending:
            _RESULTS[k] = (ours_all[k], up_all[k])
    ours, up = _RESULTS[name]
    assert "program failed" not in up, up
    assert "program failed" not in ours, ours["program failed"]
    assert set(ours) == set(up), sorted(set(ours) ^ set(up))
    return ours, up


def agreeing(name: str) -> dict:
    """Upstream's results of program ``name``, after checking ours equals them everywhere."""
    ours, up = run(name)
    assert mismatches(ours, up) == []
    return up


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    try:
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    except (ValueError, TypeError):  # a record of mixed fields (dtype, shape, values as text)
        return a == b
    if x.shape != y.shape:
        return False
    eq = (x == y) & (np.signbit(x) == np.signbit(y))
    return bool(np.all(eq | (np.isnan(x) & np.isnan(y))))


def mismatches(ours: dict, up: dict) -> list[str]:
    return [k for k in up if not _same(ours[k], up[k])]


def distinct(up: dict, a: str, b: str) -> bool:
    """Control: two upstream results a test tells apart (so agreeing with one is not agreeing
    with any)."""
    return not _same(up[a], up[b])


__all__ = ["agreeing", "program", "register", "run", "mismatches", "distinct", "pytest"]
