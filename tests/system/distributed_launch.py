"""Launch a program as N real processes (ranks) on our torch, upstream's, or a mix, with hard
timeouts: a rank still running at the deadline is killed and the launch reports it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from torchnative.testing.upstream import UPSTREAM_PYTHON, upstream_env

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).with_name("distributed_programs")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def side_command(side: str) -> tuple[str, dict]:
    if side == "ours":
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO / "src")
        return sys.executable, env
    if side == "upstream":
        return str(UPSTREAM_PYTHON), upstream_env()
    raise ValueError(side)


def launch(program: str, sides, *args: str, timeout: float = 240, env_extra=None,
           port: int | None = None):
    """Run ``program`` once per entry of ``sides`` (rank = index). Returns a list of
    (returncode, stdout, stderr) per rank; returncode is None for a rank killed at the deadline."""
    port = port or free_port()
    procs = []
    for rank, side in enumerate(sides):
        exe, env = side_command(side)
        env.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
                    "WORLD_SIZE": str(len(sides)), "OMP_NUM_THREADS": "1",
                    "PYTHONUNBUFFERED": "1"})
        env.update(env_extra or {})
        procs.append(subprocess.Popen([exe, str(PROGRAMS / program), *args], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + timeout
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1, deadline - time.monotonic()))
            results.append((p.returncode, out, err))
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            results.append((None, out, err))
    return results


def check_ok(results) -> None:
    bad = [(r, rc, err[-3000:]) for r, (rc, _, err) in enumerate(results) if rc != 0]
    assert not bad, "\n".join(f"rank {r}: rc={rc}\n{err}" for r, rc, err in bad)
