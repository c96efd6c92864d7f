"""The rejection samplers of upstream 2.13's CPU kernels (Distributions.cpp/.h), bit for bit:
gamma (Marsaglia-Tsang), Dirichlet (normalised double gammas), Poisson (Hoermann's transformed
rejection, multiplication below lambda 10) and binomial (BTRS, inversion below count*p 10).

Each kernel is a ``cpu_serial_kernel`` over a fresh contiguous output: elements are visited in C
order, each consuming a data-dependent number of draws, so the loop is scalar Python. The words
are still made in bulk: a ``DrawCursor`` reads blocks of ``random64()`` words from a clone of the
generator and, when the kernel is done (or raises), advances the real generator by the words
used and leaves the cached Box-Muller sample where upstream leaves it.

``single`` selects ``scalar_t = float``: the operations upstream's templates do in ``scalar_t``
are rounded to float there (``f32``), and its libm calls take glibc's float functions.
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager

import numpy as np

from .clibm import (DBL_MIN, FLT_MIN, NAN, cceil, cdiv, cfloor, clog, cmax, cpow, csqrt, f32, lgamma,
                    log1pf, sqrtf, to_int64)
from .distributions import box_muller, uniform_double

_ONE_THIRD_F = f32(1.0 / 3.0)  # 1.0f / 3.0f, folded in float
_C0331 = f32(0.0331)           # the float literal 0.0331f, widened
_WORDS_PER_REFILL_MIN = 256


class DrawCursor:
    """Upstream's ``uniform_real_distribution<double>`` and ``normal_distribution<double>`` draws,
    one at a time, from words read in blocks off a clone of ``gen``; ``commit`` advances ``gen``."""

    __slots__ = ("_gen", "_src", "_buf", "_pos", "used", "normal_cache", "_expect")

    def __init__(self, gen, expect: int = 0):
        self._gen = gen
        self._src = gen.clone()
        self._buf: list = []
        self._pos = 0
        self.used = 0
        self.normal_cache = gen.next_double_normal
        self._expect = max(int(expect), _WORDS_PER_REFILL_MIN)

    def uniform(self) -> float:
        if self._pos == len(self._buf):
            self.used += self._pos
            self._buf = uniform_double(self._src, self._expect).tolist()
            self._pos = 0
            self._expect = min(self._expect * 2, 1 << 20)
        u = self._buf[self._pos]
        self._pos += 1
        return u

    def normal(self) -> float:
        """Box-Muller on (u1, u2): ``r * cos(theta)`` now, ``r * sin(theta)`` cached for the next."""
        x = self.normal_cache
        if x is not None:
            self.normal_cache = None
            return x + 0.0  # transformation::normal(x, 0, 1): x * 1 + 0
        u1 = self.uniform()
        x, self.normal_cache = box_muller(u1, self.uniform())
        return x + 0.0

    def commit(self) -> None:
        used = self.used + self._pos
        gen = self._gen
        while used:
            step = min(used, 1 << 20)
            gen.random64(step)
            used -= step
        gen.next_double_normal = self.normal_cache


_LOCK = threading.Lock()


@contextmanager
def drawing(gen, expect: int):
    """A ``DrawCursor`` on ``gen`` for one kernel, committed when the kernel ends or raises;
    kernels hold one lock meanwhile (upstream holds the generator's mutex), so two threads
    cannot read the same words through their clones."""
    with _LOCK:
        cur = DrawCursor(gen, expect)
        try:
            yield cur
        finally:
            cur.commit()


# ---------------------------------------------------------------------------------------- gamma
def sample_gamma(alpha: float, cur: DrawCursor, single: bool) -> float:
    """``sample_gamma<scalar_t, double>``: the double sample before its cast to scalar_t."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inv = f32(cdiv(1.0, alpha)) if single else cdiv(1.0, alpha)
        scale *= cpow(1.0 - cur.uniform(), inv)
        alpha = f32(alpha + 1.0) if single else alpha + 1.0
    d = f32(alpha - _ONE_THIRD_F) if single else alpha - _ONE_THIRD_F
    c = cdiv(1.0, csqrt(9.0 * d))
    while True:
        while True:
            x = cur.normal()
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1.0 - cur.uniform()
        xx = x * x
        if u < 1.0 - _C0331 * xx * xx:
            return scale * d * v
        if clog(u) < 0.5 * xx + d * (1.0 - v + clog(v)):
            return scale * d * v


def standard_gamma(gen, alpha: np.ndarray) -> np.ndarray:
    """``_s_gamma_cpu``: ``alpha`` (float32 or float64, in iteration order) -> samples,
    each ``max(numeric_limits<scalar_t>::min(), sample)``."""
    single = alpha.dtype == np.float32
    tiny = FLT_MIN if single else DBL_MIN
    out = []
    with drawing(gen, 3 * alpha.size) as cur:
        for a in alpha.tolist():
            s = sample_gamma(a, cur, single)
            out.append(cmax(tiny, f32(s) if single else s))
    return np.array(out, dtype=alpha.dtype).reshape(alpha.shape)


def dirichlet_gammas(gen, alpha: np.ndarray) -> np.ndarray:
    """``_s_dirichlet_cpu``'s first pass: double gammas of the (widened) concentrations, each
    at least DBL_MIN; the caller normalises by the last dim's sum."""
    out = []
    with drawing(gen, 3 * alpha.size) as cur:
        for a in alpha.tolist():
            out.append(cmax(DBL_MIN, sample_gamma(a, cur, False)))
    return np.array(out, dtype=np.float64).reshape(alpha.shape)


def dirichlet_normalise(gamma: np.ndarray, total: np.ndarray, single: bool) -> np.ndarray:
    """``_s_dirichlet_cpu``'s second pass: ``gamma / total`` in double, cast to scalar_t and
    clamped to [min, nexttoward(1, 0)] with std::max/std::min's NaN behaviour."""
    ratio = gamma / total
    if single:
        ratio = ratio.astype(np.float32)
        tiny, top = np.float32(FLT_MIN), np.nextafter(np.float32(1), np.float32(0))
    else:
        tiny, top = DBL_MIN, np.nextafter(1.0, 0.0)
    clamped = np.where(tiny < ratio, ratio, tiny)            # std::max(min, r)
    return np.where(clamped < top, clamped, top).astype(ratio.dtype)  # std::min(top, .)


# -------------------------------------------------------------------------------------- poisson
def sample_poisson(lam: float, cur: DrawCursor) -> int:
    if not lam >= 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    if lam >= 10:
        slam = math.sqrt(lam)
        loglam = clog(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        log_invalpha = clog(1.1239 + 1.1328 / (b - 3.4))
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = cur.uniform() - 0.5
            V = cur.uniform()
            us = 0.5 - abs(U)
            k = to_int64(cfloor((cdiv(2 * a, us) + b) * U + lam + 0.43))
            if us >= 0.07 and V <= vr:
                return k
            if k < 0 or (us < 0.013 and V > us):
                continue
            if (clog(V) + log_invalpha - clog(cdiv(a, us * us) + b)
                    <= -lam + float(k) * loglam - lgamma(float(k) + 1)):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    x = 0
    prod = 1.0
    while True:
        prod *= cur.uniform()
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(gen, lam: np.ndarray) -> np.ndarray:
    """``_s_poisson_cpu``: int64 counts (the caller casts to scalar_t), rates read as double.
    Draws taken before an invalid rate stay taken, as upstream's serial loop leaves them."""
    out = []
    with drawing(gen, 2 * lam.size) as cur:
        for v in lam.astype(np.float64).tolist():
            out.append(sample_poisson(v, cur))
    return np.array(out, dtype=np.int64).reshape(lam.shape)


# ------------------------------------------------------------------------------------- binomial
_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _inversion(count: float, prob: float, cur: DrawCursor, single: bool) -> float:
    geom_sum = 0.0
    num_geom = 0.0
    logprob = log1pf(-prob) if single else math.log1p(-prob)
    while True:
        geom = cceil(cdiv(clog(cur.uniform()), logprob))
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom = f32(num_geom + 1) if single else num_geom + 1


def _btrs(count: float, prob: float, cur: DrawCursor, single: bool) -> float:
    F = f32 if single else float
    stddev = sqrtf(F(F(count * prob) * F(1 - prob))) if single else csqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = F(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = F(prob / F(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = cfloor(F(F(count + 1) * prob))
    while True:
        U = cur.uniform() - 0.5
        V = cur.uniform()
        us = 0.5 - abs(U)
        k = F(cfloor((cdiv(2 * a, us) + b) * U + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and V <= v_r:
            return k
        V = clog(V * alpha / (cdiv(a, us * us) + b))
        cmk1 = F(F(count - k) + 1)
        upper = ((m + 0.5) * clog((m + 1) / (r * (count - m + 1)))
                 + F(count + 1) * clog((count - m + 1) / cmk1)
                 + (k + 0.5) * clog(r * cmk1 / F(k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(F(count - k)))
        if V <= upper:
            return k


def sample_binomial(count: float, prob: float, cur: DrawCursor, single: bool) -> float:
    F = f32 if single else float
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if F(count * prob) >= 10.0:
            return _btrs(count, prob, cur, single)
        return _inversion(count, prob, cur, single)
    if prob > 0.5:
        q = F(1.0 - prob)
        if F(count * q) >= 10.0:
            return F(count - _btrs(count, q, cur, single))
        return F(count - _inversion(count, q, cur, single))
    return NAN


def binomial(gen, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``_s_binomial_cpu`` over ``count`` and ``prob`` (same dtype and shape, iteration order)."""
    single = count.dtype == np.float32
    out = []
    with drawing(gen, 4 * count.size) as cur:
        for n, p in zip(count.tolist(), prob.tolist()):
            out.append(sample_binomial(n, p, cur, single))
    return np.array(out, dtype=count.dtype).reshape(count.shape)

