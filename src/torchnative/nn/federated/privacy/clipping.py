"""L2 clipping of a whole update (all its tensors as one vector), as DP-FedAvg does."""

from __future__ import annotations

import math

import torch


def l2_norm(update: dict[str, torch.Tensor]) -> float:
    return math.sqrt(sum(float(t.detach().double().pow(2).sum()) for t in update.values()))


def clip(update: dict[str, torch.Tensor], max_norm: float) -> tuple[dict[str, torch.Tensor], bool]:
    """The update scaled to norm at most ``max_norm``, and whether it had to be scaled."""
    if not max_norm > 0:
        raise ValueError(f"the clipping norm must be positive, got {max_norm}")
    norm = l2_norm(update)
    if not math.isfinite(norm):
        raise ValueError("cannot clip an update holding NaN or inf")
    if norm <= max_norm:
        return {k: t.clone() for k, t in update.items()}, False
    scale = max_norm / norm
    return {k: t * scale for k, t in update.items()}, True
