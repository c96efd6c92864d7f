"""Server-side differential privacy (DP-FedAvg): the coordinator clips every update, averages
them with a fixed denominator (the number of participants selected, so one missing update cannot
change the sensitivity) and adds Gaussian noise of std noise_multiplier * clip_norm / m to the
mean. Fixed clipping follows McMahan et al. 2018; adaptive clipping follows Andrew et al. 2021
("Differentially private learning with adaptive clipping"), as Flower's
``DifferentialPrivacyServerSide{Fixed,Adaptive}Clipping`` do.

The result replaces the round's updates by one entry (id -1, weight 1): the aggregator then sees
the already privatized mean, which FedAvg passes through and the server optimizers (FedAdam, ...)
use as their pseudo-gradient.
"""

from __future__ import annotations

import math

import torch

from ..transform import RoundContext, Transform
from . import clipping, noise


def noisy_mean(updates: list[dict], clip_norm: float, noise_multiplier: float, num_sampled: int,
               generator: torch.Generator) -> tuple[dict, int]:
    """Clip each update, sum, divide by ``num_sampled`` and add N(0, (z*C/m)**2): the mean and the
    number of updates that were clipped."""
    if num_sampled < len(updates) or not updates:
        raise ValueError(f"{len(updates)} updates for {num_sampled} sampled participants")
    total, clipped_count = None, 0
    for u in updates:
        c, was = clipping.clip(u, clip_norm)
        clipped_count += was
        total = {k: v.double() for k, v in c.items()} if total is None else {k: total[k] + c[k].double() for k in total}
    mean = {k: (v / num_sampled).to(updates[0][k].dtype) for k, v in total.items()}
    return noise.add_gaussian(mean, noise_multiplier * clip_norm / num_sampled, generator), clipped_count


class _ServerSide(Transform):
    def __init__(self, noise_multiplier: float, seed: int | None):
        if noise_multiplier < 0:
            raise ValueError(f"noise_multiplier must be non-negative, got {noise_multiplier}")
        self.noise_multiplier = noise_multiplier
        self.generator = noise.generator(seed)

    def privacy_cost(self):
        # user-level DP of the released mean; adaptive clipping splits the same budget between
        # the count and the mean, so a round is one Gaussian mechanism of this multiplier
        return self.noise_multiplier, True

    def on_receive(self, updates: dict, weights: dict, ctx: RoundContext):
        m = len(ctx.participants) if ctx.participants else len(updates)
        mean = self.aggregate([updates[k] for k in sorted(updates)], m)
        return {-1: mean}, {-1: 1}


class FixedClipping(_ServerSide):
    def __init__(self, clip_norm: float, noise_multiplier: float, seed: int | None = None):
        super().__init__(noise_multiplier, seed)
        if clip_norm <= 0:
            raise ValueError(f"clip_norm must be positive, got {clip_norm}")
        self.clip_norm = clip_norm

    def aggregate(self, updates: list[dict], num_sampled: int) -> dict:
        return noisy_mean(updates, self.clip_norm, self.noise_multiplier, num_sampled, self.generator)[0]


class AdaptiveClipping(_ServerSide):
    """The clipping norm C tracks the ``target_quantile`` of the update norms: each round the
    fraction b of updates with norm <= C is estimated with noise N(0, count_std**2) / m and
    C <- C * exp(-lr * (b - target_quantile)). The noise on the mean uses the multiplier left
    after paying for the count: z_delta = (z**-2 - (2 * count_std)**-2) ** -0.5, so the whole
    round is as private as one Gaussian mechanism with multiplier z."""

    def __init__(self, noise_multiplier: float, num_sampled: int, initial_clip_norm: float = 0.1,
                 target_quantile: float = 0.5, lr: float = 0.2, count_std: float | None = None,
                 seed: int | None = None):
        super().__init__(noise_multiplier, seed)
        if initial_clip_norm <= 0 or not 0 <= target_quantile <= 1 or num_sampled < 1:
            raise ValueError("need initial_clip_norm > 0, 0 <= target_quantile <= 1 and num_sampled >= 1")
        self.clip_norm, self.target_quantile, self.lr = initial_clip_norm, target_quantile, lr
        if count_std is None:  # the paper's advice, m / 20; nothing to hide without noise
            count_std = num_sampled / 20 if noise_multiplier > 0 else 0.0
        self.count_std = count_std
        if noise_multiplier > 0:
            if noise_multiplier >= 2 * self.count_std:
                raise ValueError(f"noise_multiplier {noise_multiplier} needs count_std above "
                                 f"{noise_multiplier / 2} (it is {self.count_std})")
            self.delta_multiplier = (noise_multiplier ** -2 - (2 * self.count_std) ** -2) ** -0.5
        else:
            self.delta_multiplier = 0.0

    def aggregate(self, updates: list[dict], num_sampled: int) -> dict:
        mean, clipped = noisy_mean(updates, self.clip_norm, self.delta_multiplier, num_sampled, self.generator)
        unclipped = len(updates) - clipped
        noisy = unclipped + float(torch.randn((), generator=self.generator, dtype=torch.float64)) * self.count_std
        self.clip_norm *= math.exp(-self.lr * (noisy / num_sampled - self.target_quantile))
        return mean
