"""Where a SmolLM2 decode step's time goes on our torch (a profile, not a comparison).

Usage: .venv/bin/python bench/profile_decode.py [--threads 1] [--new-tokens 16] [--kernels [--attention]]
       [--top 25] [--dtype bfloat16] [--prefill 128]

``--prefill N`` profiles one forward over an N-token prompt (bench/decode.py's prefill ids)
instead of the decode; its figures are per forward, not per token.

Three measurements of the same greedy decode (CPU time, so other processes' load counts less):
1. the step as it runs: CPU ms per token;
2. every kernel the door resolved, timed exclusively (a kernel that calls other operators does
   not count their time): CPU ms per token and per call, by overload and path -- the rest of
   the step is everything above the kernels (bindings, the door, autograd checks, nn.Module and
   transformers' own Python);
3. a cProfile of the step with each function's own time summed by layer (bindings, door,
   kernels, tensor construction, BLAS, numpy, torch.nn, transformers). cProfile inflates Python
   relative to C, so read its shares within the layers above the kernels, not against (2).
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402
from _kernel_timing import kernels_timed  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

# file-path fragments -> layer, first match wins (BLAS is numpy's dot/matmul called by kernels)
LAYERS = (
    ("csrc/python/", "bindings (argument parsing)"),
    ("csrc/dispatch/", "door"),
    ("csrc/autograd/", "autograd checks"),
    ("csrc/core/", "tensor construction and metadata"),
    ("csrc/kernels/", "kernels (their Python)"),
    ("csrc/", "other torchnative"),
    ("torchnative/kernels/", "fused kernels bundle"),
    ("torchnative-kernels/bundle/", "fused kernels bundle"),  # as the set-up installs it
    ("site-packages/transformers/", "transformers"),
    ("site-packages/torch/", "torch (nn.Module, functional)"),
    ("site-packages/numpy/", "numpy's Python"),
)


def _layer(filename: str, func: str) -> str:
    if filename.endswith("csrc/kernels/fast.py") and func == "linear":
        # cProfile does not see numpy's dot as a call of its own: the product is linear's time
        return "linear (its BLAS product inside)"
    if filename == "~":
        if "dot" in func or "matmul" in func:
            return "BLAS (numpy dot/matmul)"
        return "numpy and builtins (C)"
    for frag, name in LAYERS:
        if frag in filename:
            return name
    return "other Python"


def _decode(model, prompt, n):
    model.generate(prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--kernels", action="store_true", help="the fused kernels bundle swapped in")
    ap.add_argument("--attention", action="store_true",
                    help="with --kernels: the bundle's attention function too")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32",
                    help="the dtype the checkpoint is loaded in")
    ap.add_argument("--prefill", type=int, default=0, metavar="N",
                    help="profile one forward over an N-token prompt instead of the decode")
    args = ap.parse_args()

    import torch

    sys.path.insert(0, str(REPO / "src"))
    from torchnative.apps.chat import load

    torch.set_num_threads(args.threads)
    _, model = load(None, None, quiet=True, dtype=getattr(torch, args.dtype))
    prompt = torch.tensor([[1, 504, 3458, 282, 4649, 314, 6, 7]])
    n = args.new_tokens
    work = _decode
    if args.prefill:   # one forward per measurement: figures per forward
        ids = torch.arange(args.prefill).remainder(1000).add(10).reshape(1, args.prefill)
        work, n = (lambda model, prompt, n: model(ids)), 1
    with torch.inference_mode():
        if args.kernels:
            model.set_use_kernels(True)
            if args.attention:
                model.set_attn_implementation("torchnative/cpu-kernels:attention")
        work(model, prompt, 6)  # five decode steps (the huge-pages opt-in's move is waited for)
        _harness.settle_huge_pages()
        c = time.process_time()
        work(model, prompt, n)
        step = (time.process_time() - c) / n * 1e3

        with kernels_timed(lambda impl: f"{impl.name} [{impl.path}]") as (excl, calls):
            c = time.process_time()
            work(model, prompt, n)
            timed_step = (time.process_time() - c) / n * 1e3

        prof = cProfile.Profile(time.process_time)
        prof.enable()
        work(model, prompt, n)
        prof.disable()

    kernels = sum(excl.values()) / n * 1e3
    what = f"prefill {args.prefill}" if args.prefill else "decode step"
    unit = "forward" if args.prefill else "token"
    print(f"{what}: {step:.1f} CPU ms/{unit} ({args.threads} thread(s), "
          f"{'kernels bundle' if args.kernels else 'unfused'}); "
          f"{sum(calls.values()) // n} door kernels per {unit}"
          f"{'' if args.prefill else ' (prompt prefill included once)'}")
    print(f"with every kernel timed: {timed_step:.1f} ms/{unit}, of which kernels {kernels:.1f} "
          f"(exclusive); above the kernels {timed_step - kernels:.1f}")
    print(f"\n| kernel [path] | CPU ms/{unit} | calls/{unit} | us/call |\n|---|---|---|---|")
    for name, t in excl.most_common(args.top):
        print(f"| {name} | {t / n * 1e3:.2f} | {calls[name] / n:.0f} | "
              f"{t / calls[name] * 1e6:.1f} |")

    by = collections.Counter()
    for (filename, _, func), (_, _, tt, _, _) in pstats.Stats(prof).stats.items():
        by[_layer(filename, func)] += tt
    total = sum(by.values())
    print("\n| layer (cProfile own time) | share |\n|---|---|")
    for name, t in by.most_common():
        print(f"| {name} | {100 * t / total:.1f}% |")


if __name__ == "__main__":
    main()
