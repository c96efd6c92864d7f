"""SmolLM2-135M prefill forwards, ours vs upstream (and optionally another tree of ours), in
alternating processes of one sitting.

Usage: .venv/bin/python bench/prefill_compare.py [--rounds 5] [--repeats 3] [--tokens 128 512]
       [--before /path/to/an/older/src]

Each round starts one process per side (``--before``: that tree first on ``PYTHONPATH``, then
this tree, then ``.venv-upstream``): it loads the checkpoint in float32 with one thread, makes one
untimed forward per prompt length, then times ``--repeats`` forwards of each (CPU time, inference
mode, bench/decode.py's prefill ids) and reports their median. The table gives the median over
rounds of each side and upstream's CPU time over ours (above 1: ours is faster). The load
average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def worker(tokens, repeats) -> None:
    import torch

    sys.path.insert(0, str(REPO / "src"))  # the model loader (our package keeps its own tree)
    from torchnative.apps.chat import load

    torch.set_num_threads(1)
    _, model = load(None, None, quiet=True, dtype=torch.float32)
    out = {}
    with torch.inference_mode():
        for n in tokens:
            ids = torch.arange(n).remainder(1000).add(10).reshape(1, n)
            model(ids)
            times = []
            for _ in range(repeats):
                c = time.process_time()
                model(ids)
                times.append((time.process_time() - c) * 1e3)
            out[n] = statistics.median(times)
    print(json.dumps(out))


def _run(python, tokens, repeats, pythonpath=None):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    cmd = [python, __file__, "--worker", "--repeats", str(repeats), "--tokens", *map(str, tokens)]
    res = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return {int(k): v for k, v in json.loads(res.stdout.strip().splitlines()[-1]).items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tokens", type=int, nargs="+", default=[128, 512])
    ap.add_argument("--before", help="another tree's src/, timed as a third side")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.tokens, args.repeats)
        return
    sides = ([("before", str(REPO / ".venv/bin/python"), args.before)] if args.before else []) + \
        [("ours", str(REPO / ".venv/bin/python"), None),
         ("upstream", str(REPO / ".venv-upstream/bin/python"), None)]
    print(f"load average before: {os.getloadavg()}")
    got = {name: [] for name, _, _ in sides}
    for r in range(args.rounds):
        for name, python, path in sides:
            got[name].append(_run(python, args.tokens, args.repeats, path))
        print(f"round {r + 1}: " + "; ".join(
            f"{name} " + " / ".join(f"{got[name][-1][n]:.0f}" for n in args.tokens)
            for name, _, _ in sides), flush=True)
    print(f"load average after: {os.getloadavg()}")
    print("\n| prefill | " + " | ".join(f"{name} CPU ms" for name, _, _ in sides) +
          " | upstream / ours |" + (" upstream / before |" if args.before else ""))
    print("|---" * (len(sides) + 2 + bool(args.before)) + "|")
    for n in args.tokens:
        med = {name: statistics.median(x[n] for x in got[name]) for name in got}
        row = f"| {n} tokens | " + " | ".join(f"{med[name]:.1f}" for name in got)
        row += f" | {med['upstream'] / med['ours']:.3f} |"
        if args.before:
            row += f" {med['upstream'] / med['before']:.3f} |"
        print(row)


if __name__ == "__main__":
    main()
