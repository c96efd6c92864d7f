"""Run code on upstream torch 2.13.0, in its own environment and its own process.

The two torch packages never share an interpreter: upstream lives in ``.venv-upstream`` (made by
``tools/setup.sh``). Code runs there with a clean environment and hands its result back as JSON
on stdout (or as files it writes), so that nothing of ours leaks into the baseline. Every process
started here runs ``upstream_guard.py`` first, which stops it unless its torch is upstream's
compiled build (``TORCHNATIVE_UPSTREAM_PYTHON`` pointed at our environment fails loudly).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
UPSTREAM_PYTHON = Path(os.environ.get("TORCHNATIVE_UPSTREAM_PYTHON", REPO / ".venv-upstream/bin/python"))

# Our environment sets these for the vendored tree; upstream must not inherit them.
_OURS_ONLY = ("TORCH_USE_RTLD_GLOBAL", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")


def upstream_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _OURS_ONLY}
    env.setdefault("OMP_NUM_THREADS", "2")
    return env


# torchvision and timm for upstream live outside its site-packages (tools/setup.sh says why);
# a program that uses them runs with this folder on its path.
ECOSYSTEM_SITE = REPO / ".venv-upstream" / "ecosystem-site"


def ecosystem_env() -> dict[str, str]:
    """upstream_env() with torchvision and timm importable."""
    return upstream_env() | {"PYTHONPATH": str(ECOSYSTEM_SITE)}


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


# A test whose comparison environment, worker interpreter or cache is missing fails; with this
# variable set to 1 it skips instead (for a machine without .venv-upstream; CI never sets it).
ALLOW_MISSING = "TORCHNATIVE_TESTS_ALLOW_MISSING"


def allow_missing() -> bool:
    return os.environ.get(ALLOW_MISSING) == "1"


def missing(what: str) -> None:
    """A piece a test needs is absent: the test fails, or skips under the explicit opt-out."""
    import pytest

    if allow_missing():
        pytest.skip(f"{what} ({ALLOW_MISSING}=1)")
    pytest.fail(f"{what}; set {ALLOW_MISSING}=1 to skip instead", pytrace=False)


def available() -> bool:
    """The comparison interpreter exists. Missing, it is an error unless ALLOW_MISSING is set
    (then False: the caller skips)."""
    if UPSTREAM_PYTHON.exists():
        return True
    if allow_missing():
        return False
    raise FileNotFoundError(f"upstream interpreter missing: {UPSTREAM_PYTHON} (run tools/setup.sh, "
                            f"or set {ALLOW_MISSING}=1 to skip the tests that need it)")


# ------------------------------------------------------------------- starting upstream's interpreter
# Every upstream process starts by running upstream_guard.py (as text: importing it would load
# torchnative there), which ends the process with GUARD_EXIT unless the torch it imports has a
# compiled torch._C and no torchnative module is loaded.
GUARD_SOURCE = (Path(__file__).with_name("upstream_guard.py")).read_text()
GUARD_EXIT = 86
_BOOT = f"exec({GUARD_SOURCE!r}, {{'__name__': 'upstream_guard'}})\n"
_RUN_CODE = _BOOT + "import sys\nexec(compile(sys.argv.pop(1), '<string>', 'exec'))\n"
_RUN_SCRIPT = _BOOT + (
    "import os, runpy, sys\n"
    "sys.argv.pop(0)\n"
    "sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n")
_RUN_MODULE = _BOOT + "import runpy, sys\nsys.argv.pop(0)\nrunpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)\n"


def code_command(code: str, python: str | Path | None = None) -> list[str]:
    """argv running ``code`` (as ``python -c code``) under the guard."""
    return [str(python or UPSTREAM_PYTHON), "-c", _RUN_CODE, code]


def script_command(path: str | Path, *args: str, python: str | Path | None = None) -> list[str]:
    """argv running a script file (as ``python path args``) under the guard."""
    return [str(python or UPSTREAM_PYTHON), "-c", _RUN_SCRIPT, str(path), *map(str, args)]


def module_command(module: str, *args: str, python: str | Path | None = None) -> list[str]:
    """argv running a module (as ``python -m module args``) under the guard."""
    return [str(python or UPSTREAM_PYTHON), "-c", _RUN_MODULE, module, *map(str, args)]


def failure(what: str, returncode: int, stderr: str) -> RuntimeError:
    """The error for a failed upstream process (named plainly when the guard stopped it)."""
    if returncode == GUARD_EXIT:
        return RuntimeError(f"the comparison interpreter {UPSTREAM_PYTHON} is not upstream torch:\n"
                            f"{stderr[-2000:]}")
    return RuntimeError(f"{what} failed ({returncode}):\n{stderr[-4000:]}")


def run_script(path: str | Path, *args: str, timeout: float = 1800,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a script file under upstream's interpreter (``env``: extra variables, e.g. a CPU
    profile); raises with its stderr if it fails."""
    proc = subprocess.run(script_command(path, *args), capture_output=True,
                          text=True, env={**upstream_env(), **(env or {})}, timeout=timeout)
    if proc.returncode != 0:
        raise failure(f"upstream run of {path}", proc.returncode, proc.stderr)
    return proc


