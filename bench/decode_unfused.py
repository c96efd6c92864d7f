"""bench/decode.py's unfused rows alone: SmolLM2-135M greedy decode and prefill, ours vs
upstream, same run, without the fused kernels bundle (so a bundle being edited cannot stop it).

Usage: .venv/bin/python bench/decode_unfused.py [--rounds 1] [--threads 2] [--new-tokens 64]
       [--dtype bfloat16] [--decode-repeats 3]

The figures are decode.py's unfused ones: decode tokens/s and CPU ms per token after an 8-token
prompt (the median of ``--decode-repeats`` decodes after a warm-up), prefill of 128 and 512
tokens, dispatches per token, the step's matrix products alone, and the process's peak resident
memory (MB).
"""

from __future__ import annotations

import resource
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402
import decode  # noqa: E402


def worker(threads: int, new_tokens: int, dtype: str, decode_repeats: int) -> None:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from torchnative.apps.chat import load

    torch.set_num_threads(threads)
    _, model = load(None, None, quiet=True, dtype=getattr(torch, dtype))
    result = {}
    prompt = torch.tensor([[1, 504, 3458, 282, 4649, 314, 6, 7]])
    with torch.inference_mode():
        model.generate(prompt, max_new_tokens=6, do_sample=False)  # warm-up: five decode steps
        result[decode.HUGE_PAGES] = _harness.settle_huge_pages()
        runs = [decode._decode(model, prompt, new_tokens) for _ in range(decode_repeats)]
        result["decode tokens/s"] = statistics.median(r[0] for r in runs)
        result["decode CPU ms/token"] = statistics.median(r[1] for r in runs)
        decode._prefill(model, "", result)
        result[decode.PRODUCTS] = decode._products_ms(model)
    result["peak memory MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _harness.emit(result)


def main() -> None:
    # decode.py's arguments and same-run comparison, with this file's worker in its processes
    decode.worker, decode.__file__ = worker, __file__
    decode.main()


if __name__ == "__main__":
    main()
