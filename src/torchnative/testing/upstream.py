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


# Environment that makes upstream compute as it does on a CPU of each capability: ATen's
# vectorized kernels (ATEN_CPU_CAPABILITY), MKL's code path (MKL_CBWR) and oneDNN's ISA
# (ONEDNN_MAX_CPU_ISA). Upstream's numbers differ between them in the last bits.
CPU_PROFILES = {
    "AVX512": {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AVX512", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
    "AVX2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "DEFAULT": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41"},
}
_ORDER = ("DEFAULT", "AVX2", "AVX512")


def other_cpu_profiles() -> dict[str, dict[str, str]]:
    """The profiles this CPU can run besides the capability in force (the CPU's own, or the one
    ATEN_CPU_CAPABILITY selects): where upstream's results move between them, upstream disagrees
    with itself across CPUs, and that sets the bar for agreeing with it."""
    from torchnative.csrc.platform import cpu_capability as cap

    if cap.CAPABILITY not in _ORDER:  # arm64 and others: no x86 profiles to run
        return {}
    top = _ORDER.index(cap.detect(cap.FLAGS)) if cap.detect(cap.FLAGS) in _ORDER else 0
    return {name: CPU_PROFILES[name] for name in _ORDER[:top + 1] if name != cap.CAPABILITY}


def available() -> bool:
    return UPSTREAM_PYTHON.exists()


def run_script(path: str | Path, *args: str, timeout: float = 1800,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a script file under upstream's interpreter (``env``: extra variables, e.g. a CPU
    profile); raises with its stderr if it fails."""
    proc = subprocess.run([str(UPSTREAM_PYTHON), str(path), *args], capture_output=True,
                          text=True, env={**upstream_env(), **(env or {})}, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"upstream run of {path} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


def run_json(code: str, timeout: float = 600, env: dict[str, str] | None = None):
    """Run ``code`` on upstream (``env``: extra variables); it must print one JSON document as its
    last line of stdout."""
    proc = subprocess.run([str(UPSTREAM_PYTHON), "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env={**upstream_env(), **(env or {})}, timeout=timeout)
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
