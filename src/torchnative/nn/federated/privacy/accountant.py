"""Rényi-DP accountant for the subsampled Gaussian mechanism (one federated round = one step:
each participant is selected with probability ``sample_rate``; its clipped update is hidden by
Gaussian noise of ``noise_multiplier`` times the clipping norm).

RDP at order a of one step is log(A_a) / (a - 1) with A_a = E_{z ~ N(0, s^2)}[(1 - q + q * exp((2z - 1)
/ (2 s^2)))^a] (Mironov, Talwar, Zhang 2019). For integer orders A_a is the finite binomial sum;
for fractional orders we integrate the expectation numerically in log space. Steps compose by
adding RDP; (epsilon, delta) follows from the conversion of Balle et al. 2020 (Theorem 21),
minimized over the orders. The orders default to opacus's list so the two report the same.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import integrate, special

DEFAULT_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


@functools.lru_cache(maxsize=4096)
def _log_a_integer(q: float, s: float, a: int) -> float:
    terms = [special.gammaln(a + 1) - special.gammaln(k + 1) - special.gammaln(a - k + 1)
             + k * math.log(q) + (a - k) * math.log1p(-q) + (k * k - k) / (2 * s * s) for k in range(a + 1)]
    return float(special.logsumexp(terms))


@functools.lru_cache(maxsize=4096)  # an order's value serves every step count
def _log_a_fractional(q: float, s: float, a: float) -> float:
    def log_f(z):  # log of the integrand: the N(0, s^2) density times the likelihood ratio ** a
        return (-z * z / (2 * s * s) - math.log(s * math.sqrt(2 * math.pi))
                + a * np.logaddexp(math.log1p(-q), math.log(q) + (2 * z - 1) / (2 * s * s)))

    # the integrand is log-concave enough to be one bump: find its peak, integrate around it
    grid = np.linspace(-50 * s - 50, 50 * s * a + 50, 4001)
    values = log_f(grid)
    peak = float(values.max())
    top = grid[values.argmax()]
    width = s * (1 + math.sqrt(a)) * 40
    value, _ = integrate.quad(lambda z: math.exp(log_f(z) - peak), top - width, top + width,
                              points=[top], limit=500, epsabs=0, epsrel=1e-13)
    return peak + math.log(value)


def rdp(q: float, noise_multiplier: float, steps: int, orders=DEFAULT_ORDERS) -> np.ndarray:
    """RDP of ``steps`` compositions of the subsampled Gaussian mechanism, one value per order."""
    if not 0 <= q <= 1:
        raise ValueError(f"sample_rate must lie in [0, 1], got {q}")
    out = []
    for a in orders:
        if q == 0:
            out.append(0.0)
        elif noise_multiplier == 0:
            out.append(math.inf)
        elif q == 1:
            out.append(a / (2 * noise_multiplier ** 2))
        elif float(a).is_integer():
            out.append(_log_a_integer(q, noise_multiplier, int(a)) / (a - 1))
        else:
            out.append(_log_a_fractional(q, noise_multiplier, a) / (a - 1))
    return np.asarray(out) * steps


def epsilon(rdp_values, orders, delta: float) -> tuple[float, float]:
    """(epsilon, best order) from RDP values at ``orders`` (Balle et al. 2020, Theorem 21)."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    a = np.asarray(orders, dtype=np.float64)
    eps = np.asarray(rdp_values) - (math.log(delta) + np.log(a)) / (a - 1) + np.log((a - 1) / a)
    if np.isnan(eps).all():
        return math.inf, math.nan
    best = int(np.nanargmin(eps))
    return float(eps[best]), float(a[best])


class RDPAccountant:
    """Accumulates rounds; ``get_epsilon(delta)`` reports the run's (epsilon, delta) guarantee."""

    def __init__(self, orders=DEFAULT_ORDERS):
        self.orders = list(orders)
        self.history: list[list] = []  # [noise_multiplier, sample_rate, steps]

    def step(self, noise_multiplier: float, sample_rate: float, steps: int = 1) -> None:
        if self.history and self.history[-1][:2] == [noise_multiplier, sample_rate]:
            self.history[-1][2] += steps
        else:
            self.history.append([noise_multiplier, sample_rate, steps])

    def get_epsilon(self, delta: float) -> tuple[float, float]:
        if not self.history:
            return 0.0, math.nan
        total = sum(rdp(q, z, n, self.orders) for z, q, n in self.history)
        return epsilon(total, self.orders, delta)
