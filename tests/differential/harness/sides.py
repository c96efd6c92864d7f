"""Running a snippet or a script on both sides, each in its own process, with the prelude loaded.

A snippet is Python source; ``program`` puts ``prelude`` (this folder's prelude.py) in front of
it, so it reads ``torch``, ``np``, ``F``, ``json``, ``encode``, ``case``, ``probe``... as names.
It prints one JSON document as its last line. Upstream runs under the guard
(``torchnative.testing.upstream``); ours in a fresh process of our environment, or in this
process (``here``) where a test compares case by case.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

from torchnative.testing import upstream

HARNESS = Path(__file__).resolve().parent
DIFFERENTIAL = HARNESS.parent  # the scripts both sides run sit in the differential group


def program(code: str) -> str:
    """``code`` with the prelude's names in scope, for either interpreter."""
    return (f"import sys\nsys.path.insert(0, {str(HARNESS)!r})\nfrom prelude import *\n"
            + textwrap.dedent(code))


def on_upstream(code: str, timeout: float = 600, env: dict | None = None):
    """The JSON document ``code`` prints on upstream (``env``: extra variables)."""
    return upstream.run_json(program(code), timeout, env)


def upstream_reruns(code: str, n: int, timeout: float = 600) -> list:
    """``n`` documents of ``code`` run again and again in one upstream process: where upstream
    does not reproduce itself (MKL's LAPACK, within one process too), their spread is its own."""
    rerun = (f"import contextlib, io\n_docs = []\nfor _ in range({n}):\n    RESULTS.clear()\n"
             f"    _out = io.StringIO()\n    with contextlib.redirect_stdout(_out):\n"
             f"        exec({textwrap.dedent(code)!r})\n"
             f"    _docs.append(json.loads(_out.getvalue().strip().splitlines()[-1]))\n"
             f"print(json.dumps(_docs))\n")
    return on_upstream(rerun, timeout)


def on_ours(code: str, timeout: float = 600):
    """The JSON document ``code`` prints on ours, in a fresh process."""
    return upstream.run_json_ours(program(code), timeout)


class Upstream(dict):
    """Upstream's JSON document, with ``moved``: the same program's documents under this
    machine's other CPU profiles (``upstream.other_cpu_profiles``), where upstream's numbers move
    from themselves (agreement_compare widens its bar by as much)."""

    moved: list | tuple = ()


def on_both(code: str, timeout: float = 600, profiles: bool = False):
    """(ours, upstream): the same snippet on each torch in its own process; with ``profiles``,
    upstream's document carries its reruns under the other CPU profiles (``Upstream.moved``)."""
    envs = list(upstream.other_cpu_profiles().values()) if profiles else []
    ours, up, *moved = upstream.concurrently(
        lambda: on_ours(code, timeout), lambda: on_upstream(code, timeout),
        *(lambda env=env: on_upstream(code, timeout, env) for env in envs))
    if profiles:
        up = Upstream(up)
        up.moved = moved
    return ours, up


# this machine's CPU profile (None), then each other one upstream can run here
PROFILES = [None, *upstream.other_cpu_profiles()]


def on_both_under(code: str, profile: str | None, timeout: float = 600):
    """(ours, upstream): ``code`` with both sides under the CPU ``profile`` (a name of
    ``PROFILES``; None: this machine's own), for kernels whose bits move between builds."""
    env = upstream.other_cpu_profiles()[profile] if profile else {}
    return upstream.run_both(program(code), timeout=timeout, env=env)


def under_each_profile(code: str, timeout: float = 600):
    """A module-scoped pytest fixture giving (ours, upstream) of ``code`` with both sides under
    each of ``PROFILES`` in turn: ``results = sides.under_each_profile(PROGRAM)`` in a test
    module whose kernels' bits move between builds."""
    import pytest

    @pytest.fixture(scope="module", params=PROFILES)
    def results(request):
        return on_both_under(code, request.param, timeout)

    return results


def cpu_paths(names) -> dict:
    """How ours' door serves each default-overload ATen operator of ``names`` for CPU tensors
    ({name: "kernel" | "decomposition" | ...}), read in this process."""
    __import__("torch")  # registers the kernels
    from torchnative.csrc.dispatch.door import _resolve
    from torchnative.csrc.ops.dispatcher import REGISTRY

    return {n: _resolve(REGISTRY.find(f"aten::{n}", ""), "CPU").path for n in names}


def differing(ours: dict, theirs: dict) -> dict:
    """The entries of upstream's document whose value on ours differs: {key: (ours, upstream)}."""
    return {k: (ours[k], v) for k, v in theirs.items() if ours[k] != v}


def assert_same(ours: dict, theirs: dict, at_least: int, controls: dict | None = None) -> None:
    """Both documents hold the same entries, at least ``at_least`` of them (the program ran
    through), and every entry is upstream's. ``controls``: {control entry: real entry}, each a
    deliberately wrong variant whose bits must differ from upstream's real ones (the comparison
    would catch that mistake)."""
    assert set(ours) == set(theirs) and len(theirs) >= at_least, (len(ours), len(theirs))
    diff = differing(ours, theirs)
    assert not diff, sorted(diff)
    for control, real in (controls or {}).items():
        assert theirs[control]["hex"] != theirs[real]["hex"], control


def here(code: str) -> dict:
    """The namespace ``code`` leaves in this process (ours), for running cases one by one."""
    ns: dict = {"__name__": "snippet"}
    exec(program(code), ns)
    return ns


def script_on_upstream(path: str | Path, *args: str, timeout: float = 1800,
                       env: dict | None = None):
    """The JSON document a script file prints as its last line on upstream."""
    proc = upstream.run_script(path, *args, timeout=timeout, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def script_on_ours(path: str | Path, *args: str, timeout: float = 1800,
                   env: dict | None = None):
    """The JSON document a script file prints as its last line on ours, in a fresh process
    (``env``: extra variables, e.g. a CPU profile)."""
    proc = subprocess.run([upstream.ours_python(), str(path), *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"our run of {path} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def script_on_both(path: str | Path, *args: str, timeout: float = 1800,
                   env: dict | None = None):
    """(ours, upstream): a script file run with the same arguments and variables on each, both
    at once."""
    ours, theirs = upstream.concurrently(
        lambda: script_on_ours(path, *args, timeout=timeout, env=env),
        lambda: script_on_upstream(path, *args, timeout=timeout, env=env))
    return ours, theirs


def replay_on_upstream(cases_path: Path, arrays_path: Path, low_only: bool = False,
                       env: dict | None = None) -> dict:
    """Upstream's results of the snippet cases in ``cases_path`` (``prelude.replay``), arrays
    saved to ``arrays_path``."""
    return on_upstream(f"print(json.dumps(replay({str(cases_path)!r}, {str(arrays_path)!r}, "
                       f"{low_only!r})))", timeout=1800, env=env)
