"""Random initialisation, ours vs upstream in the same run: the generator's samplers on a
million float32 values, the init functions models call, and building SmolLM2-135M from its
config (random weights).

Usage: .venv/bin/python bench/random_init.py [--rounds 3] [--threads 2] [--no-model]

Each side runs in its own process, the sides alternate ``--rounds`` times (bench/_harness.py);
within a process every case runs ``REPEATS`` times after a warm-up call and reports its median.
Every case is reported twice: wall time and the process's CPU time (the machines are shared, so
CPU time is the steadier figure). "build SmolLM2-135M" constructs ``LlamaForCausalLM(config)``
once per process (its first construction: nothing warmed up) with the published SmolLM2-135M
configuration written out below (no download).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

REPEATS = 5
N = 10**6

SMOLLM2_135M = dict(  # HuggingFaceTB/SmolLM2-135M config.json
    vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
    num_attention_heads=9, num_key_value_heads=3, hidden_act="silu", max_position_embeddings=8192,
    initializer_range=0.041666666666666664, rms_norm_eps=1e-5, rope_theta=100000.0,
    tie_word_embeddings=True, bos_token_id=0, eos_token_id=0, attention_bias=False, mlp_bias=False,
)


def _timed(fn, repeats: int = REPEATS) -> tuple[float, float]:
    fn()
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3


def _cases():
    import torch
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(0)
    x = torch.empty(N)
    w = torch.empty(1536, 576)
    sq = torch.empty(1000, 1000)
    probs = torch.rand(64, 1000, generator=g)
    return {
        "normal_ 1e6 float32": lambda: x.normal_(),
        "uniform_ 1e6 float32": lambda: x.uniform_(),
        "normal_(0, 0.02) 1536x576": lambda: w.normal_(0.0, 0.02),
        "kaiming_uniform_ 1536x576": lambda: torch.nn.init.kaiming_uniform_(w, a=5 ** 0.5),
        "normal_ on a transposed 1000x1000 view": lambda: sq.t().normal_(),
        "normal_ on a strided 1e6 view": lambda: torch.empty(2 * N)[::2].normal_(),
        "randn 1e6 (generator)": lambda: torch.randn(N, generator=g),
        "rand 1e6 (generator)": lambda: torch.rand(N, generator=g),
        "randint 1e6": lambda: torch.randint(0, 1000, (N,)),
        "randperm 1e6": lambda: torch.randperm(N),
        "bernoulli_(0.5) 1e6": lambda: x.bernoulli_(0.5),
        "dropout(p=0.1) 1e6, training": lambda: F.dropout(x, 0.1, training=True),
        "multinomial 64x1000, 8 samples": lambda: torch.multinomial(probs, 8),
    }


def _build_model() -> tuple[float, float]:
    # transformers imports torchvision's image helpers whenever torchvision is installed, though
    # a language model uses none of them: hidden on both sides, so the figure is the model alone
    # (and a torchvision wheel that cannot load on one side does not stop the bench)
    sys.modules.setdefault("torchvision", None)
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(**SMOLLM2_135M)
    w, c = time.perf_counter(), time.process_time()
    model = LlamaForCausalLM(config)
    wall, cpu = (time.perf_counter() - w) * 1e3, (time.process_time() - c) * 1e3
    n = sum(p.numel() for p in model.parameters())
    if n != 134_515_008:
        raise RuntimeError(f"unexpected SmolLM2-135M parameter count {n}")
    return wall, cpu


def worker(threads: int, model: bool) -> None:
    import torch

    torch.set_num_threads(threads)
    out = {}
    if model:
        wall, cpu = _build_model()
        out["build SmolLM2-135M (wall)"], out["build SmolLM2-135M (cpu)"] = wall, cpu
    for name, fn in _cases().items():
        wall, cpu = _timed(fn)
        out[f"{name} (wall)"], out[f"{name} (cpu)"] = wall, cpu
    _harness.emit(out)


def main() -> None:
    args = _harness.worker_args()
    model = "--no-model" not in sys.argv
    if args.worker:
        worker(args.threads, model)
        return
    _harness.compare(Path(__file__), args.rounds, args.threads, [] if model else ["--no-model"], unit="ms")


if __name__ == "__main__":
    main()