def run_json(code: str, timeout: float = 600, env: dict[str, str] | None = None):
    """Run ``code`` on upstream (``env``: extra variables); it must print one JSON document as its
    last line of stdout."""
    proc = subprocess.run(code_command(textwrap.dedent(code)), capture_output=True,
                          text=True, env={**upstream_env(), **(env or {})}, timeout=timeout)
    if proc.returncode != 0:
        raise failure("upstream code", proc.returncode, proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


PROBE = """
import json, sys, torch
print(json.dumps({"version": torch.__version__, "torch_C": torch._C.__file__,
                  "torchnative_loaded": sorted(m for m in sys.modules if m.startswith("torchnative"))}))
"""


def check_genuine() -> dict:
    """Start the comparison interpreter once, under the guard: what its torch is (raises if it is
    not upstream's compiled build, or not torch 2.13.0)."""
    info = run_json(PROBE, timeout=300)
    if not info["version"].startswith("2.13.0"):
        raise RuntimeError(f"the comparison interpreter {UPSTREAM_PYTHON} has torch {info['version']}, "
                           "not 2.13.0")
    return info


def ours_python() -> str:
    """Our environment's interpreter (the one running the tests, normally)."""
    cand = REPO / ".venv/bin/python"
    return str(cand) if cand.exists() else sys.executable


def run_json_ours(code: str, timeout: float = 600, env: dict[str, str] | None = None):
    """Run ``code`` on our torch in a fresh process (same contract as ``run_json``; ``env``:
    extra variables)."""
    proc = subprocess.run([ours_python(), "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        raise RuntimeError(f"our code failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def concurrently(*calls) -> list:
    """The results of ``calls`` (functions of no argument, each running its own process), run at
    the same time: the sides of a comparison share nothing, and while one process runs alone
    the machine's other core idles. Every call ends (a timeout kills its own process) before the
    first failure, in the order given, is raised."""
    with ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
    return [f.result() for f in futures]


def under_other_profiles(run, env: dict[str, str] | None = None) -> list:
    """Calls of ``run(profile_env)`` for each of this CPU's other profiles (``env`` with the
    profile's variables over it), for ``concurrently``: how far upstream moves from itself
    across CPUs is part of a comparison's bar (docs/cpu.md)."""
    return [functools.partial(run, {**(env or {}), **profile})
            for profile in other_cpu_profiles().values()]


def run_both(code: str, timeout: float = 600, env: dict[str, str] | None = None):
    """(ours, upstream): the same program run on each torch in its own process, both at once
    (``env``: extra variables for both)."""
    ours, theirs = concurrently(lambda: run_json_ours(code, timeout, env),
                                lambda: run_json(code, timeout, env))
    return ours, theirs


def run_with_float64_rerun(code: str, timeout: float = 600):
    """(ours, upstream, upstream in float64): ``code`` names its floating dtype ``torch.DTYPE``;
    ours and upstream run it in float32 and upstream again in float64, the reference the derived
    tolerance is measured against. A program draws its random inputs in float32 and converts
    them, so the rerun sees the same values."""
    code32 = code.replace("torch.DTYPE", "torch.float32")
    code64 = code.replace("torch.DTYPE", "torch.float64")
    ours, up32, up64 = concurrently(lambda: run_json_ours(code32, timeout),
                                    lambda: run_json(code32, timeout),
                                    lambda: run_json(code64, timeout))
    return ours, up32, up64
