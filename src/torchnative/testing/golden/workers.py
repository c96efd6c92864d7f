"""Launching worker interpreters: chunked subprocesses with timeouts, retried alone on a crash.

Workers import this package as the top-level package ``golden`` (its parent directory goes on
PYTHONPATH), so upstream's interpreter never imports ``torchnative`` and only sees code that imports
nothing but numpy and its own torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from torchnative.testing import upstream

WORKER_PATH = Path(__file__).resolve().parent.parent  # .../testing: holds the golden package
STARTUP_SECONDS = 120  # importing torch (ours is pure Python) and, on upstream, the OpInfo database


def is_upstream(python: str | Path) -> bool:
    return os.path.abspath(python) == os.path.abspath(upstream.UPSTREAM_PYTHON)


def worker_env(python: str | Path) -> dict[str, str]:
    env = upstream.upstream_env() if is_upstream(python) else dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(WORKER_PATH)] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return env


def command(python, module: str, *args: str) -> list[str]:
    """argv of ``python -m golden.<module> args``; upstream's interpreter runs under the guard
    that stops it unless its torch is upstream's compiled build (upstream.module_command)."""
    if is_upstream(python):
        return upstream.module_command(f"golden.{module}", *args, python=python)
    return [str(python), "-m", f"golden.{module}", *args]


def run(python, module: str, args: list[str], timeout: float,
        env: dict[str, str] | None = None, capture: str = "stderr") -> tuple[int | str, str]:
    """Run ``python -m golden.<module> args`` (``env``: extra variables, e.g. a CPU profile);
    returns (exit code or 'timeout', stderr tail, or all of stdout with ``capture="stdout"``)."""
    try:
        proc = subprocess.run(command(python, module, *args), capture_output=True,
                              text=True, env={**worker_env(python), **(env or {})}, timeout=timeout)
        if capture == "stdout" and proc.returncode == 0:
            return proc.returncode, proc.stdout
        return proc.returncode, proc.stderr[-3000:]
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return "timeout", err[-3000:]


def list_keys(ops: tuple[str, ...]) -> list[str]:
    """OpInfo keys (name.variant) for ``ops`` (empty: all), asked of upstream's database."""
    proc = subprocess.run(command(upstream.UPSTREAM_PYTHON, "generate", "--out", os.devnull, "--ops",
                                  ",".join(ops), "--list"), capture_output=True, text=True,
                          env=worker_env(upstream.UPSTREAM_PYTHON), timeout=600)
    if proc.returncode != 0:
        raise upstream.failure("listing OpInfo entries", proc.returncode, proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_keys(python, module: str, args: list[str], keys: list[str], done: Callable[[str], bool], *,
             chunk: int, per_key: float, jobs: int = 1, log=sys.stderr,
             env: dict[str, str] | None = None) -> dict[str, str]:
    """Process ``keys`` in chunks; a chunk that dies is retried one key at a time.

    Returns {key: why} for keys that still have no output (the caller records them as crashed).
    """
    chunks = [keys[i:i + chunk] for i in range(0, len(keys), chunk)]

    def one(part: list[str]) -> dict[str, str]:
        code, err = run(python, module, [*args, *part], STARTUP_SECONDS + per_key * len(part), env)
        if code == upstream.GUARD_EXIT and is_upstream(python):  # not a crash of one entry: stop
            raise RuntimeError(f"the comparison interpreter {python} is not upstream torch:\n{err}")
        missing = [k for k in part if not done(k)]
        if not missing:
            return {}
        if len(part) > 1:
            print(f"[golden] {module}: chunk failed ({code}); retrying {len(missing)} entries alone",
                  file=log, flush=True)
            failed = {}
            for k in missing:
                failed.update(one([k]))
            return failed
        return {part[0]: f"worker exit {code}: {err.strip().splitlines()[-1] if err.strip() else ''}"}

    failures: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for i, res in enumerate(pool.map(one, chunks)):
            failures.update(res)
            print(f"[golden] {module}: {min((i + 1) * chunk, len(keys))}/{len(keys)} entries",
                  file=log, flush=True)
    return failures
