"""SmolLM2-135M greedy decode and prefill, ours vs upstream, measured in the same run.

Usage: .venv/bin/python bench/decode.py [--rounds 1] [--threads 2] [--new-tokens 64]

Each side loads the real checkpoint (not timed), then times: greedy decode of ``--new-tokens``
tokens after an 8-token prompt with the KV cache on (tokens/s), and a prefill forward of 128 and
512 tokens (tokens/s). Peak resident memory of each process is reported too (MB).
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def worker(threads: int, new_tokens: int) -> None:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from torchnative.apps.chat import load

    torch.set_num_threads(threads)
    tok, model = load(None, None, quiet=True)
    result = {}
    prompt = torch.tensor([[1, 504, 3458, 282, 4649, 314, 6, 7]])
    with torch.inference_mode():
        model.generate(prompt, max_new_tokens=2, do_sample=False)  # warm up
        t = time.perf_counter()
        out = model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             do_sample=False)
        dt = time.perf_counter() - t
        result["decode tokens/s"] = (out.shape[1] - prompt.shape[1]) / dt
        for n in (128, 512):
            ids = torch.arange(n).remainder(1000).add(10).reshape(1, n)
            t = time.perf_counter()
            model(ids)
            result[f"prefill {n} tokens/s"] = n / (time.perf_counter() - t)
    result["peak memory MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _harness.emit(result)


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--new-tokens", type=int, default=64)
    args, _ = ap.parse_known_args()
    h = _harness.worker_args()
    if h.worker:
        worker(h.threads, args.new_tokens)
        return
    _harness.compare(Path(__file__), h.rounds, h.threads, ["--new-tokens", str(args.new_tokens)],
                     unit="")


if __name__ == "__main__":
    main()
