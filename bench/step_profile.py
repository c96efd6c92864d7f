"""Where the small MLP training step of bench/train_step.py spends its time, on whichever torch
runs this script: the phases (forward, backward, optimizer step; wall µs, medians), the forward
again under ``no_grad`` (what recording for autograd adds), and on ours each backward node's
``_run`` timed on its own.

Usage: .venv/bin/python bench/step_profile.py [--steps 200]
       .venv-upstream/bin/python bench/step_profile.py     (upstream's phases, for comparison)
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time

import torch


def _mlp():
    nn = torch.nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    x, y = torch.rand(64, 64) * 16, torch.randint(0, 10, (64,))
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    return opt, lambda: nn.functional.cross_entropy(net(x), y)


def _node_timer():
    """Per node class: the seconds of each ``_run`` (ours only), and the patch's undo."""
    from torchnative.csrc.autograd import generated, node

    times = collections.defaultdict(list)
    undo = []
    for cls in (generated.FormulaNode, node.AccumulateGrad):
        orig = cls._run

        def timed(self, grads, _orig=orig):
            t = time.perf_counter()
            out = _orig(self, grads)
            times[type(self).__name__].append(time.perf_counter() - t)
            return out
        cls._run = timed
        undo.append((cls, orig))
    return times, lambda: [setattr(cls, "_run", orig) for cls, orig in undo]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    steps = ap.parse_args().steps
    torch.set_num_threads(1)
    opt, loss_fn = _mlp()
    for _ in range(30):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    phases = {"forward": [], "backward": [], "optimizer": [], "forward, no_grad": []}
    for _ in range(steps):
        opt.zero_grad()
        t0 = time.perf_counter()
        loss = loss_fn()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        with torch.no_grad():
            loss_fn()
        t4 = time.perf_counter()
        for k, a, b in (("forward", t0, t1), ("backward", t1, t2), ("optimizer", t2, t3),
                        ("forward, no_grad", t3, t4)):
            phases[k].append(b - a)
    try:
        times, undo = _node_timer()
    except ImportError:  # upstream: its nodes are C++
        times = undo = None
    print("torch:", "upstream" if times is None else "ours (torchnative)")
    for k, v in phases.items():
        print(f"  {k:18s} {statistics.median(v) * 1e6:8.0f} µs")
    if times is None:
        return
    try:
        for _ in range(steps):
            opt.zero_grad()
            loss_fn().backward()
            opt.step()
    finally:
        undo()
    print("  backward nodes (ours): calls per step, µs per step, median µs per call")
    for name, v in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        print(f"    {name:24s} {len(v) // steps:3d} {sum(v) / steps * 1e6:8.1f} "
              f"{statistics.median(v) * 1e6:8.1f}")


if __name__ == "__main__":
    main()
