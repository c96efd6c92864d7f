"""normal_fill's float32 Box-Muller (``avx_mathfun``'s reference), bit for bit, at numpy speed.

normal_fill only ever feeds its Box-Muller uniforms ``k * 2**-24`` made from the generator's
words, so ``log256_ps`` sees ``1 - k * 2**-24`` and ``sincos256_ps`` sees ``TWO_PI * k * 2**-24``:
2**24 inputs each. On those inputs the steps below give the reference's bits, checked
exhaustively by tests/differential/test_random_engine.py::test_grid_box_muller_is_the_reference_on_every_input.
What makes each step cheap without changing a bit:

* A fused step whose product is exact in float32 (an integer exponent or octant times a
  constant with few significant bits, ``z * 0.5``) is a plain float32 multiply and add: the
  add is the one rounding fma makes.
* A fused step whose result stays in one binade on every grid input (the last step of log's
  polynomial, both steps of each sincos polynomial) is rounded exactly once, in float64: the
  product of two float32 values is exact there, and adding ``C + c`` with ``C = 1.5 * 2**52``
  times the result's float32 ulp rounds the sum to that ulp (ties to even), after which
  subtracting ``C`` is exact. The value stays in float64 for the next step: no conversions.
* Any other fused step is one float64 multiply and one float64 add whose result numpy rounds to
  float32 as it stores it. The product is exact in float64, so that is the exact sum rounded
  twice; on these inputs that never differs from fma's single rounding (the exhaustive check).
  log's Horner value stays in float64 between its steps, rounded through a float32 scratch
  (a cast down and back): single-dtype passes, cheaper than numpy's buffered mixed-dtype ones.
* What the grid rules out is not computed: ``1 - u`` is never <= 0 (no invalid lanes, no clamp
  to the smallest normal) and ``TWO_PI * u`` is never negative (no sign to carry into sin).
* The caller's ``* std + mean`` is a plain float32 multiply and add when ``mean`` is zero (the
  product rounds once; adding a zero only turns fma's ``-0 + +0`` into ``+0`` as fma does) or
  ``std`` is one (the product is exact); otherwise the checked ``fpmath.fma32_rounded``.

Rows of 16 go through a chunk at a time, the words drawn per chunk, so every temporary stays
near the CPU. The row halves (lanes 0-7 feed log, 8-15 sincos; the output's 0-7 take cos, 8-15
sin) are moved as single 32-byte items: every arithmetic pass then runs over contiguous lanes
(a pass over 8-lane strided runs costs several times a contiguous one).
"""

from __future__ import annotations

import threading

import numpy as np

from .avx_mathfun import (COS_P, DP1, DP2, DP3, FOPI, HALF, LOG_P, LOG_Q1, LOG_Q2, MINUS_TWO,
                          ONE, SIN_P, SQRTHF, TWO_PI)
from .fpmath import F32, F64, fma32_rounded

_ROWS = 4096  # rows of 16 per chunk: 32K lanes per half (fewer calls beat a smaller cache footprint)
_MASK24 = np.uint32((1 << 24) - 1)
_GRID = F32(2.0 ** -24)
_TWO_PI_GRID = TWO_PI * _GRID  # exact: a power-of-two scaling
_LOG_P = [float(p) for p in LOG_P]  # float32 constants as Python floats (float64 arithmetic)
_COS_P = [float(p) for p in COS_P]
_SIN_P = [float(p) for p in SIN_P]
_DP3 = float(DP3)
_HALF_ROW = np.dtype("V32")  # 8 lanes of 4 bytes moved as one item
_SQRTHF_BITS = np.int32(SQRTHF.view(np.int32))


def _rounder(binade: int) -> float:
    """``C`` for ``_fused_in_binade``: 1.5 * 2**52 float32 ulps of the binade [2**b, 2**(b+1))."""
    return 1.5 * 2.0 ** (52 + binade - 23)


