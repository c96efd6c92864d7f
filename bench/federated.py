"""Federated digits: accuracy per round against centralized training, bytes per round, and
seconds per round on our torch and on upstream torch measured in the same invocation; and the
robustness table (one of ten participants sends scaled or sign-flipped updates).

    .venv/bin/python bench/federated.py digits --rounds 20
    .venv/bin/python bench/federated.py robustness --rounds 10            # in one process
    .venv/bin/python bench/federated.py robustness --rounds 10 --processes --side upstream

Every participant is its own process (10 participants + 1 coordinator per run).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from torchnative.nn.federated import experiment  # noqa: E402

PYTHON = {"ours": str(ROOT / ".venv/bin/python"), "upstream": str(ROOT / ".venv-upstream/bin/python")}


def env_for(side):
    if side == "ours":
        return None
    from torchnative.testing.upstream import upstream_env
    # one thread per process on both sides: 11 processes share the cores, and OpenMP workers
    # spinning in each only slow the others down
    return {**upstream_env(), "OMP_NUM_THREADS": "1"}


def run(side, **kw):
    t0 = time.monotonic()
    rows = experiment.run_experiment(python=PYTHON[side], env=env_for(side), **kw)
    return rows, time.monotonic() - t0


def digits(a):
    results, wall = {}, {}
    for alpha in a.alphas:
        for side in a.sides:
            print(f"[alpha={alpha} {side}] ...", file=sys.stderr, flush=True)
            results[alpha, side], wall[alpha, side] = run(side, participants=a.participants, rounds=a.rounds,
                                                          alpha=alpha, lr=a.lr, epochs=a.epochs)
    central = experiment.centralized(a.rounds, a.epochs, a.lr)
    cols = [(al, s) for al in a.alphas for s in a.sides]
    print(f"\nFedAvg, {a.participants} participants, {a.epochs} local epoch(s), SGD lr {a.lr}, batch 16; "
          f"centralized: the same model and optimizer over all training data, {a.epochs} epoch(s) per round\n")
    print("| round | centralized | " + " | ".join(f"α={al} {s}" for al, s in cols) + " |")
    print("|---:|---:|" + "---:|" * len(cols))
    for r in range(a.rounds):
        print(f"| {r + 1} | {central[r]:.4f} | " + " | ".join(f"{results[c][r]['accuracy']:.4f}" for c in cols) + " |")
    print("\n| α | side | bytes per round (down + up) | median s per round | run wall s | rounds complete |")
    print("|---:|---|---:|---:|---:|---:|")
    med = {}
    for c in cols:
        rows = results[c]
        med[c] = statistics.median(r["seconds"] for r in rows[1:] or rows)
        b = {r["bytes_down"] + r["bytes_up"] for r in rows}
        full = sum(len(r["reported"]) == a.participants for r in rows)
        print(f"| {c[0]} | {c[1]} | {', '.join(str(x) for x in sorted(b))} | {med[c]:.3f} | {wall[c]:.1f} | {full}/{len(rows)} |")
    if set(a.sides) == {"ours", "upstream"}:
        for al in a.alphas:
            print(f"\nα={al}: seconds per round, ours/upstream = {med[al, 'ours'] / med[al, 'upstream']:.2f}; "
                  f"final accuracy ours {results[al, 'ours'][-1]['accuracy']:.4f}, upstream "
                  f"{results[al, 'upstream'][-1]['accuracy']:.4f}")


ROBUST = [("FedAvg", {}), ("FedMedian", {}), ("FedTrimmedAvg", {"beta": 0.2}),
          ("Krum", {"num_malicious": 1}), ("MultiKrum", {"num_malicious": 1, "to_keep": 5}),
          ("Bulyan", {"num_malicious": 1})]


def simulated(name, kw, who, factor, a, models=None):
    """The rounds in this process (federated.simulate): same steps as the engine, no transport.
    `models`, if given, receives every round's global model (name -> float64 numpy)."""
    import torch
    from torchnative.nn.federated import attacks, digits
    from torchnative.nn.federated.aggregators import ALL
    from torchnative.nn.federated.simulate import simulate
    dtype = getattr(torch, a.dtype)
    xtr, ytr, xte, yte = digits.load(0)
    parts = digits.dirichlet_split(ytr, 10, a.alpha, 0)
    data = {i + 1: digits.batches(xtr[p], ytr[p], dtype=dtype) for i, p in enumerate(parts)}
    net = digits.model(0, dtype=dtype)
    acc = []

    def on_round(r, m):
        acc.append(digits.accuracy(m, xte, yte, dtype=dtype))
        if models is not None:
            for n, p in m.named_parameters():
                models[f"{name}|{who}|{factor:g}|r{r}|{n}"] = p.detach().double().numpy().copy()

    simulate(net, data, rounds=a.rounds, aggregator=ALL["Krum" if name == "MultiKrum" else name](**kw),
             transform=attacks.Scale([int(who)], factor) if who else None, lr=a.lr, on_round=on_round)
    return acc


