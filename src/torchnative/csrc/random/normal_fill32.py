"""normal_fill's float32 Box-Muller (``avx_mathfun``'s reference), bit for bit, at numpy speed.

normal_fill only ever feeds its Box-Muller uniforms ``k * 2**-24`` made from the generator's
words, so ``log256_ps`` sees ``1 - k * 2**-24`` and ``sincos256_ps`` sees ``TWO_PI * k * 2**-24``:
2**24 inputs each. On those inputs the steps below give the reference's bits, checked
exhaustively by tests/differential/test_random_engine.py::test_grid_box_muller_is_the_reference_on_every_input.
What makes each step cheap without changing a bit:

* A fused step whose product is exact in float32 (an integer exponent or octant times a
  constant with few significant bits, ``z * 0.5``) is a plain float32 multiply and add: the
  add is the one rounding fma makes.
* Any other fused step is one float64 multiply and one float64 add whose result numpy rounds to
  float32 as it stores it (two ufunc calls, no conversion passes). The product of two float32
  values is exact in float64, so that is the exact sum rounded twice; on these inputs that
  never differs from fma's single rounding (the exhaustive check above).
* What the grid rules out is not computed: ``1 - u`` is never <= 0 (no invalid lanes, no clamp
  to the smallest normal) and ``TWO_PI * u`` is never negative (no sign to carry into sin).
* The caller's ``* std + mean`` is a plain float32 multiply and add when ``mean`` is zero (the
  product rounds once; adding a zero only turns fma's ``-0 + +0`` into ``+0`` as fma does) or
  ``std`` is one (the product is exact); otherwise the checked ``fpmath.fma32_rounded``.

Rows of 16 go through a chunk at a time, the words drawn per chunk, so every temporary stays
in the CPU's cache; cos and sin land in one (2, lanes) buffer so the radius and ``* std +
mean`` run once over both halves.
"""

from __future__ import annotations

import numpy as np

from .avx_mathfun import (COS_P, DP1, DP2, DP3, FOPI, HALF, LOG_P, LOG_Q1, LOG_Q2, MINUS_TWO,
                          ONE, SIN_P, SQRTHF, TWO_PI)
from .fpmath import F32, F64, fma32_rounded

_ROWS = 4096  # rows of 16 per chunk: 32K lanes per half (fewer calls beat a smaller cache footprint)
_MASK24 = np.uint32((1 << 24) - 1)
_GRID = F32(2.0 ** -24)
_TWO_PI_GRID = TWO_PI * _GRID  # exact: a power-of-two scaling
_SQRTHF_BITS = np.uint32(0x3F3504F3)  # SQRTHF's bits: positive floats order as their bits
_LOG_P = [float(p) for p in LOG_P]  # float32 constants as Python floats (float64 arithmetic)
_COS_P = [float(p) for p in COS_P]
_SIN_P = [float(p) for p in SIN_P]
_DP3 = float(DP3)


class Work:
    """Scratch arrays of ``n`` lanes, made on first use and reused chunk after chunk (numpy
    allocating each temporary afresh costs several times the arithmetic on it). log_grid and
    sincos_grid share the names whose contents do not outlive them (not log's result "x")."""

    def __init__(self, n: int):
        self.n = n
        self._bufs: dict[str, np.ndarray] = {}

    def __call__(self, name: str, dtype, n: int) -> np.ndarray:
        buf = self._bufs.get(name)
        if buf is None or buf.size < n:
            buf = self._bufs[name] = np.empty(max(self.n, n), dtype)
        return buf[:n]


def _fused(t: np.ndarray, c, out: np.ndarray) -> np.ndarray:
    """``out = float32(t + c)``: the float64 sum rounded as numpy stores it."""
    return np.add(t, c, out=out, casting="same_kind")