# Each polynomial step's result binade over every grid input (|result| in [2**b, 2**(b+1))):
# log's last Horner step in [0.255, 0.430], cos's in [1.37e-3, 1.39e-3] and [0.0408, 0.0417],
# sin's in [8.21e-3, 8.34e-3] and [0.1616, 0.1667]. log's other steps cross a binade boundary.
_LOG_LAST = _rounder(-2)
_COS_STEPS = (_rounder(-10), _rounder(-5))
_SIN_STEPS = (_rounder(-7), _rounder(-3))
for _c, _r in ((_LOG_P[-1], _LOG_LAST), *zip(_COS_P[1:], _COS_STEPS), *zip(_SIN_P[1:], _SIN_STEPS)):
    if (_r + _c) - _r != _c:  # C + c must be exact for the one rounding to be t + c's
        raise AssertionError(f"normal_fill32: {_c!r} is not on its step's float32 grid")


class Work:
    """Scratch arrays for ``n`` lanes per half (numpy allocating each temporary afresh costs
    several times the arithmetic on it), or the first ``n`` lanes of ``base``'s."""

    __slots__ = ("n", "m", "x", "xs", "z", "y", "ys", "e", "f", "yf", "ei", "j", "sign_sin",
                 "swap", "sign_cos", "d", "x64", "t", "k1", "k2", "radius", "cs")
    _LANES = {F32: ("m", "x", "xs", "z", "y", "ys", "e", "f", "yf", "radius"),
              np.int32: ("ei", "j", "sign_sin", "swap", "sign_cos", "d"),
              F64: ("x64", "t"), np.uint32: ("k1", "k2")}

    def __init__(self, n: int, base: "Work | None" = None):
        self.n = n
        for dtype, names in self._LANES.items():
            for name in names:
                setattr(self, name, np.empty(n, dtype) if base is None else getattr(base, name)[:n])
        self.cs = np.empty((2, n), F32) if base is None else base.cs.reshape(-1)[:2 * n].reshape(2, n)


_CHUNK_LANES = _ROWS * 8
_TLS = threading.local()


def _work(n: int) -> Work:
    """This thread's scratch for a chunk of ``n <= _CHUNK_LANES`` lanes per half: views into one
    Work made once (fresh arrays per call cost their allocation and first-touch page faults)."""
    works = getattr(_TLS, "works", None)
    if works is None:
        works = _TLS.works = {_CHUNK_LANES: Work(_CHUNK_LANES)}
    w = works.get(n)
    if w is None:
        if len(works) > 32:  # odd tail sizes: keep the cache small
            works = _TLS.works = {_CHUNK_LANES: works[_CHUNK_LANES]}
        w = works[n] = Work(n, works[_CHUNK_LANES])
    return w


def _fused(t: np.ndarray, c, out: np.ndarray) -> np.ndarray:
    """``out = float32(t + c)``: the float64 sum rounded as numpy stores it."""
    return np.add(t, c, out=out, casting="same_kind")


def _fused_kept(t: np.ndarray, c: float, scratch: np.ndarray) -> np.ndarray:
    """``t = float32(t + c)`` kept in float64: ``_fused``'s rounding (the float64 sum rounded
    as numpy stores it) through ``scratch``. Four single-dtype passes cost less than the two
    mixed-dtype ones (numpy buffers the operand it casts)."""
    np.add(t, c, out=t)
    np.copyto(scratch, t, casting="same_kind")
    np.copyto(t, scratch)
    return t


def _fused_in_binade(t: np.ndarray, c: float, rounder: float) -> np.ndarray:
    """``t = t + c`` rounded once to the float32 ulp ``rounder`` stands for, kept in float64."""
    t += rounder + c  # exact constant: c is a multiple of that ulp and C + c < 2**53 ulps
    t -= rounder
    return t


