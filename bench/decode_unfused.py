"""bench/decode.py's unfused rows alone: SmolLM2-135M greedy decode and prefill, ours vs
upstream, same run, without the fused kernels bundle (so a bundle being edited cannot stop it).

Usage: .venv/bin/python bench/decode_unfused.py [--rounds 1] [--threads 2] [--new-tokens 64]
       [--dtype bfloat16]

The figures are decode.py's (its ``_measure``): decode tokens/s and CPU ms per token after an
8-token prompt, prefill of 128 and 512 tokens, dispatches per token, and the process's peak
resident memory (MB).
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402
import decode  # noqa: E402


def worker(threads: int, new_tokens: int, dtype: str) -> None:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from torchnative.apps.chat import load

    torch.set_num_threads(threads)
    _, model = load(None, None, quiet=True, dtype=getattr(torch, dtype))
    result = {}
    prompt = torch.tensor([[1, 504, 3458, 282, 4649, 314, 6, 7]])
    with torch.inference_mode():
        decode._measure(model, prompt, new_tokens, "", result)
    result["peak memory MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _harness.emit(result)


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    args, _ = ap.parse_known_args()
    h = _harness.worker_args()
    if h.worker:
        worker(h.threads, args.new_tokens, args.dtype)
        return
    _harness.compare(Path(__file__), h.rounds, h.threads,
                     ["--new-tokens", str(args.new_tokens), "--dtype", args.dtype], unit="")


if __name__ == "__main__":
    main()
