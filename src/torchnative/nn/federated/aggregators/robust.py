"""Coordinate-wise robust statistics over the deltas: the median (Yin et al. 2018) and the
trimmed mean (cut a fraction beta of the values at each end). Both ignore sample counts."""

from __future__ import annotations

from .base import Aggregator, stacked


def median(x):
    """The median along dim 0; the mean of the two middle values for an even count."""
    s = x.sort(dim=0).values
    k = s.shape[0]
    return s[k // 2] if k % 2 else (s[k // 2 - 1] + s[k // 2]) / 2


class FedMedian(Aggregator):
    name = "FedMedian"

    def aggregate(self, g, updates, weights, round):
        return {n: g[n] + median(stacked(updates, n)) for n in g}


class FedTrimmedAvg(Aggregator):
    name = "FedTrimmedAvg"

    def __init__(self, beta: float = 0.2):
        if not 0.0 <= beta < 0.5:
            raise ValueError(f"FedTrimmedAvg: beta (the fraction cut at each end) must be in [0, 0.5), got {beta}")
        self.beta = float(beta)

    def aggregate(self, g, updates, weights, round):
        k = len(updates)
        cut = int(self.beta * k)
        out = {}
        for n in g:
            s = stacked(updates, n).sort(dim=0).values
            out[n] = g[n] + s[cut:k - cut].mean(dim=0)
        return out