def log_grid(u1: np.ndarray, w: Work | None = None) -> np.ndarray:
    """``log256_ps(u1)`` for ``u1 = 1 - k * 2**-24``, into ``w.x``."""
    w = Work(u1.size) if w is None else w
    # The reference splits u1 = m * 2**ex (m in [0.5, 1)) and, where m < sqrt(1/2), doubles m and
    # takes one from ex: u1 = r * 2**e with r in [sqrt(1/2), sqrt(2)). On the bits (u1 > 0 is
    # normal): (bits(u1) - bits(sqrt(1/2))) >> 23 is e, and taking e << 23 off bits(u1) gives r.
    d = np.subtract(u1.view(np.int32), _SQRTHF_BITS, out=w.ei)
    d >>= 23  # arithmetic: e <= 0 here
    e = w.e
    np.copyto(e, d, casting="unsafe")  # small integers: exact
    d <<= 23
    np.subtract(u1.view(np.int32), d, out=d)
    x = np.subtract(d.view(F32), ONE, out=w.x)  # r - 1: exact (Sterbenz), as the reference's
    z = np.multiply(x, x, out=w.z)              # (m - 1) or (m - 1) + m
    x64, t, y = w.x64, w.t, w.y
    np.copyto(x64, x)
    np.multiply(x64, _LOG_P[0], out=t)  # the Horner value stays in t: every pass is one dtype
    for c in _LOG_P[1:-1]:
        _fused_kept(t, c, y)
        t *= x64
    _fused_in_binade(t, _LOG_P[-1], _LOG_LAST)
    t *= x64  # exact: the float32 product x * y, rounded as it is stored
    np.copyto(y, t, casting="same_kind")
    np.multiply(y, z, out=t, dtype=F64)
    _fused(t, np.multiply(e, LOG_Q1, out=w.f), y)
    z *= HALF  # exact: fma(-z, 0.5, y) is one rounding of y - z/2
    y -= z
    x += y
    e *= LOG_Q2  # exact: an exponent (|e| <= 24) times a 9-bit constant
    x += e
    return x


def _z_times_poly(z, z64, coeffs, rounders, t, out):
    """``out = z * p(z)`` in float32 for sincos's quadratic ``p``, both of whose fused steps
    stay in one binade (``rounders``)."""
    np.multiply(z64, coeffs[0], out=t)
    _fused_in_binade(t, coeffs[1], rounders[0])
    t *= z64
    _fused_in_binade(t, coeffs[2], rounders[1])
    np.copyto(out, t, casting="same_kind")  # exact: a float32 value
    out *= z
    return out


