"""The aggregator contract: the global model and the round's deltas in, the next global out.

Aggregators work on deltas (participant model minus the global model it started from), which
is what travels. Strategies written for participant *models* (Flower's) are the same maps up to
rounding: a model is the global plus its delta.
"""

from __future__ import annotations

import torch

from ..validate import check_update, spec_of


class Aggregator:
    name = "aggregator"
    # the proximal coefficient participants add to their loss (FedProx); 0 for the others
    proximal_mu = 0.0

    def __call__(self, global_params: dict, updates: list, weights: list, round: int = 1) -> dict:
        if not updates:
            raise ValueError(f"{self.name}: no updates to aggregate")
        if len(weights) != len(updates):
            raise ValueError(f"{self.name}: {len(updates)} updates but {len(weights)} weights")
        if any(not (float(w) > 0) for w in weights):
            raise ValueError(f"{self.name}: weights must be positive sample counts, got {list(weights)}")
        spec = spec_of(global_params)
        for i, u in enumerate(updates):
            check_update(u, spec, participant=i)
        with torch.no_grad():
            return self.aggregate(global_params, updates, [float(w) for w in weights], int(round))

    def aggregate(self, global_params, updates, weights, round):
        raise NotImplementedError

    def reset(self) -> None:
        """Drop server-side state (momentum, moments) before a new run."""

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


def weighted_mean(updates: list, weights: list) -> dict:
    """sum_i (w_i / W) * u_i, name by name, in participant order."""
    total = sum(weights)
    out = {}
    for n in updates[0]:
        acc = updates[0][n] * (weights[0] / total)
        for u, w in zip(updates[1:], weights[1:]):
            acc = acc + u[n] * (w / total)
        out[n] = acc
    return out


def stacked(updates: list, name: str) -> torch.Tensor:
    return torch.stack([u[name] for u in updates])


def flat(update: dict) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in update.values()])
