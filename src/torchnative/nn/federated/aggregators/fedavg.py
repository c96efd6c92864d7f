"""Federated averaging and its two close kin (McMahan et al. 2017; Hsu et al. 2019; Li et al.
2020): the sample-weighted mean of the deltas, optionally through server momentum (FedAvgM), or
with a proximal term on the participants' loss (FedProx; the server side is FedAvg's)."""

from __future__ import annotations

from .base import Aggregator, weighted_mean


class FedAvg(Aggregator):
    name = "FedAvg"

    def aggregate(self, g, updates, weights, round):
        avg = weighted_mean(updates, weights)
        return {n: g[n] + avg[n] for n in g}


class FedAvgM(Aggregator):
    """Server momentum on the pseudo-gradient -avg(delta): m <- beta*m + pg; x <- x - lr*m."""

    name = "FedAvgM"

    def __init__(self, server_learning_rate: float = 1.0, server_momentum: float = 0.9):
        if not server_learning_rate >= 0 or not server_momentum >= 0:
            raise ValueError("FedAvgM: server_learning_rate and server_momentum must be >= 0, got "
                             f"{server_learning_rate} and {server_momentum}")
        self.server_learning_rate = float(server_learning_rate)
        self.server_momentum = float(server_momentum)
        self._m = None

    def reset(self):
        self._m = None

    def aggregate(self, g, updates, weights, round):
        avg = weighted_mean(updates, weights)
        pg = {n: -avg[n] for n in g}
        if self.server_momentum > 0.0:
            if self._m is None:
                self._m = pg
            else:
                self._m = {n: self.server_momentum * self._m[n] + pg[n] for n in g}
            pg = self._m
        return {n: g[n] - self.server_learning_rate * pg[n] for n in g}


class FedProx(FedAvg):
    """FedAvg on the server; participants minimize loss + mu/2 * ||w - w_global||^2."""

    name = "FedProx"

    def __init__(self, proximal_mu: float = 0.01):
        if proximal_mu < 0:
            raise ValueError(f"FedProx: proximal_mu must be >= 0, got {proximal_mu}")
        self.proximal_mu = float(proximal_mu)