def sincos_grid(theta: np.ndarray, w: Work | None = None,
                out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``sincos256_ps(theta)`` for ``theta = TWO_PI * k * 2**-24`` as ``(sin, cos)``, written
    into ``out`` (a (2, n) float32 array, cos first) if given. Leaves ``w.x`` alone."""
    n = theta.size
    w = Work(n) if w is None else w
    f = np.multiply(theta, FOPI, out=w.f)
    j = w.j
    np.copyto(j, f, casting="unsafe")  # truncates, as cvttps2dq (theta >= 0)
    j += 1
    j &= -2
    yf = w.yf
    np.copyto(yf, j, casting="unsafe")
    sign_sin = np.bitwise_and(j, 4, out=w.sign_sin)
    sign_sin <<= 29
    swap = np.bitwise_and(j, 2, out=w.swap)  # j & 2: the polynomials trade places
    swap <<= 30
    sign_cos = np.bitwise_xor(sign_sin, swap, out=w.sign_cos)  # the reference's ~(j - 2) & 4:
    swap >>= 31  # all ones where j & 2 (arithmetic)          # bit 2 of j + 2, j even
    x = np.multiply(yf, DP1, out=w.xs)  # exact (an octant <= 8 times an 8-bit constant): the
    x += theta  # add is fma's one rounding
    np.multiply(yf, DP2, out=f)  # exact likewise (an 11-bit constant)
    x += f
    t = w.t
    np.multiply(yf, _DP3, out=t, dtype=F64)
    _fused(t, x, x)
    z, z64 = w.z, w.x64
    np.multiply(x, x, out=z)
    np.copyto(z64, z)
    half_z = np.multiply(z, HALF, out=w.e)
    yc = _z_times_poly(z, z64, _COS_P, _COS_STEPS, t, w.y)
    np.multiply(z64, yc, out=t)
    np.subtract(t, half_z, out=yc, casting="same_kind")
    yc += ONE
    ys = _z_times_poly(z, z64, _SIN_P, _SIN_STEPS, t, w.ys)
    np.multiply(x, ys, out=t, dtype=F64)
    _fused(t, x, ys)
    if out is None:
        out = np.empty((2, n), F32)
    cos, sin = out[0].view(np.int32), out[1].view(np.int32)
    ycu, ysu = yc.view(np.int32), ys.view(np.int32)
    diff = np.bitwise_xor(ycu, ysu, out=w.d)
    diff &= swap
    np.bitwise_xor(ycu, diff, out=cos)
    cos ^= sign_cos
    np.bitwise_xor(ysu, diff, out=sin)
    sin ^= sign_sin
    return out[1], out[0]


def _finish(cs: np.ndarray, mean: float, std: float) -> None:
    """``cs = fma(cs, std, mean)`` in float32, in place (see the module note)."""
    m, s = F32(mean), F32(std)
    if s == 1:
        cs += m
    elif m == 0:
        cs *= s
        cs += m
    else:
        cs[...] = fma32_rounded(cs.astype(F64).ravel(), F64(s), F64(m), None).reshape(cs.shape)


def fill_from_words(words: np.ndarray, out: np.ndarray, mean: float, std: float) -> None:
    """``out`` (float32, contiguous, rows of 16) = normal_fill16 of the float uniforms of
    ``words`` (uint32, contiguous, the same length): per row, lanes 0-7 ``radius * cos``, 8-15
    ``radius * sin``."""
    if not (words.flags.c_contiguous and out.flags.c_contiguous):
        raise ValueError("normal_fill32.fill_from_words takes contiguous words and output")
    rows = words.size // 16
    halves = words.view(_HALF_ROW).reshape(rows, 2)
    out_halves = out.reshape(-1).view(_HALF_ROW).reshape(rows, 2)
    for lo in range(0, rows, _ROWS):
        hi = min(lo + _ROWS, rows)
        w = _work((hi - lo) * 8)
        k1, k2 = w.k1, w.k2
        np.copyto(k1.view(_HALF_ROW), halves[lo:hi, 0])
        np.copyto(k2.view(_HALF_ROW), halves[lo:hi, 1])
        k1 &= _MASK24
        k2 &= _MASK24
        u1 = w.m  # log_grid only reads it
        np.copyto(u1, k1, casting="unsafe")  # < 2**24: exact
        u1 *= -_GRID
        u1 += ONE  # 1 - k * 2**-24, exact
        radius = np.multiply(log_grid(u1, w), MINUS_TWO, out=w.radius)
        np.sqrt(radius, out=radius)
        theta = w.m  # free again: log_grid's result is in w.x
        np.copyto(theta, k2, casting="unsafe")
        theta *= _TWO_PI_GRID  # TWO_PI * (k * 2**-24): the same real number, the same rounding
        cs = w.cs
        sincos_grid(theta, w, cs)
        cs *= radius
        _finish(cs, mean, std)
        np.copyto(out_halves[lo:hi, 0], cs[0].view(_HALF_ROW))
        np.copyto(out_halves[lo:hi, 1], cs[1].view(_HALF_ROW))


def normal_fill_words(gen, n: int, mean: float, std: float, out: np.ndarray) -> None:
    """``out[:m]`` for ``m = n // 16 * 16``: normal_fill's whole blocks over ``m`` fresh words of
    ``gen``, drawn a chunk at a time (the same stream as one draw)."""
    m = n - n % 16
    step = _ROWS * 16
    for lo in range(0, m, step):
        hi = min(lo + step, m)
        fill_from_words(gen.random(hi - lo), out[lo:hi], mean, std)
