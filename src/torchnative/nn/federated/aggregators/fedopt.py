"""Adaptive server optimizers (Reddi et al. 2021, "Adaptive Federated Optimization"): the
weighted mean delta is a pseudo-gradient for Adam, Yogi or Adagrad on the server. FedAdam's step
size carries the bias correction Flower applies (powers of round + 1)."""

from __future__ import annotations

import math

import torch

from .base import Aggregator, weighted_mean


class _FedOpt(Aggregator):
    def __init__(self, eta, beta_1, beta_2, tau):
        if not eta >= 0 or not tau > 0 or not 0 <= beta_1 < 1 or not 0 <= beta_2 < 1:
            raise ValueError(f"{self.name}: eta must be >= 0, tau > 0 and the betas in [0, 1), got "
                             f"eta={eta}, beta_1={beta_1}, beta_2={beta_2}, tau={tau}")
        self.eta, self.beta_1, self.beta_2, self.tau = float(eta), float(beta_1), float(beta_2), float(tau)
        self._m = self._v = None

    def reset(self):
        self._m = self._v = None

    def aggregate(self, g, updates, weights, round):
        d = weighted_mean(updates, weights)
        if self._m is None:
            self._m = {n: torch.zeros_like(t) for n, t in d.items()}
            self._v = {n: torch.zeros_like(t) for n, t in d.items()}
        self._m = {n: self.beta_1 * self._m[n] + (1 - self.beta_1) * d[n] for n in d}
        self._v = {n: self.second_moment(self._v[n], d[n]) for n in d}
        eta = self.step_size(round)
        return {n: g[n] + eta * self._m[n] / (torch.sqrt(self._v[n]) + self.tau) for n in g}

    def step_size(self, round):
        return self.eta


class FedAdam(_FedOpt):
    name = "FedAdam"

    def __init__(self, eta=1e-1, beta_1=0.9, beta_2=0.99, tau=1e-9):
        super().__init__(eta, beta_1, beta_2, tau)

    def second_moment(self, v, d):
        return self.beta_2 * v + (1 - self.beta_2) * d * d

    def step_size(self, round):
        return self.eta * math.sqrt(1 - self.beta_2 ** (round + 1.0)) / (1 - self.beta_1 ** (round + 1.0))


class FedYogi(_FedOpt):
    name = "FedYogi"

    def __init__(self, eta=1e-2, beta_1=0.9, beta_2=0.99, tau=1e-3):
        super().__init__(eta, beta_1, beta_2, tau)

    def second_moment(self, v, d):
        d2 = d * d
        return v - (1.0 - self.beta_2) * d2 * torch.sign(v - d2)


class FedAdagrad(_FedOpt):
    name = "FedAdagrad"

    def __init__(self, eta=1e-1, tau=1e-9, beta_1=0.0):
        super().__init__(eta, beta_1, 0.0, tau)

    def second_moment(self, v, d):
        return v + d * d
