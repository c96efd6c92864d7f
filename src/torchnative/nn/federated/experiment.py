"""The digits experiment as processes: one worker per rank (`python -m
torchnative.nn.federated.experiment --rank R ...`), a launcher that starts a whole world, and
centralized training for comparison. Used by bench/federated.py, `torchnative federated` and
the tests; plain torch code, so it runs on upstream torch as well as ours.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def worker_args(argv=None):
    ap = argparse.ArgumentParser(prog="torchnative.nn.federated.experiment")
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--aggregator", default="FedAvg")
    ap.add_argument("--agg-kwargs", default="{}", help="JSON keyword arguments of the aggregator")
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--select", type=float, default=1.0)
    ap.add_argument("--min-participants", type=int, default=1)
    ap.add_argument("--on-missing", default="proceed")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--first-timeout", type=float, default=None, help="round 1's timeout (cold processes)")
    ap.add_argument("--late-timeout", type=float, default=None)
    ap.add_argument("--max-payload-bytes", type=int, default=16 * 2**20)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--attackers", default="", help="comma-separated participant ids")
    ap.add_argument("--attack-factor", type=float, default=1.0)
    ap.add_argument("--privacy", default="none", choices=PRIVACY,
                    help="differential privacy: client-side (local) noise, server-side fixed or adaptive clipping")
    ap.add_argument("--clip-norm", type=float, default=1.0, help="DP clipping norm (adaptive: the initial one)")
    ap.add_argument("--noise-multiplier", type=float, default=1.0)
    ap.add_argument("--privacy-delta", type=float, default=1e-5)
    ap.add_argument("--secagg", action="store_true", help="SecAgg+ (num_shares 5, threshold 3)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--save-globals", action="store_true")
    ap.add_argument("--save-deltas", action="store_true")
    return ap.parse_args(argv)


PRIVACY = ("none", "local", "fixed", "adaptive")


def privacy_transform(args):
    """The transform named by --privacy/--secagg (None for neither)."""
    from . import privacy
    if args.secagg and args.privacy != "none":
        raise SystemExit("--secagg with --privacy: the Engine takes one transform")
    if args.secagg:
        from .secagg.engine_transform import SecureAggregation
        return SecureAggregation(num_shares=min(5, args.world - 1), threshold=min(3, args.world - 1))
    z, c = args.noise_multiplier, args.clip_norm
    if args.privacy == "local":
        return privacy.LocalGaussian(c, z, seed=args.seed)
    if args.privacy == "fixed":
        return privacy.FixedClipping(c, z, seed=args.seed)
    if args.privacy == "adaptive":
        cohort = max(args.min_participants, math.ceil(args.select * (args.world - 1)))
        return privacy.AdaptiveClipping(z, cohort, initial_clip_norm=c, seed=args.seed)
    return None


def build(args, transform=None):
    """The engine of this rank and its batches (None on the coordinator)."""
    import torch

    from . import digits
    from .aggregators import ALL
    from .attacks import Scale
    from .engine import Engine

    dtype = getattr(torch, args.dtype)
    xtr, ytr, xte, yte = digits.load(args.seed)
    net = digits.model(args.seed, dtype=dtype)
    if args.aggregator not in ALL:
        raise SystemExit(f"unknown aggregator {args.aggregator!r}; choose from {sorted(ALL)}")
    agg = ALL[args.aggregator](**json.loads(args.agg_kwargs))
    if transform is None and args.attackers:
        transform = Scale([int(a) for a in args.attackers.split(",")], args.attack_factor)
    if transform is None:
        if args.attackers and (args.secagg or args.privacy != "none"):
            raise SystemExit("--attackers with --privacy/--secagg: the Engine takes one transform")
        transform = privacy_transform(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = []

    def on_round(report, model_or_update):
        if args.rank == 0:
            acc = digits.accuracy(model_or_update, xte, yte, dtype)
            row = {"round": report.round, "accuracy": acc, "selected": report.selected,
                   "reported": report.reported, "weights": {str(k): v for k, v in report.weights.items()},
                   "dropped": {str(k): v for k, v in report.dropped.items()},
                   "refused": {str(k): v for k, v in report.refused.items()},
                   "stale": [list(s) for s in report.stale], "bytes_down": report.bytes_down,
                   "bytes_up": report.bytes_up, "seconds": report.seconds,
                   "epsilon": report.epsilon, "delta": report.delta,
                   "sample_rate": len(report.selected) / max(1, report.available)}
            log.append(row)
            dp = "" if report.epsilon is None else f"  (epsilon, delta) = ({report.epsilon:.3f}, {report.delta:g})"
            print(f"round {report.round:3d}  accuracy {acc:.4f}  reported {len(report.reported)}/"
                  f"{len(report.selected)}  bytes {report.bytes_down + report.bytes_up}{dp}", flush=True)
            (out / "rounds.json").write_text(json.dumps(log, indent=1))
            if args.save_globals:
                np.savez(out / f"global_r{report.round}.npz",
                         **{n: p.detach().numpy() for n, p in model_or_update.named_parameters()})
        elif args.save_deltas:
            np.savez(out / f"delta_r{report.round}_p{args.rank}.npz", __num_samples=report.num_samples,
                     **{n: t.detach().numpy() for n, t in model_or_update.items()})

    engine = Engine(net, rounds=args.rounds, aggregator=agg, select=args.select,
                    min_participants=args.min_participants, on_missing=args.on_missing,
                    timeout=(args.timeout if args.first_timeout is None else
                             lambda r: args.first_timeout if r == 1 else args.timeout),
                    late_timeout=args.late_timeout,
                    max_payload_bytes=args.max_payload_bytes, lr=args.lr, epochs=args.epochs,
                    transform=transform, seed=args.seed, rank=args.rank, world_size=args.world,
                    address=("127.0.0.1", args.port), on_round=on_round,
                    privacy_delta=args.privacy_delta)
    if args.rank == 0:
        if args.save_globals:
            np.savez(out / "global_r0.npz", **{n: p.detach().numpy() for n, p in net.named_parameters()})
        return engine, None
    parts = digits.dirichlet_split(ytr, args.world - 1, args.alpha, args.seed)
    idx = parts[args.rank - 1]
    return engine, digits.batches(xtr[idx], ytr[idx], args.batch_size, dtype)


def worker(argv=None, transform=None) -> int:
    args = worker_args(argv)
    from .errors import FederatedError, QuorumError, RejectedUpdate
    engine, data = build(args, transform)
    import torch
    Path(args.out, f"torch_rank{args.rank}.txt").write_text(str(torch._C.__file__))
    try:
        engine.participate(data)
    except (QuorumError, FederatedError, RejectedUpdate) as e:
        Path(args.out, f"error_rank{args.rank}.txt").write_text(f"{type(e).__name__}: {e}")
        print(f"rank {args.rank}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return 3
    if args.rank != 0:
        Path(args.out, f"participant_{args.rank}.json").write_text(json.dumps(
            [vars(r) for r in engine.history]))
    if args.secagg:  # the bulletin board's traffic through the store, this process's share
        from .secagg import engine_transform
        Path(args.out, f"bulletin_bytes_rank{args.rank}.txt").write_text(str(engine_transform.BULLETIN_BYTES[0]))
    return 0


# ---------------------------------------------------------------------- launching a world
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def src_dir() -> str:
    return str(Path(__file__).resolve().parents[3])


def command(python: str, module: str, rank: int, world: int, port: int, extra: list) -> list:
    return [python, "-m", module, "--rank", str(rank), "--world", str(world), "--port", str(port), *extra]


def launch(world: int, extra: list, *, python: str = sys.executable, timeout: float = 600,
           module: str = "torchnative.nn.federated.experiment", env: dict | None = None,
           per_rank: dict | None = None, stream: bool = False) -> dict:
    """Start ranks 0..world-1 as processes, wait for all (killing them all at `timeout`).
    `per_rank` maps a rank to extra arguments for that rank only. Returns rank -> (code, stderr)."""
    port = free_port()
    e = dict(os.environ if env is None else env)
    e["PYTHONPATH"] = os.pathsep.join(p for p in (src_dir(), e.get("PYTHONPATH", "")) if p)
    e.setdefault("OMP_NUM_THREADS", "1")
    procs = {}
    for r in range(world):
        cmd = command(python, module, r, world, port, extra + list((per_rank or {}).get(r, [])))
        procs[r] = subprocess.Popen(cmd, env=e, stdout=None if (stream and r == 0) else subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    results = {}
    try:
        for r, p in procs.items():
            left = max(1.0, deadline - time.monotonic())
            _, err = p.communicate(timeout=left)
            results[r] = (p.returncode, err[-4000:])
    except subprocess.TimeoutExpired:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        raise TimeoutError(f"federated world of {world} did not finish within {timeout} s")
    return results


def centralized(rounds: int, epochs: int, lr: float, batch_size: int = 16, seed: int = 0, dtype="float32") -> list:
    """Accuracy after each of `rounds` passes of `epochs` epochs over all training data."""
    import torch
    import torch.nn.functional as F

    from . import digits
    dt = getattr(torch, dtype)
    xtr, ytr, xte, yte = digits.load(seed)
    net = digits.model(seed, dtype=dt)
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    data = digits.batches(xtr, ytr, batch_size, dt)
    accs = []
    for _ in range(rounds):
        for _ in range(epochs):
            for x, y in data:
                opt.zero_grad()
                F.cross_entropy(net(x), y).backward()
                opt.step()
        accs.append(digits.accuracy(net, xte, yte, dt))
    return accs


if __name__ == "__main__":
    sys.exit(worker())


# ---------------------------------------------------------------------- one experiment, one table
def run_experiment(*, python: str = sys.executable, participants: int = 10, rounds: int = 10,
                   alpha: float = 0.5, aggregator: str = "FedAvg", agg_kwargs: dict | None = None,
                   attackers: str = "", attack_factor: float = 1.0, lr: float = 0.1, epochs: int = 1,
                   out: str | None = None, progress: bool = False, env: dict | None = None,
                   timeout: float = 3600, extra_args: list = ()) -> list:
    """Run a world of `participants` + 1 processes; the coordinator's per-round rows."""
    import tempfile
    out = out or tempfile.mkdtemp(prefix="federated-")
    extra = ["--rounds", str(rounds), "--alpha", str(alpha), "--aggregator", aggregator,
             "--agg-kwargs", json.dumps(agg_kwargs or {}), "--lr", str(lr), "--epochs", str(epochs),
             "--first-timeout", "600", "--timeout", "300", "--out", out]
    if attackers:
        extra += ["--attackers", attackers, "--attack-factor", str(attack_factor)]
    extra += list(extra_args)
    res = launch(participants + 1, extra, python=python, timeout=timeout, env=env, stream=progress)
    bad = {r: (c, e[-800:]) for r, (c, e) in res.items() if c != 0}
    if bad:
        raise RuntimeError(f"federated run failed: {bad}")
    return json.loads(Path(out, "rounds.json").read_text())


