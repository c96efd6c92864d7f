"""Less common pointwise ops: gamma-family functions (lgamma, digamma, polygamma n<=1), gcd/lcm,
frexp, angle, log_sigmoid, equal. polygamma n >= 2 is zeta's (special_cephes.py).

digamma is upstream's own algorithm (calc_digamma: reflection, recurrence up to 10, asymptotic
series) in the working precision. lgamma has no upstream formula of its own (it calls the C
library); here it is computed in float64 by recurrence to x >= 10 and Stirling's series, then
rounded -- float32 results are libm's to the last bit in nearly all elements, float64 ones agree
to a few ulp away from lgamma's zeros at 1 and 2.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.tensor import TensorBase
from ..platform import libm_arrays as C
from .pointwise_base import (COMPLEX, FLOATING, FLOAT_H, INTEGRAL, check, finish, operand, quiet,
                             result_type)
from .pointwise_binary import apply2, dtype2
from .pointwise_unary import apply1, float_dtype
from .pointwise_math import exact, fma
from ..ops.kernel_registry import kernel

_HALF_LOG_2PI = 0.91893853320467274178


def _zeta_minus_one(k: int) -> float:
    """zeta(k) - 1 by Euler-Maclaurin summation from n = 20 (double precision for k >= 2)."""
    n = 20
    head = sum(m ** -k for m in range(2, n))
    # tail sum_{m>=n} m^-k = n^(1-k)/(k-1) + n^-k/2 + sum_j B_2j/(2j)! k(k+1)...(k+2j-2) n^(-k-2j+1)
    tail = n ** (1 - k) / (k - 1) + n ** -k / 2
    bern = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)
    fact, rising = 1.0, 1.0
    for j, b in enumerate(bern, 1):
        fact *= (2 * j - 1) * (2 * j)
        rising *= (k + 2 * j - 2) * (k + 2 * j - 3) if j > 1 else k
        tail += b / fact * rising * n ** (-k - 2 * j + 1)
    return head + tail


_EULER_GAMMA = 0.57721566490153286061
# lgamma(2 + z) = (1 - gamma) z + sum_k (-1)^k (zeta(k) - 1) / k z^k, for |z| <= 1/2
_LG2 = [(-1) ** k * _zeta_minus_one(k) / k for k in range(2, 40)]


def _series(z):
    acc = np.zeros_like(z)
    for c in reversed(_LG2):
        acc = acc * z + c
    return z * ((1 - _EULER_GAMMA) + z * acc)


def _lgamma_pos(z):
    """lgamma for z >= 0.5: the series around 2 (down-shifted by recurrence below 10, where
    every term added is positive), Stirling's series from 10 up."""
    shift = np.zeros_like(z)
    w = z.copy()
    for _ in range(10):  # z >= 0.5 needs at most 10 steps
        small = w < 10
        if not small.any():
            break
        shift = shift + np.where(small, np.log(np.where(small, w, 1.0)), 0.0)
        w = np.where(small, w + 1, w)
    inv = 1.0 / w
    inv2 = inv * inv
    series = inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (1 / 1680 - inv2 / 1188))))
    r = (w - 0.5) * np.log(w) - w + _HALF_LOG_2PI + series - shift
    near2 = (z >= 1.5) & (z < 2.5)
    near1 = (z >= 0.5) & (z < 1.5)
    r = np.where(near2, _series(np.where(near2, z - 2, 0.0)), r)
    z1 = np.where(near1, z - 1, 0.0)
    r = np.where(near1, _series(z1) - np.log1p(z1), r)
    mid = (z >= 2.5) & (z < 10)
    if mid.any():
        n = np.where(mid, np.floor(z - 1.5), 0.0)
        logs = np.zeros_like(z)
        for k in range(1, 9):
            logs = logs + np.where(k <= n, np.log(np.where(k <= n, z - k, 1.0)), 0.0)
        r = np.where(mid, _series(np.where(mid, z - n - 2, 0.0)) + logs, r)
    return r


def lgamma64(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    with quiet():
        neg = x < 0.5
        r = _lgamma_pos(np.where(neg, 1.0 - x, x))
        # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x), sin taken of x's
        # distance to the nearest integer so that tiny |x| keeps its precision
        s = np.abs(np.sin(np.pi * (x - np.round(x))))
        r = np.where(neg, np.log(np.pi / s) - r, r)
        r = np.where((x <= 0) & (x == np.floor(x)), np.inf, r)
        r = np.where(np.isinf(x), np.inf, r)
        return np.where(np.isnan(x), x, r)


@kernel("lgamma")
def lgamma(self):
    dt = float_dtype(self)
    check("lgamma_vml_cpu", dt, FLOAT_H)
    return apply1(lambda x: lgamma64(x).astype(x.dtype), self, dt)


_PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
          8.33333333333333333333E-2)
_PSI_10 = 2.25175258906672110764


