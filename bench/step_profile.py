"""Where the small MLP training step of bench/train_step.py spends its time, on whichever torch
runs this script: the phases (forward, backward, optimizer step: CPU µs, medians, as
bench/train_step.py times them; the whole step in wall µs), the forward again under
``no_grad`` (what recording for autograd adds), and on ours each backward node's ``_run``, the
engine's checks of the gradients it hands on (a bias gradient's sum) and the backward's seed
gradient timed on their own (wall µs).

Usage: .venv/bin/python bench/step_profile.py [--steps 200]
       .venv-upstream/bin/python bench/step_profile.py     (upstream's phases, for comparison)
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train_step  # noqa: E402


def _node_timer():
    """Per node class: the seconds of each ``_run`` (ours only); the engine's
    ``validate_outputs`` (a broadcast gradient's ``sum_to``, the biases') and the backward's
    seed (upstream's ``_make_grads``: ``ones_like`` of the loss) under their own names; and the
    patches' undo."""
    import torch.autograd
    from torchnative.csrc.autograd import engine, generated, node

    times = collections.defaultdict(list)
    undo = []

    def patch(owner, attr, label=None):  # no label: a method, timed under its node's class
        orig = getattr(owner, attr)

        def timed(*args, **kwargs):
            t = time.perf_counter()
            out = orig(*args, **kwargs)
            times[label or type(args[0]).__name__].append(time.perf_counter() - t)
            return out
        setattr(owner, attr, timed)
        undo.append((owner, attr, orig))

    for cls in (generated.FormulaNode, node.AccumulateGrad):
        patch(cls, "_run")
    patch(engine, "_validate", "(engine) validate_outputs")
    patch(torch.autograd, "_make_grads", "(torch.autograd) _make_grads")
    return times, lambda: [setattr(owner, attr, orig) for owner, attr, orig in undo]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    steps = ap.parse_args().steps
    torch.set_num_threads(1)
    opt, loss_fn = train_step.mlp(torch)
    phases = train_step._timed(opt, loss_fn, steps, 30)  # CPU ms per phase, wall ms per step
    with torch.no_grad():
        plain = []
        for _ in range(steps):
            t = time.process_time()
            loss_fn()
            plain.append(time.process_time() - t)
    phases["forward, no_grad"] = statistics.median(plain) * 1e3
    try:
        times, undo = _node_timer()
    except ImportError:  # upstream: its nodes are C++
        times = undo = None
    print("torch:", "upstream" if times is None else "ours (torchnative)")
    for k, v in phases.items():
        print(f"  {k:18s} {v * 1e3:8.0f} µs")
    if times is None:
        return
    try:
        for _ in range(steps):
            opt.zero_grad()
            loss_fn().backward()
            opt.step()
    finally:
        undo()
    print("  backward (ours): calls per step, µs per step, median µs per call")
    for name, v in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        print(f"    {name:30s} {len(v) // steps:3d} {sum(v) / steps * 1e6:8.1f} "
              f"{statistics.median(v) * 1e6:8.1f}")


if __name__ == "__main__":
    main()