def cli_main(argv=None) -> int:
    """`torchnative federated`: the digits experiment on this machine, a table at the end."""
    ap = argparse.ArgumentParser(prog="torchnative federated",
                                 description="Federated digits: N participants (processes) with "
                                             "Dirichlet label skew, against centralized training.")
    ap.add_argument("--participants", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--aggregator", default="FedAvg")
    ap.add_argument("--agg-kwargs", default="{}")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--attackers", default="", help="participant ids sending scaled updates, e.g. 1")
    ap.add_argument("--attack-factor", type=float, default=-10.0)
    ap.add_argument("--privacy", default="none", choices=PRIVACY,
                    help="differential privacy: local (client-side noise), fixed or adaptive (server-side clipping)")
    ap.add_argument("--clip-norm", type=float, default=1.0)
    ap.add_argument("--noise-multiplier", type=float, default=1.0)
    ap.add_argument("--privacy-delta", type=float, default=1e-5)
    ap.add_argument("--secagg", action="store_true", help="secure aggregation (SecAgg+)")
    ap.add_argument("--select", type=float, default=1.0, help="fraction of participants per round")
    ap.add_argument("--out", default=None, help="directory for the per-round log (rounds.json)")
    a = ap.parse_args(argv)
    from .aggregators import ALL
    if a.aggregator not in ALL:
        ap.error(f"unknown aggregator {a.aggregator!r}; choose from {', '.join(sorted(ALL))}")
    if a.participants < 1 or a.rounds < 1 or a.alpha <= 0:
        ap.error("--participants and --rounds must be >= 1, --alpha > 0")
    if a.attackers and (a.secagg or a.privacy != "none") or (a.secagg and a.privacy != "none"):
        ap.error("--attackers, --privacy and --secagg each set the run's one transform: choose one")
    if not 0 < a.privacy_delta < 1 or a.clip_norm <= 0 or a.noise_multiplier < 0 or not 0 < a.select <= 1:
        ap.error("--privacy-delta must lie in (0, 1), --clip-norm > 0, --noise-multiplier >= 0, "
                 "--select in (0, 1]")
    extra = ["--privacy", a.privacy, "--clip-norm", str(a.clip_norm), "--noise-multiplier",
             str(a.noise_multiplier), "--privacy-delta", str(a.privacy_delta), "--select", str(a.select)] \
        + (["--secagg"] if a.secagg else [])
    print(f"{a.participants} participants, alpha={a.alpha}, {a.aggregator}, {a.rounds} rounds "
          f"(processes starting; progress per round below)", flush=True)
    rows = run_experiment(participants=a.participants, rounds=a.rounds, alpha=a.alpha,
                          aggregator=a.aggregator, agg_kwargs=json.loads(a.agg_kwargs),
                          attackers=a.attackers, attack_factor=a.attack_factor, lr=a.lr,
                          epochs=a.epochs, progress=True, extra_args=extra, out=a.out)
    central = centralized(a.rounds, a.epochs, a.lr)
    dp = a.privacy != "none"
    print("\n| round | federated accuracy | centralized accuracy | reported | bytes |" + (" epsilon |" if dp else ""))
    print("|---:|---:|---:|---:|---:|" + ("---:|" if dp else ""))
    for row, c in zip(rows, central):
        print(f"| {row['round']} | {row['accuracy']:.4f} | {c:.4f} | {len(row['reported'])}/"
              f"{len(row['selected'])} | {row['bytes_down'] + row['bytes_up']} |"
              + (f" {row['epsilon']:.4f} |" if dp else ""))
    if dp:
        print(f"\nprivacy ({a.privacy}, noise multiplier {a.noise_multiplier:g}, clip {a.clip_norm:g}): "
              f"(epsilon, delta) = ({rows[-1]['epsilon']:.4f}, {rows[-1]['delta']:g}) after {len(rows)} rounds "
              f"(RDP accountant, sample rate {rows[-1]['sample_rate']:g} per round)")
    return 0