def digamma_np(x: np.ndarray) -> np.ndarray:
    """calc_digamma, in x's precision (float32 or float64)."""
    t = x.dtype.type
    with quiet():
        neg = x < 0
        integer = x == np.trunc(x)
        frac = x - np.trunc(x)
        y = np.where(neg, t(1) - x, x)
        result = np.zeros_like(y)
        for _ in range(12):
            small = y < 10
            if not small.any():
                break
            result = np.where(small, result - t(1) / np.where(small, y, t(1)), result)
            y = np.where(small, y + t(1), y)
        z = t(1) / (y * y)
        poly = np.full_like(z, t(_PSI_A[0]))
        for c in _PSI_A[1:]:
            poly = fma(poly, z, t(c))  # polevl, contracted to fused multiply-adds
        asym = np.where(y < t(1e17), z * poly, t(0))
        logy = exact(np.log, y)
        r = np.where(y == 10, result + t(_PSI_10), result + logy - t(0.5) / y - asym)
        f64 = frac.astype(np.float64)
        r = np.where(neg, r - (np.pi / C.tan(np.pi * f64)).astype(y.dtype), r)
        r = np.where(neg & integer, t(np.nan), r)
        r = np.where(x == 0, np.copysign(t(np.inf), -x), r)
        return r


@kernel("digamma")
def digamma(self):
    dt = float_dtype(self)
    check("digamma", dt, FLOAT_H)
    return apply1(digamma_np, self, dt)


def _trigamma(x):
    """calc_trigamma in x's own precision, as upstream's float and double overloads compute it
    (float16 and bfloat16 through the float one): reflection through sin(pi x), six recurrence
    steps, the asymptotic series with its multiply-adds contracted as the compiled code
    contracts them. Reached only from the polygamma kernel, which the door runs in the quiet
    float state (a pole's division by zero is a value)."""
    t = x.dtype.type
    one, pi = t(1), t(np.pi)
    neg = x < t(0.5)
    s = C.sin(pi * x)
    result = np.where(neg, t(0) - (pi * pi) / (s * s), t(0))
    y = np.where(neg, one - x, x)
    for _ in range(6):
        result = result + one / (y * y)
        y = y + one
    ixx = one / (y * y)
    series = fma(-ixx, fma(-ixx, one / t(42), one / t(30)), one / t(6))
    result = result + fma(ixx, series, one + one / (t(2) * y)) / y
    return np.where(neg, -result, result)


@kernel("polygamma")
def polygamma(n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    dt = float_dtype(self)
    check("polygamma", dt, FLOAT_H)
    if n == 0:
        return apply1(digamma_np, self, dt)
    if n == 1:
        return apply1(_trigamma, self, dt)
    from .special_cephes import polygamma_np

    return apply1(lambda x: polygamma_np(n, x), self, dt)


# ---- integer ops --------------------------------------------------------------------------------
def _gcd(x, y):
    a, b = np.broadcast_arrays(np.abs(x), np.abs(y))
    a, b = a.copy(), b.copy()
    while np.any(b):
        nz = b != 0
        r = np.where(nz, np.remainder(a, np.where(nz, b, 1)), 0)
        a = np.where(nz, b, a)
        b = r
    return a


@kernel("gcd")
def gcd(self, other):
    dt = dtype2(self, other)
    check("gcd_cpu", dt, INTEGRAL)
    return apply2(_gcd, self, other, dt)


@kernel("lcm")
def lcm(self, other):
    dt = dtype2(self, other)
    check("lcm_cpu", dt, INTEGRAL)

    def fn(x, y):
        # abs(a / g * b) in C's int arithmetic, then stored (wrapping) in the tensor's type
        g = _gcd(x, y).astype(np.int64)
        v = np.abs(x.astype(np.int64) // np.where(g == 0, 1, g) * y.astype(np.int64))
        return np.where(g == 0, 0, v).astype(x.dtype)

    return apply2(fn, self, other, dt)


@kernel("frexp.Tensor")
def frexp(self):
    dt = self._dtype
    if dt not in FLOATING and dt not in (D.BY_NAME["float16"], D.BY_NAME["bfloat16"]):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = operand(self, dt, np.dtype(np.float32) if dt not in FLOATING else D.numpy_dtype(dt))
    m, e = np.frexp(x)
    return finish(m, dt, self), finish(e.astype(np.int32), D.BY_NAME["int32"], self)


@kernel("angle")
def angle(self):
    dt = self._dtype
    if dt in COMPLEX:
        return apply1(lambda z: exact(np.angle, z), self, dt, dt.to_real())
    dt = float_dtype(self)
    check("angle_cpu", dt, FLOAT_H)

    def fn(x):
        r = np.where(x < 0, x.dtype.type(np.pi), x.dtype.type(0))
        return np.where(np.isnan(x), x, r)

    return apply1(fn, self, dt)


@kernel("log_sigmoid_forward")
def log_sigmoid_forward(self):
    dt = self._dtype
    check("log_sigmoid_cpu", dt, FLOAT_H)

    cdt = np.dtype(np.float32) if dt not in FLOATING else D.numpy_dtype(dt)
    x = operand(self, dt, cdt)
    with quiet():
        # upstream: min(x, 0) - log1p(exp(-|x|)); the buffer holds exp(-|x|)
        buf = exact(np.exp, -np.abs(x))
        out = np.minimum(x, 0) - exact(np.log1p, buf)
    return finish(out, dt, self), finish(buf, dt, self)


@kernel("equal")
def equal(self, other):
    if not isinstance(other, TensorBase):
        raise TypeError("equal(): argument 'other' must be Tensor")
    if self._size != other._size:
        return False
    dt = result_type(self, other) if self._dtype is not other._dtype else self._dtype
    cdt = D.numpy_dtype(dt) if dt not in (D.BY_NAME["bfloat16"],) else np.dtype(np.float32)
    return bool(np.array_equal(operand(self, dt, cdt), operand(other, dt, cdt)))

