"""Federated digits: accuracy per round against centralized training, bytes per round, and
seconds per round on our torch and on upstream torch measured in the same invocation; and the
robustness table (one of ten participants sends scaled or sign-flipped updates).

    .venv/bin/python bench/federated.py digits --rounds 20
    .venv/bin/python bench/federated.py robustness --rounds 10            # in one process
    .venv/bin/python bench/federated.py robustness --rounds 10 --processes --side upstream
    .venv/bin/python bench/federated.py overhead --rounds 3               # SecAgg+ and DP vs FedAvg

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


def overhead_rows(z, clip):
    dp = ["--noise-multiplier", str(z), "--clip-norm", str(clip)]
    return [("FedAvg", []), ("SecAgg+ (5 shares, threshold 3)", ["--secagg"]),
            ("DP client-side", ["--privacy", "local", *dp]),
            ("DP server-side fixed clipping", ["--privacy", "fixed", *dp]),
            ("DP server-side adaptive clipping", ["--privacy", "adaptive", *dp])]


def overhead(a):
    """Each privacy mechanism as a real world of processes, against plain FedAvg on the same side:
    seconds per round (median of rounds 2.., round 1 pays start-up), bytes per round on the
    participant links, and for SecAgg+ the bulletin board's traffic through the store."""
    import tempfile
    res = {}
    rows_spec = overhead_rows(a.noise_multiplier, a.clip_norm)
    for label, extra in rows_spec:
        for side in a.sides:
            print(f"[{label} {side}] ...", file=sys.stderr, flush=True)
            out = Path(tempfile.mkdtemp(prefix="federated-overhead-"))
            t0 = time.monotonic()
            rows = experiment.run_experiment(python=PYTHON[side], env=env_for(side), participants=a.participants,
                                             rounds=a.rounds, alpha=a.alpha, lr=a.lr, out=str(out), extra_args=extra)
            wall = time.monotonic() - t0
            board = sum(int(f.read_text()) for f in out.glob("bulletin_bytes_rank*.txt"))
            res[label, side] = (rows, wall, board)
    print(f"\nOverhead per round, {a.participants} participants, {a.rounds} rounds, Dirichlet α={a.alpha}; "
          f"DP: noise multiplier {a.noise_multiplier:g}, clipping norm {a.clip_norm:g} (adaptive: initial), "
          f"δ = 1e-5; one process per participant + a coordinator\n")
    print("| mechanism | side | median s per round | × FedAvg | link bytes per round | × FedAvg | "
          "store bytes per round | final accuracy | ε after the run |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, _ in rows_spec:
        for side in a.sides:
            rows, wall, board = res[label, side]
            base = res["FedAvg", side][0]
            sec = statistics.median(r["seconds"] for r in rows[1:] or rows)
            sec0 = statistics.median(r["seconds"] for r in base[1:] or base)
            b = statistics.median(r["bytes_down"] + r["bytes_up"] for r in rows)
            b0 = statistics.median(r["bytes_down"] + r["bytes_up"] for r in base)
            eps = rows[-1].get("epsilon")
            print(f"| {label} | {side} | {sec:.3f} | {sec / sec0:.2f} | {b:.0f} | {b / b0:.2f} | "
                  f"{board / len(rows):.0f} | {rows[-1]['accuracy']:.4f} | "
                  f"{'-' if eps is None else f'{eps:.3f}'} |")


ROBUST = [("FedAvg", {}), ("FedMedian", {}), ("FedTrimmedAvg", {"beta": 0.2}),
          ("Krum", {"num_malicious": 1}), ("MultiKrum", {"num_malicious": 1, "to_keep": 5}),
          ("Bulyan", {"num_malicious": 1})]


def simulated(name, kw, who, factor, a, models=None, alpha=None, absent=(), wrap=None):
    """The rounds in this process (federated.simulate): same steps as the engine, no transport.
    `models`, if given, receives every round's global model (name -> float64 numpy); `absent`
    participants take no part; `wrap(aggregator)` may stand in for the aggregator."""
    import torch
    from torchnative.nn.federated import attacks, digits
    from torchnative.nn.federated.aggregators import ALL
    from torchnative.nn.federated.simulate import simulate
    dtype = getattr(torch, a.dtype)
    xtr, ytr, xte, yte = digits.load(0)
    parts = digits.dirichlet_split(ytr, 10, a.alpha if alpha is None else alpha, 0)
    data = {i + 1: digits.batches(xtr[p], ytr[p], dtype=dtype) for i, p in enumerate(parts) if i + 1 not in absent}
    net = digits.model(0, dtype=dtype)
    acc = []

    def on_round(r, m):
        acc.append(digits.accuracy(m, xte, yte, dtype=dtype))
        if models is not None:
            for n, p in m.named_parameters():
                models[f"{name}|{who}|{factor:g}|r{r}|{n}"] = p.detach().double().numpy().copy()

    agg = ALL["Krum" if name == "MultiKrum" else name](**kw)
    simulate(net, data, rounds=a.rounds, aggregator=wrap(agg) if wrap else agg,
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


class FlowerCheck:
    """Aggregates with ours and, on the same participant models, with Flower's numpy function of
    the same rule; keeps the largest difference relative to the round's largest update."""

    def __init__(self, agg, flower_fn):
        self.agg, self.flower_fn, self.worst = agg, flower_fn, 0.0
        self.proximal_mu = agg.proximal_mu

    def reset(self):
        self.agg.reset()

    def __call__(self, g, updates, weights, r):
        import numpy as np
        new = self.agg(g, updates, weights, r)
        names = list(g)
        theirs = self.flower_fn([([(g[n] + u[n]).numpy() for n in names], w) for u, w in zip(updates, weights)])
        scale = max(float(u[n].abs().max()) for u in updates for n in names)
        diff = max(float(np.abs(new[n].numpy() - t).max()) for n, t in zip(names, theirs))
        self.worst = max(self.worst, diff / scale)
        return new


def robustness_check(a):
    """Why do the coordinate-wise rules lose accuracy to one sign-flipping participant? For each
    rule: participant 1 absent, flipped x-1, x-5, x-100, at the run's Dirichlet skew and near
    IID (alpha 100); every round also aggregated by Flower's function on the same models."""
    from flwr.server.strategy.aggregate import aggregate_median, aggregate_trimmed_avg
    flower = {"FedMedian": aggregate_median, "FedTrimmedAvg": lambda res: aggregate_trimmed_avg(res, 0.2)}
    variants = [("clean", "", 1.0, ()), ("participant 1 absent", "", 1.0, (1,)),
                ("flip x-1", "1", -1.0, ()), ("flip x-5", "1", -5.0, ()), ("flip x-100", "1", -100.0, ())]
    print("| aggregator | α | " + " | ".join(v[0] for v in variants) + " | largest difference from Flower (relative) |")
    print("|---|---:|" + "---:|" * len(variants) + "---:|")
    for name, kw in [r for r in ROBUST if r[0] in ("FedAvg", "FedMedian", "FedTrimmedAvg")]:
        for alpha in (a.alpha, 100.0):
            accs, worst = [], 0.0
            for label, who, factor, absent in variants:
                print(f"[{name} α={alpha} {label}] ...", file=sys.stderr, flush=True)
                checks = []

                def wrap(agg):
                    checks.append(FlowerCheck(agg, flower[name]))
                    return checks[-1]
                acc = simulated(name, kw, who, factor, a, alpha=alpha, absent=absent,
                                wrap=wrap if name in flower else None)
                accs.append(acc[-1])
                worst = max([worst] + [c.worst for c in checks])
            print(f"| {name} | {alpha:g} | " + " | ".join(f"{x:.3f}" for x in accs) + " | "
                  + (f"{worst:.1e}" if name in flower else "-") + " |", flush=True)


def robustness_compare(a):
    """Ours against upstream on the saved sweeps: the same accuracies, and every round's global
    model within upstream's own float32 error (its float64 rerun decides the tolerance)."""
    import json

    import numpy as np
    sys.path.insert(0, str(ROOT / "tests" / "federated_programs"))
    from tolerance import within
    z = {k: np.load(getattr(a, k)) for k in ("ours", "upstream", "upstream64")}
    acc = {k: json.loads(str(z[k]["accuracy"])) for k in ("ours", "upstream")}
    cells = sorted({k.split("|r")[0] for k in z["ours"].files if "|r" in k})
    print("| aggregator | attacker | factor | rounds | accuracies identical | models agree (rounds) | "
          "worst p90 / tolerance | largest difference |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    bad = 0
    for cell in cells:
        rounds = sorted({int(k.split("|r")[1].split("|")[0]) for k in z["ours"].files if k.startswith(cell + "|r")})
        agree, worst, largest = 0, 0.0, 0.0
        for r in rounds:
            keys = sorted(k for k in z["ours"].files if k.startswith(f"{cell}|r{r}|"))
            vec = {s: np.concatenate([z[s][k].ravel() for k in keys]) for s in z}
            ok, fig = within(vec["ours"], vec["upstream"], vec["upstream64"])
            agree += ok
            worst = max(worst, fig["p90"] / fig["tol"])
            largest = max(largest, float(np.abs(vec["ours"] - vec["upstream"]).max()))
        name, who, factor = cell.split("|")
        label = next(l for l, v in acc["ours"].items() if l.startswith(name + "|") and
                     (("none" in l) == (who == "")) and (who == "" or
                     (("scaled" in l) == (float(factor) > 0))))
        same = acc["ours"][label] == acc["upstream"][label]
        bad += (not same) + (agree != len(rounds))
        print(f"| {name} | {who or '-'} | {factor} | {len(rounds)} | {'yes' if same else 'NO'} | "
              f"{agree}/{len(rounds)} | {worst:.2f} | {largest:.2e} |")
    print(f"\n{'all cells agree' if not bad else f'{bad} disagreements'}")
    return 1 if bad else 0


def _experiment_args(p, rounds: int, sides: bool = False):
    p.add_argument("--rounds", type=int, default=rounds)
    p.add_argument("--alpha", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.1)
    if sides:
        p.add_argument("--sides", nargs="+", default=["ours", "upstream"], choices=["ours", "upstream"])
        p.add_argument("--participants", type=int, default=10)
    return p


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    d = _experiment_args(sub.add_parser("digits"), 20, sides=True)
    d.add_argument("--alphas", type=float, nargs="+", default=[0.5, 0.1])
    d.add_argument("--epochs", type=int, default=1)
    o = _experiment_args(sub.add_parser("overhead"), 3, sides=True)
    o.add_argument("--noise-multiplier", type=float, default=0.5)
    o.add_argument("--clip-norm", type=float, default=1.0)
    for name in ("robustness", "robustness-check"):
        r = _experiment_args(sub.add_parser(name), 10 if name == "robustness" else 12)
        r.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    r = sub.choices["robustness"]
    r.add_argument("--side", default="ours", choices=["ours", "upstream"])
    r.add_argument("--scale", type=float, default=10.0)
    r.add_argument("--flip", type=float, default=-5.0)
    r.add_argument("--aggregators", nargs="*", default=[])
    r.add_argument("--save", help="write every round's global model and the accuracies to this .npz")
    r.add_argument("--processes", action="store_true",
                   help="a world of 11 processes per cell (default: the rounds in this process)")
    cmp = sub.add_parser("robustness-compare")
    for side in ("ours", "upstream", "upstream64"):
        cmp.add_argument(f"--{side}", required=True, help=f"the .npz of `robustness --save` ({side})")
    a = ap.parse_args(argv)
    return {"robustness-compare": robustness_compare, "digits": digits, "overhead": overhead, "robustness": robustness,
     "robustness-check": robustness_check}[a.what](a)


if __name__ == "__main__":
    sys.exit(main())
