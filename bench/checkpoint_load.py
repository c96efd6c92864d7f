"""The chat's checkpoint load, ours vs upstream in the same run: SmolLM2-135M-Instruct's GGUF
file (Q4_1, dequantized to float32 by transformers) through ``from_pretrained``, as
``./run.sh chat`` loads it (torchnative.apps.chat.load).

Usage: .venv/bin/python bench/checkpoint_load.py [--rounds 3] [--threads 1] [--collector-on]

Each round starts one fresh interpreter per side (the sides alternate); the worker imports torch
and transformers untimed (torchvision hidden on both sides: only ours' environment holds it), then
times the load (wall and CPU time of the process, children included) and the time Python's
cyclic collector ran during it (``gc.callbacks``). ``--collector-on`` leaves the collector on
during the load (which pauses it: ``apps/chat.py``'s ``collector_paused``). Reported: medians
over rounds and the ratio ours/upstream.
"""

from __future__ import annotations

import contextlib
import gc
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness  # noqa: E402


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def worker(threads: int, collector_on: bool = False) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # upstream's side too
    # transformers imports torchvision whenever it is importable (its image utilities), and only
    # ours' environment has it in site-packages (the index's torchvision for upstream's torch is a
    # CUDA build, kept out of upstream's environment by tools/setup.sh): hidden on both sides, so
    # the two loads import the same packages
    sys.modules["torchvision"] = None
    import torch
    import transformers  # noqa: F401

    from torchnative.apps import chat

    if collector_on:
        chat.collector_paused = contextlib.nullcontext
    collecting = [0.0, 0.0]   # seconds in the collector, the current collection's start

    def timed(phase, info):
        if phase == "start":
            collecting[1] = time.perf_counter()
        else:
            collecting[0] += time.perf_counter() - collecting[1]

    torch.set_num_threads(threads)
    gc.callbacks.append(timed)
    w0, c0 = time.perf_counter(), _cpu()
    tok, model = chat.load(None, None, quiet=True)
    w1, c1 = time.perf_counter(), _cpu()
    gc.callbacks.remove(timed)
    n = sum(p.numel() for p in model.parameters())
    assert n > 100_000_000, n  # the whole model was built
    _harness.emit({"load wall": (w1 - w0) * 1e3, "load cpu": (c1 - c0) * 1e3,
                   "collector during the load": collecting[0] * 1e3})


def main() -> None:
    on = "--collector-on" in sys.argv
    args = _harness.worker_args()
    if args.worker:
        worker(args.threads, on)
        return
    _harness.compare(Path(__file__), args.rounds, args.threads,
                     ["--collector-on"] if on else [], unit="ms")


if __name__ == "__main__":
    main()
