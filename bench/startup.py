"""Start-up, ours vs upstream in the same run: ``import torch`` and ``import torch, transformers``
in a fresh interpreter, with Python's bytecode cache cold and warm.

Usage: .venv/bin/python bench/startup.py [--rounds 5]

Each measurement is one new interpreter (``python -c "import ..."``), wall and CPU time of the
whole process (children's rusage), the sides alternating. Three bytecode settings:

* "as installed": each environment as tools/setup.sh leaves it (pip writes bytecode for what it
  installs; ``PYTHONDONTWRITEBYTECODE`` is inherited from the caller);
* "no bytecode": ``PYTHONPYCACHEPREFIX`` points at an empty directory and nothing is written, so
  every module of both sides is compiled from source (what a first import after an install
  without bytecode costs);
* "bytecode cached": ``PYTHONPYCACHEPREFIX`` points at a per-side directory warmed by one
  untimed import, so every module of both sides (ours' ``src/`` included) loads from bytecode.

Reported: medians over ``--rounds`` and the ratio ours/upstream.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = {"ours": REPO / ".venv/bin/python", "upstream": REPO / ".venv-upstream/bin/python"}
CODE = {"import torch": "import torch", "import torch, transformers": "import torch, transformers"}


def _env(mode: str, prefix: str | None) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if mode == "no bytecode":
        env["PYTHONPYCACHEPREFIX"] = prefix
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    elif mode == "bytecode cached":
        env["PYTHONPYCACHEPREFIX"] = prefix
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(side: str, code: str, env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w = time.perf_counter()
    subprocess.run([str(PYTHON[side]), "-c", code], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - w
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        warm = {side: os.path.join(tmp, f"warm-{side}") for side in PYTHON}
        for side in PYTHON:  # warm the cached setting (untimed)
            _run(side, CODE["import torch, transformers"], _env("bytecode cached", warm[side]))
        rows = []
        for mode in ("as installed", "no bytecode", "bytecode cached"):
            for label, code in CODE.items():
                got = {side: ([], []) for side in PYTHON}
                for _ in range(args.rounds):
                    for side in PYTHON:
                        prefix = empty if mode == "no bytecode" else warm[side]
                        wall, cpu = _run(side, code, _env(mode, prefix))
                        got[side][0].append(wall)
                        got[side][1].append(cpu)
                med = {side: (statistics.median(w), statistics.median(c)) for side, (w, c) in got.items()}
                rows.append((f"{label} ({mode})", med["ours"], med["upstream"]))
                print(f"{rows[-1][0]:<48} wall {med['ours'][0]:6.2f}s vs {med['upstream'][0]:6.2f}s "
                      f"= {med['ours'][0] / med['upstream'][0]:5.2f}x   cpu {med['ours'][1]:6.2f}s vs "
                      f"{med['upstream'][1]:6.2f}s = {med['ours'][1] / med['upstream'][1]:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
