"""SmolLM2-135M's weights on 4 KiB pages and on huge pages (csrc/platform/huge_pages.py): ours
with the collapse (``TORCHNATIVE_HUGE_PAGES=1``), ours without it (``=0``) and upstream, in
alternating processes, 1 thread.

Usage: .venv/bin/python bench/huge_pages.py [--rounds 3] [--new-tokens 32]
       .venv/bin/python bench/huge_pages.py --first 12 100 [--rounds 3]
       .venv/bin/python bench/huge_pages.py --faults     (what a fresh huge page costs here)

Each process loads the chat's checkpoint (not timed), decodes eight tokens (ours' weights
qualify for the collapse at their fourth one-row product, the fifth token), then, on ours, waits
for the background thread to finish and reports its CPU time (the one-off cost) and the resident
huge pages. Then: the step's 211 matrix products alone (every ``nn.Linear`` once on a one-token
input, CPU ms, median of 7) and the greedy decode (CPU ms per token, median of 3). Lower is
better; the ratios are against upstream measured in the same run.

``--first N [N ...]`` times what a new process pays: the first greedy generation of N tokens
right after the load (wall and CPU s of the process; ours' thread may still be collapsing), the
three sides alternating ``--rounds`` times.

``--faults`` times, in one process, writing 512 MB of fresh private anonymous memory on 4 KiB
pages and on huge pages (``MADV_HUGEPAGE``), three times each: on a virtual machine whose host
takes back the guest's free 2 MiB blocks the first huge-page round pays the host's faults, which
is what the collapse pays once per weight.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

SIDES = (("ours, huge pages", "ours", {"TORCHNATIVE_HUGE_PAGES": "1"}),
         ("ours, 4 KiB pages", "ours", {"TORCHNATIVE_HUGE_PAGES": "0"}),
         ("upstream", "upstream", {}))


def _anon_huge_mb() -> float:
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _load(threads: int):
    """torch, the chat's tokenizer and float32 model, loaded as ``./run.sh`` loads them."""
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # upstream's side too
    from torchnative.apps.chat import load

    torch.set_num_threads(threads)
    return (torch, *load(None, None, quiet=True, dtype=torch.float32))


def first_worker(threads: int, new_tokens: int) -> None:
    _, tok, model = _load(threads)
    ids = tok("Once upon a time", return_tensors="pt").input_ids
    w, c = time.perf_counter(), time.process_time()
    model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)
    _harness.emit({f"first {new_tokens} tokens, wall s": time.perf_counter() - w,
                   f"first {new_tokens} tokens, CPU s": time.process_time() - c})


def worker(threads: int, new_tokens: int) -> None:
    torch, tok, model = _load(threads)
    ids = tok("Write a short story about a robot.", return_tensors="pt").input_ids
    model.generate(ids, max_new_tokens=8, min_new_tokens=8, do_sample=False)
    result = {}
    if "torchnative.csrc.platform.huge_pages" in sys.modules:
        w0 = time.perf_counter()
        cpu_ms = _harness.settle_huge_pages()
        result["collapse: wait after the warm-up, wall ms"] = (time.perf_counter() - w0) * 1e3
        result["collapse: its thread's CPU ms"] = cpu_ms
    result["huge pages resident, MB"] = _anon_huge_mb()
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    xs = {m.in_features: torch.ones(1, 1, m.in_features) for m in linears}

    def products():
        for m in linears:
            torch.nn.functional.linear(xs[m.in_features], m.weight, m.bias)

    with torch.no_grad():
        result["products alone, CPU ms"] = _harness.median_ms(products, 7,
                                                               timer=time.process_time)
    times = []
    for _ in range(3):
        c = time.process_time()
        model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)
        times.append((time.process_time() - c) / new_tokens * 1e3)
    result["decode, CPU ms per token"] = statistics.median(times)
    _harness.emit(result)


def faults() -> None:
    import mmap

    import numpy as np

    size = 512 << 20
    for round_ in range(3):
        cells = []
        for huge in (False, True):
            m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            m.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
            a = np.frombuffer(m, np.uint8)
            t = time.perf_counter()
            a[:] = 1
            ms = (time.perf_counter() - t) * 1e3
            cells.append(f"{'huge' if huge else '4 KiB'} pages {ms:.0f} ms")
            del a
            m.close()
        print(f"round {round_ + 1}: writing 512 MB of fresh memory, " + ", ".join(cells))


def _table(runs: dict, digits: int) -> None:
    cases = list(dict.fromkeys(c for r in runs.values() for c in r))
    width = max(map(len, cases))
    print(f"{'':<{width}}  " + "  ".join(f"{name:>18}" for name, _, _ in SIDES))
    for case in cases:
        cells = [statistics.median(runs[name][case]) if case in runs[name] else float("nan")
                 for name, _, _ in SIDES]
        print(f"{case:<{width}}  " + "  ".join(f"{v:>18.{digits}f}" for v in cells))


def _first(args) -> None:
    print(f"cpu: {_harness.cpu_model()}")
    print(f"load average before: {_harness.load_average()} ({args.rounds} rounds)", flush=True)
    runs: dict[str, dict[str, list[float]]] = {name: {} for name, _, _ in SIDES}
    for _ in range(args.rounds):
        for n in args.first:
            for name, side, env in SIDES:
                extra = ["--new-tokens", str(n), "--first-worker"]
                for case, value in _harness.run_worker(Path(__file__), side, args.threads, extra,
                                                       env).items():
                    runs[name].setdefault(case, []).append(value)
    print(f"load average after: {_harness.load_average()}")
    _table(runs, 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--faults", action="store_true")
    ap.add_argument("--first", type=int, nargs="+")
    ap.add_argument("--first-worker", action="store_true")
    args = ap.parse_args()
    if args.faults:
        faults()
        return
    if args.worker:
        (first_worker if args.first_worker else worker)(args.threads, args.new_tokens)
        return
    if args.first:
        _first(args)
        return
    print(f"cpu: {_harness.cpu_model()}")
    print(f"load average before: {_harness.load_average()} ({args.rounds} rounds, "
          f"{args.threads} thread(s))", flush=True)
    runs: dict[str, dict[str, list[float]]] = {name: {} for name, _, _ in SIDES}
    extra = ["--new-tokens", str(args.new_tokens)]
    for _ in range(args.rounds):
        for name, side, env in SIDES:
            for case, value in _harness.run_worker(Path(__file__), side, args.threads, extra,
                                                   env).items():
                runs[name].setdefault(case, []).append(value)
    print(f"load average after: {_harness.load_average()}")
    _table(runs, 1)
    up = runs["upstream"]
    for name, _, _ in SIDES[:2]:
        for case in ("products alone, CPU ms", "decode, CPU ms per token"):
            ratio = statistics.median(up[case]) / statistics.median(runs[name][case])
            print(f"{name}: {case} -> upstream's speed x{ratio:.2f}")


if __name__ == "__main__":
    main()