def robustness(a):
    attacks = {"none": ("", 1.0), f"scaled x{a.scale:g}": ("1", a.scale), f"sign-flipped x{a.flip:g}": ("1", a.flip)}
    table, models = {}, ({} if a.save else None)
    for name, kw in ROBUST:
        if a.aggregators and name not in a.aggregators:
            continue
        agg = "Krum" if name == "MultiKrum" else name
        for label, (who, factor) in attacks.items():
            print(f"[{name} {label} {a.side if a.processes else 'in-process'}] ...", file=sys.stderr, flush=True)
            if a.processes:
                rows, _ = run(a.side, participants=10, rounds=a.rounds, alpha=a.alpha, aggregator=agg,
                              agg_kwargs=kw, attackers=who, attack_factor=factor, lr=a.lr)
                table[name, label] = [r["accuracy"] for r in rows]
            else:
                table[name, label] = simulated(name, kw, who, factor, a, models)
    import json

    import numpy as np
    import torch
    if a.save:  # the global model of every round and the accuracies, for `robustness-compare`
        np.savez(a.save, **models, accuracy=np.array(json.dumps({"|".join(k): v for k, v in table.items()})))
    where = (f"{a.side} torch, 11 processes per run" if a.processes else
             f"one process (federated.simulate) on torch {torch.__version__} from {torch._C.__file__}")
    print(f"\nTest accuracy per round, 10 participants (Dirichlet α={a.alpha}), participant 1 attacking; "
          f"{where}\n")
    rounds = list(range(1, a.rounds + 1))
    shown = [r for r in rounds if r in (1, 2, 3, 5) or r % 5 == 0 or r == a.rounds]
    print("| aggregator | attack | " + " | ".join(f"r{r}" for r in shown) + " |")
    print("|---|---|" + "---:|" * len(shown))
    for (name, label), acc in table.items():
        print(f"| {name} | {label} | " + " | ".join(f"{acc[r - 1]:.3f}" for r in shown) + " |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    d = sub.add_parser("digits")
    d.add_argument("--alphas", type=float, nargs="+", default=[0.5, 0.1])
    d.add_argument("--sides", nargs="+", default=["ours", "upstream"], choices=["ours", "upstream"])
    d.add_argument("--participants", type=int, default=10)
    d.add_argument("--rounds", type=int, default=20)
    d.add_argument("--epochs", type=int, default=1)
    d.add_argument("--lr", type=float, default=0.1)
    r = sub.add_parser("robustness")
    r.add_argument("--side", default="ours", choices=["ours", "upstream"])
    r.add_argument("--rounds", type=int, default=10)
    r.add_argument("--alpha", type=float, default=0.5)
    r.add_argument("--lr", type=float, default=0.1)
    r.add_argument("--scale", type=float, default=10.0)
    r.add_argument("--flip", type=float, default=-5.0)
    r.add_argument("--aggregators", nargs="*", default=[])
    r.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    r.add_argument("--save", help="write every round's global model and the accuracies to this .npz")
    r.add_argument("--processes", action="store_true",
                   help="a world of 11 processes per cell (default: the rounds in this process)")
    a = ap.parse_args(argv)
    (digits if a.what == "digits" else robustness)(a)


if __name__ == "__main__":
    main()
