"""SmolLM2-135M greedy decode and prefill, ours vs upstream, measured in the same run.

Usage: .venv/bin/python bench/decode.py [--rounds 1] [--threads 2] [--new-tokens 64]
       [--dtype bfloat16] [--decode-repeats 3]

``--dtype bfloat16`` loads the checkpoint with ``dtype=torch.bfloat16`` on both sides (upstream's
own bfloat16 kernels against ours); the default is float32.

Rows marked "kernels" are our side with the fused CPU kernels of the default bundle swapped in
through transformers' own hooks (``set_use_kernels(True)``, what ``use_kernels=True`` does);
rows marked "kernels + attention" also select the bundle's attention function
(``set_attn_implementation("torchnative/cpu-kernels:attention")``). Upstream has no kernels
(its transformers sees no compatible ``kernels`` package): in those rows its column is its
unfused model, measured once per process and reported under each label.
"dispatches per token" counts the operators one decode step sends through the door (ours) or
through ``__torch_dispatch__`` (upstream); a fused layer that needs no gradient and runs where
nothing observes the dispatch calls its kernel function itself (no door call: only the few
operators that function calls, dtype casts, count), as a decode step does.

Each side loads the real checkpoint (not timed) and decodes four tokens in each configuration (a
warm-up; on ours, under ``TORCHNATIVE_HUGE_PAGES=1``, its decode steps set off the weights' move
onto huge pages in a background thread, csrc/platform/huge_pages.py, which the worker waits for
so that no timed decode carries it: its CPU ms are printed as a one-off row, NaN on upstream),
then times: greedy decode of ``--new-tokens`` tokens after an 8-token prompt with the KV cache
on (tokens/s, and CPU ms per token; the median of ``--decode-repeats`` decodes, ours' three
configurations taking turns in a rotating order, so none is always measured last in its
process), and a prefill forward of 128 and 512 tokens (tokens/s, and CPU ms). Ours switches back
to its unfused layers with the contract's own ``kernelize`` under an empty mapping (every layer
falls back to its original forward). Peak resident memory of each process is reported too (MB),
and the CPU time of the step's matrix products alone (every ``nn.Linear`` once on a one-token
input): upstream's decode CPU time over ours' products is printed as the ceiling no cut above
the products can pass. ``--rounds`` alternating ours/upstream process pairs are run; each figure
is the median over rounds. The load average is printed before and after: on a shared machine
read the CPU rows (lower is better there) when it is above the thread count.
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


KERNELS, KERNELS_ATTENTION = " (ours: kernels)", " (ours: kernels + attention)"
PRODUCTS = "decode CPU ms/token, matrix products alone (every Linear once)"
ATTENTION_KERNEL = "torchnative/cpu-kernels:attention"
HUGE_PAGES = "one-off: the weights onto huge pages, CPU ms (ours' background thread)"


def _door_calls() -> int | None:
    # our torch loads the door when torch is imported; upstream never does (src/ is on its path
    # too, so an import attempt would succeed there)
    door = sys.modules.get("torchnative.csrc.dispatch.door")
    return None if door is None else sum(door.served.values())


def _dispatches_per_token(model) -> int:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    prompt = torch.tensor([[1, 504, 3458, 282, 4649, 314, 6, 7]])
    cache = model(prompt, use_cache=True).past_key_values
    step = torch.tensor([[42]])
    before = _door_calls()
    if before is not None:
        model(step, past_key_values=cache, use_cache=True)
        return _door_calls() - before

    class Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.n += 1
            return func(*args, **(kwargs or {}))

    with Count():
        model(step, past_key_values=cache, use_cache=True)
    return Count.n


def _decode(model, prompt, new_tokens: int) -> tuple[float, float]:
    """(tokens/s, CPU ms per token) of one greedy decode."""
    t, c = time.perf_counter(), time.process_time()
    out = model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                         do_sample=False)
    dt, dc = time.perf_counter() - t, time.process_time() - c
    made = out.shape[1] - prompt.shape[1]
    # CPU time (every thread's) per token: steadier than wall time on a loaded machine
    return made / dt, dc / made * 1e3


def _prefill(model, suffix: str, result: dict) -> None:
    import torch

    for n in (128, 512):
        ids = torch.arange(n).remainder(1000).add(10).reshape(1, n)
        t, c = time.perf_counter(), time.process_time()
        model(ids)
        result[f"prefill {n} tokens/s{suffix}"] = n / (time.perf_counter() - t)
        result[f"prefill {n} CPU ms{suffix}"] = (time.process_time() - c) * 1e3
    result[f"dispatches per token{suffix}"] = _dispatches_per_token(model)


def _configure(model, suffix: str, attention: str) -> None:
    """Ours' model in one configuration: unfused (the contract's kernelize under an empty
    mapping puts every original forward back), the bundle's layers, or those and its attention
    function (``attention``: the implementation the model was loaded with)."""
    from torchnative.kernels import Mode, kernelize, use_kernel_mapping

    if suffix:
        model.set_use_kernels(True)
    else:
        with use_kernel_mapping({}, inherit_mapping=False):
            kernelize(model, mode=Mode.INFERENCE)
    model.set_attn_implementation(ATTENTION_KERNEL if suffix == KERNELS_ATTENTION else attention)


def _products_ms(model) -> float:
    """CPU ms of the matrix products one decode step makes, alone: every ``nn.Linear`` of the
    model (the tied lm_head included) applied once to a one-token input, median of five. No
    fused kernel or overhead cut goes below it, so upstream's decode CPU ms per token over it is
    the ceiling of ours/upstream speed on this machine at this load."""
    import torch
    import torch.nn.functional as F

    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    xs = {m.in_features: torch.ones(1, 1, m.in_features, dtype=m.weight.dtype) for m in linears}
    times = []
    for _ in range(6):
        c = time.process_time()
        for m in linears:
            F.linear(xs[m.in_features], m.weight, m.bias)
        times.append(time.process_time() - c)
    return statistics.median(times[1:]) * 1e3


def worker(threads: int, new_tokens: int, dtype: str, decode_repeats: int) -> None:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from torchnative.apps.chat import load

    torch.set_num_threads(threads)
    tok, model = load(None, None, quiet=True, dtype=getattr(torch, dtype))
    result = {}
    prompt = torch.tensor([[1, 504, 3458, 282, 4649, 314, 6, 7]])
    ours = _door_calls() is not None
    # upstream stays unfused: the kernel rows compare ours with kernels against it
    configs = ("", KERNELS, KERNELS_ATTENTION) if ours else ("",)
    attention = model.config._attn_implementation
    with torch.inference_mode():
        runs = {suffix: [] for suffix in configs}
        for rep in range(decode_repeats + 1):      # the first round warms every configuration up
            for i in range(len(configs)):
                suffix = configs[(rep + i) % len(configs)]
                if ours:
                    _configure(model, suffix, attention)
                if rep == 0:
                    model.generate(prompt, max_new_tokens=4, do_sample=False)
                else:
                    runs[suffix].append(_decode(model, prompt, new_tokens))
            if rep == 0:
                result[HUGE_PAGES] = _harness.settle_huge_pages()
        for suffix in configs:
            if ours:
                _configure(model, suffix, attention)
            result[f"decode tokens/s{suffix}"] = statistics.median(r[0] for r in runs[suffix])
            result[f"decode CPU ms/token{suffix}"] = statistics.median(r[1] for r in runs[suffix])
            _prefill(model, suffix, result)
        result[PRODUCTS] = _products_ms(model)
        if not ours:
            for suffix in (KERNELS, KERNELS_ATTENTION):
                result.update({k + suffix: v for k, v in list(result.items()) if "(" not in k})
    result["peak memory MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _harness.emit(result)


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    ap.add_argument("--decode-repeats", type=int, default=3)
    args, _ = ap.parse_known_args()
    h = _harness.worker_args()
    if h.worker:
        worker(h.threads, args.new_tokens, args.dtype, args.decode_repeats)
        return
    rows = _harness.compare(Path(__file__), h.rounds, h.threads,
                            ["--new-tokens", str(args.new_tokens), "--dtype", args.dtype,
                             "--decode-repeats", str(args.decode_repeats)], unit="")
    by_case = {case: (ours, up) for case, ours, up, _ in rows}
    if PRODUCTS in by_case and "decode CPU ms/token" in by_case:
        # decode CPU ms per token includes the prompt's prefill: the ceiling is slightly high
        ceiling = by_case["decode CPU ms/token"][1] / by_case[PRODUCTS][0]
        print(f"ceiling of ours/upstream decode speed with ours' products alone: {ceiling:.2f}x "
              "(upstream's decode CPU ms per token over ours' products)")


if __name__ == "__main__":
    main()
