"""Run code on upstream torch 2.13.0, in its own environment and its own process.

The two torch packages never share an interpreter: upstream lives in ``.venv-upstream`` (made by
``tools/setup.sh``). Code runs there with a clean environment and hands its result back as JSON
on stdout (or as files it writes), so that nothing of ours leaks into the baseline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
UPSTREAM_PYTHON = Path(os.environ.get("TORCHNATIVE_UPSTREAM_PYTHON", REPO / ".venv-upstream/bin/python"))

# Our environment sets these for the vendored tree; upstream must not inherit them.
_OURS_ONLY = ("TORCH_USE_RTLD_GLOBAL", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")


def upstream_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _OURS_ONLY}
    env.setdefault("OMP_NUM_THREADS", "2")
    return env


def available() -> bool:
    return UPSTREAM_PYTHON.exists()


def run_script(path: str | Path, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    """Run a script file under upstream's interpreter; raises with its stderr if it fails."""
    proc = subprocess.run([str(UPSTREAM_PYTHON), str(path), *args], capture_output=True,
                          text=True, env=upstream_env(), timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"upstream run of {path} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


def run_json(code: str, timeout: float = 600):
    """Run ``code`` on upstream; it must print one JSON document as its last line of stdout."""
    proc = subprocess.run([str(UPSTREAM_PYTHON), "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=upstream_env(), timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"upstream code failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ours_python() -> str:
    """Our environment's interpreter (the one running the tests, normally)."""
    cand = REPO / ".venv/bin/python"
    return str(cand) if cand.exists() else sys.executable


def run_json_ours(code: str, timeout: float = 600):
    """Run ``code`` on our torch in a fresh process (same contract as ``run_json``)."""
    proc = subprocess.run([ours_python(), "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"our code failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_both(code: str, timeout: float = 600):
    """(ours, upstream): the same program run on each torch in its own process."""
    return run_json_ours(code, timeout), run_json(code, timeout)
