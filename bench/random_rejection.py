"""Time per element of the rejection samplers and their gradients, ours vs upstream, in the
same run (the samplers visit elements one by one; ours does that in Python).

Usage: .venv/bin/python bench/random_rejection.py [--rounds 3] [--threads 1]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

N = 20000


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    full = torch.full
    cases = {
        "_standard_gamma alpha=2 f32": lambda: torch._standard_gamma(full((N,), 2.0), generator=g),
        "_standard_gamma alpha=0.5 f64":
            lambda: torch._standard_gamma(full((N,), 0.5, dtype=torch.float64), generator=g),
        "_sample_dirichlet 200x100": lambda: torch._sample_dirichlet(full((200, 100), 1.5), generator=g),
        "poisson lambda=4": lambda: torch.poisson(full((N,), 4.0), generator=g),
        "poisson lambda=50": lambda: torch.poisson(full((N,), 50.0), generator=g),
        "binomial n=20 p=0.3": lambda: torch.binomial(full((N,), 20.0), full((N,), 0.3), generator=g),
        "binomial n=1000 p=0.4": lambda: torch.binomial(full((N,), 1000.0), full((N,), 0.4), generator=g),
        "_standard_gamma_grad": lambda: torch._standard_gamma_grad(torch.rand(N, generator=g) * 10,
                                                                   torch.rand(N, generator=g) * 10),
        "_dirichlet_grad": lambda: torch._dirichlet_grad(torch.rand(N, generator=g),
                                                         torch.rand(N, generator=g) * 10,
                                                         torch.rand(N, generator=g) * 10 + 10),
    }
    _harness.emit({name: _harness.median_ms(fn, 3) * 1e3 / N for name, fn in cases.items()})


if __name__ == "__main__":
    _harness.main(__file__, worker, unit="us")