def _horner(x64: np.ndarray, coeffs: list, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``y = (...(c0 * x + c1) * x + ...) + cn`` with every fused step rounded to float32."""
    np.multiply(x64, coeffs[0], out=t)
    _fused(t, coeffs[1], y)
    for c in coeffs[2:]:
        np.multiply(y, x64, out=t)
        _fused(t, c, y)
    return y


def log_grid(u1: np.ndarray, w: Work | None = None) -> np.ndarray:
    """``log256_ps(u1)`` for ``u1 = 1 - k * 2**-24``, into ``w``'s scratch."""
    n = u1.size
    w = Work(n) if w is None else w
    bits = u1.view(np.uint32)
    mb = w("mb", np.uint32, n)  # the mantissa as a float in [0.5, 1)
    np.bitwise_and(bits, np.uint32(0x007FFFFF), out=mb)
    mb |= np.uint32(0x3F000000)
    below = w("below", np.uint32, n)  # below sqrt(1/2) the reference doubles it: 2m - 1 is
    np.less(mb, _SQRTHF_BITS, out=below)  # (m - 1) + m, exact either way
    below <<= np.uint32(23)
    mb += below
    ei = w("ei", np.int32, n)  # e = exponent + 1 - doubled: u1's exponent field minus mb's
    np.subtract(bits.view(np.int32), mb.view(np.int32), out=ei)  # (same mantissa bits)
    ei >>= 23
    e = w("e", F32, n)
    np.copyto(e, ei, casting="unsafe")  # small integers: exact
    x = w("x", F32, n)
    np.subtract(mb.view(F32), ONE, out=x)  # exact (Sterbenz)
    z = w("z", F32, n)
    np.multiply(x, x, out=z)
    x64, t, y = w("x64", F64, n), w("t", F64, n), w("y", F32, n)
    np.copyto(x64, x)
    _horner(x64, _LOG_P, y, t)
    np.multiply(x, y, out=y)
    np.multiply(y, z, out=t, dtype=F64)
    eq1 = w("f", F32, n)
    np.multiply(e, LOG_Q1, out=eq1)
    _fused(t, eq1, y)
    z *= HALF  # exact: fma(-z, 0.5, y) is one rounding of y - z/2
    y -= z
    x += y
    e *= LOG_Q2  # exact: an exponent (|e| <= 24) times a 9-bit constant
    x += e
    return x


def sincos_grid(theta: np.ndarray, w: Work | None = None,
                out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``sincos256_ps(theta)`` for ``theta = TWO_PI * k * 2**-24`` as ``(sin, cos)``, written
    into ``out`` (a (2, n) float32 array, cos first) if given."""
    n = theta.size
    w = Work(n) if w is None else w
    f = w("f", F32, n)
    np.multiply(theta, FOPI, out=f)
    j = w("j", np.int32, n)
    np.copyto(j, f, casting="unsafe")  # truncates, as cvttps2dq (theta >= 0)
    j += 1
    j &= -2
    yf = w("yf", F32, n)
    np.copyto(yf, j, casting="unsafe")
    ju = j.view(np.uint32)
    sign_sin = w("sign_sin", np.uint32, n)
    np.bitwise_and(ju, np.uint32(4), out=sign_sin)
    sign_sin <<= np.uint32(29)
    swap = w("swap", np.int32, n)  # all ones where j & 2 (the polynomials trade places)
    np.left_shift(j, 30, out=swap)
    swap >>= 31  # arithmetic: bit 1 spread over the word
    sign_cos = w("sign_cos", np.uint32, n)  # the reference's ~(j - 2) & 4 is (j + 2) & 4
    np.add(ju, np.uint32(2), out=sign_cos)
    sign_cos &= np.uint32(4)
    sign_cos <<= np.uint32(29)
    x = w("xs", F32, n)  # not "x": log_grid's result may still be in use
    np.multiply(yf, DP1, out=x)  # exact (an octant <= 8 times an 8-bit constant): the add is
    x += theta  # fma's one rounding
    np.multiply(yf, DP2, out=f)  # exact likewise (an 11-bit constant)
    x += f
    t = w("t", F64, n)
    np.multiply(yf, _DP3, out=t, dtype=F64)
    _fused(t, x, x)
    z, z64, half_z = w("z", F32, n), w("x64", F64, n), w("e", F32, n)
    np.multiply(x, x, out=z)
    np.copyto(z64, z)
    np.multiply(z, HALF, out=half_z)
    yc = _horner(z64, _COS_P, w("y", F32, n), t)
    yc *= z
    np.multiply(z64, yc, out=t)
    np.subtract(t, half_z, out=yc, casting="same_kind")
    yc += ONE
    ys = _horner(z64, _SIN_P, w("ys", F32, n), t)
    ys *= z
    np.multiply(x, ys, out=t, dtype=F64)
    _fused(t, x, ys)
    if out is None:
        out = np.empty((2, n), F32)
    cos, sin = out[0].view(np.uint32), out[1].view(np.uint32)
    ycu, ysu = yc.view(np.uint32), ys.view(np.uint32)
    diff = swap.view(np.uint32)
    diff &= np.bitwise_xor(ycu, ysu, out=w("d", np.uint32, n))
    np.bitwise_xor(ycu, diff, out=cos)
    cos ^= sign_cos
    np.bitwise_xor(ysu, diff, out=sin)
    sin ^= sign_sin
    return out[1], out[0]


def _finish(a: np.ndarray, mean: float, std: float, out: np.ndarray) -> None:
    """``out = fma(a, std, mean)`` in float32 (see the module note)."""
    m, s = F32(mean), F32(std)
    if s == 1:
        np.add(a, m, out=out)
    elif m == 0:
        np.multiply(a, s, out=out)
        out += m
    else:
        out[...] = fma32_rounded(a.astype(F64).ravel(), F64(s), F64(m), None).reshape(out.shape)


def fill_from_words(words: np.ndarray, out: np.ndarray, mean: float, std: float,
                    w: Work | None = None) -> None:
    """``out`` (float32, rows of 16) = normal_fill16 of the float uniforms of ``words`` (uint32,
    the same length): per row, lanes 0-7 ``radius * cos``, 8-15 ``radius * sin``."""
    rows = words.size // 16
    w = Work(min(rows, _ROWS) * 8) if w is None else w
    words = words.reshape(rows, 16)
    out = out.reshape(rows, 16)
    for lo in range(0, rows, _ROWS):
        hi = min(lo + _ROWS, rows)
        r = hi - lo
        k = r * 8
        wd = words[lo:hi]
        u1 = w("u", F32, k).reshape(r, 8)
        np.bitwise_and(wd[:, :8], _MASK24, out=u1, casting="unsafe")  # < 2**24: exact
        u1 *= -_GRID
        u1 += ONE  # 1 - k * 2**-24, exact
        radius = log_grid(u1.reshape(-1), w)
        radius *= MINUS_TWO
        np.sqrt(radius, out=radius)
        theta = u1
        np.bitwise_and(wd[:, 8:], _MASK24, out=theta, casting="unsafe")
        theta *= _TWO_PI_GRID  # TWO_PI * (k * 2**-24): the same real number, the same rounding
        cs = w("cs", F32, 2 * k).reshape(2, k)
        sincos_grid(theta.reshape(-1), w, cs)
        cs3 = cs.reshape(2, r, 8)
        cs3 *= radius.reshape(1, r, 8)
        _finish(cs3.transpose(1, 0, 2), mean, std, out[lo:hi].reshape(r, 2, 8))


def normal_fill_words(gen, n: int, mean: float, std: float, out: np.ndarray) -> None:
    """``out[:m]`` for ``m = n // 16 * 16``: normal_fill's whole blocks over ``m`` fresh words of
    ``gen``, drawn a chunk at a time (the same stream as one draw)."""
    m = n - n % 16
    step = _ROWS * 16
    w = Work(min(m, step) // 2)
    for lo in range(0, m, step):
        hi = min(lo + step, m)
        fill_from_words(gen.random(hi - lo), out[lo:hi], mean, std, w)
