"""Krum and Multi-Krum (Blanchard et al. 2017) and Bulyan (El Mhamdi et al. 2018).

Krum scores each update by the summed squared distances to its n - f - 2 nearest others and keeps
the lowest; Multi-Krum averages the m best (sample-weighted). Bulyan picks n - 2f updates by
repeated Krum, then per coordinate averages the n - 4f values nearest the coordinate's median.
"""

from __future__ import annotations

import torch

from .base import Aggregator, flat, weighted_mean
from .robust import median


def krum_scores(updates: list, num_malicious: int) -> torch.Tensor:
    x = torch.stack([flat(u) for u in updates]).double()
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    k = max(1, len(updates) - num_malicious - 2)
    nearest = d.sort(dim=1).values[:, 1:k + 1]   # column 0 is the update itself
    return nearest.sum(dim=1)


def krum_select(updates: list, num_malicious: int, to_keep: int = 0) -> list[int]:
    """Indices of the kept updates: one (Krum) or the to_keep lowest scores (Multi-Krum)."""
    scores = krum_scores(updates, num_malicious)
    if to_keep > 0:
        return scores.argsort(stable=True)[:to_keep].tolist()
    return [int(scores.argmin())]


class Krum(Aggregator):
    name = "Krum"

    def __init__(self, num_malicious: int = 0, to_keep: int = 0):
        if num_malicious < 0 or to_keep < 0:
            raise ValueError("Krum: num_malicious and to_keep must be >= 0")
        self.num_malicious, self.to_keep = int(num_malicious), int(to_keep)

    def aggregate(self, g, updates, weights, round):
        keep = krum_select(updates, self.num_malicious, self.to_keep)
        chosen = weighted_mean([updates[i] for i in keep], [weights[i] for i in keep])
        return {n: g[n] + chosen[n] for n in g}


def MultiKrum(num_malicious: int = 0, to_keep: int = 1) -> Krum:
    if to_keep < 1:
        raise ValueError("MultiKrum: to_keep must be >= 1")
    return Krum(num_malicious, to_keep)


class Bulyan(Aggregator):
    name = "Bulyan"

    def __init__(self, num_malicious: int = 0):
        if num_malicious < 0:
            raise ValueError("Bulyan: num_malicious must be >= 0")
        self.num_malicious = int(num_malicious)

    def aggregate(self, g, updates, weights, round):
        n, f = len(updates), self.num_malicious
        if n < 4 * f + 3:
            raise ValueError(f"Bulyan needs at least 4*num_malicious+3 = {4 * f + 3} updates, got {n}")
        pool = list(range(n))
        chosen = []
        for _ in range(n - 2 * f):
            pick = krum_select([updates[i] for i in pool], f)[0]
            chosen.append(pool.pop(pick))
        beta = n - 4 * f
        out = {}
        for name in g:
            x = torch.stack([updates[i][name] for i in chosen])
            med = median(x)
            idx = (x - med).abs().argsort(dim=0, stable=True)[:beta]
            out[name] = g[name] + torch.gather(x, 0, idx).mean(dim=0)
        return out
