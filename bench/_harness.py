"""Shared benchmark plumbing: run a worker under ours and under upstream, alternating, in
separate processes, and print per-case medians and the ratio ours/upstream.

Machines here are shared and noisy (2 cores): each side runs in its own process, the sides
alternate ``--rounds`` times, and the reported figure is the median over rounds of each
round's median. Thread counts are set for both sides by ``--threads``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OURS = REPO / ".venv/bin/python"
UPSTREAM = REPO / ".venv-upstream/bin/python"


def env_for(side: str, threads: int) -> dict:
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    if side == "upstream":
        env.pop("TORCH_USE_RTLD_GLOBAL", None)
    return env


def run_worker(script: Path, side: str, threads: int, extra: list[str],
               env: dict | None = None) -> dict:
    """One worker process of ``side``; ``env``: variables set for it on top of the usual."""
    python = OURS if side == "ours" else UPSTREAM
    out = subprocess.run([str(python), str(script), "--worker", "--threads", str(threads), *extra],
                         capture_output=True, text=True,
                         env={**env_for(side, threads), **(env or {})})
    if out.returncode != 0:
        raise RuntimeError(f"{side} worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def load_average() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def cpu_model() -> str:
    """The CPU's model name and vendor (figures move with them: upstream's MKL takes its own
    vendor's kernels, docs/performance.md "On an Intel Xeon")."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return "unknown"
    return (f"{fields.get('model name', 'unknown')} ({fields.get('vendor_id', '?')}, family "
            f"{fields.get('cpu family', '?')} model {fields.get('model', '?')})")


def compare(script: Path, rounds: int, threads: int, extra: list[str], unit: str = "us"):
    results: dict[str, dict[str, list[float]]] = {"ours": {}, "upstream": {}}
    print(f"cpu: {cpu_model()}")
    print(f"load average before: {load_average()} ({rounds} rounds, {threads} threads)",
          flush=True)
    for _ in range(rounds):
        for side in ("ours", "upstream"):
            for case, value in run_worker(script, side, threads, extra).items():
                results[side].setdefault(case, []).append(value)
    rows = []
    for case in results["upstream"]:
        up = statistics.median(results["upstream"][case])
        ours = statistics.median(results["ours"].get(case, [float("nan")]))
        rows.append((case, ours, up, ours / up))
    print(f"load average after: {load_average()}")
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'ours':>10}  {'upstream':>10}  ratio (ours/upstream)")
    for case, ours, up, ratio in rows:
        print(f"{case:<{width}}  {ours:>8.2f}{unit}  {up:>8.2f}{unit}  {ratio:6.2f}x")
    return rows


def worker_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args, _ = ap.parse_known_args()
    return args


def emit(result: dict) -> None:
    print(json.dumps(result))
    sys.stdout.flush()


def main(script: str, worker, unit: str = "us") -> None:
    """A bench script's entry point: in a worker process run ``worker(threads)``; otherwise
    alternate ours/upstream workers of ``script`` and print the ratios."""
    args = worker_args()
    if args.worker:
        worker(args.threads)
        return
    compare(Path(script), args.rounds, args.threads, [], unit=unit)


def settle_huge_pages() -> float:
    """Ours: wait for the background move of streamed weights onto huge pages
    (csrc/platform/huge_pages.py) that a warm-up's one-row products set off, so that it lands in
    no timed run; the thread's CPU ms so far, a one-off cost to report as its own row. NaN on
    upstream (no such step)."""
    pages = sys.modules.get("torchnative.csrc.platform.huge_pages")
    if pages is None:
        return float("nan")
    pages.drain()
    return pages.done["cpu_s"] * 1e3


def median_ms(fn, runs: int, warm: int = 1, timer=None) -> float:
    """Median time of ``runs`` calls of ``fn`` after ``warm`` unmeasured ones, in ms: wall
    time, or ``timer``'s (``time.process_time`` for CPU time)."""
    import time

    timer = timer or time.perf_counter
    for _ in range(warm):
        fn()
    times = []
    for _ in range(runs):
        t0 = timer()
        fn()
        times.append(timer() - t0)
    return statistics.median(times) * 1e3


def cpu_us_per_call(fn) -> float:
    """Median CPU time of one call of ``fn`` in µs: as many calls per repeat as fit in ~50 ms
    (at most 200), five repeats."""
    import time
    import timeit

    fn()
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    n = max(1, min(200, int(0.05 / max(one, 1e-7))))
    times = timeit.repeat(fn, number=n, repeat=5, timer=time.process_time)
    return statistics.median(times) / n * 1e6


def time_cases_worker(cases, threads: int) -> None:
    """A worker's whole job: set the thread count, time every case of ``cases(torch)``, emit."""
    import torch

    torch.set_num_threads(threads)
    emit({name: cpu_us_per_call(fn) for name, fn in cases(torch).items()})
