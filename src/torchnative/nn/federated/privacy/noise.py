"""The Gaussian mechanism: independent N(0, std**2) added to every entry of an update."""

from __future__ import annotations

import torch


def add_gaussian(update: dict[str, torch.Tensor], std: float, generator: torch.Generator) -> dict[str, torch.Tensor]:
    if not std >= 0:
        raise ValueError(f"the noise standard deviation must be non-negative, got {std}")
    # drawn in float64 so a float32 update gets noise of the stated std to the last bit it can hold
    return {k: (t.double() + torch.randn(t.shape, generator=generator, dtype=torch.float64) * std).to(t.dtype)
            for k, t in update.items()}


def generator(seed: int | None) -> torch.Generator:
    """A generator of its own, so the noise never disturbs (or depends on) the training stream;
    without a seed it is seeded from the operating system."""
    g = torch.Generator()
    if seed is None:
        g.seed()
    else:
        g.manual_seed(seed)
    return g
