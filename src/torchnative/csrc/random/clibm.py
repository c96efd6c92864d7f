"""C's scalar arithmetic as upstream's baseline x86-64 build computes it, on Python floats.

The rejection samplers and their gradients (Distributions.h) run one element at a time, mixing
``float`` and ``double`` operations. Python floats are doubles, so:

* a ``float`` operation (``+ - * /``, ``sqrt``) is the double result rounded to float (``f32``):
  double has more than 2 * 24 + 2 bits, so the double rounding is innocuous;
* ``std::log``/``std::pow``/... of a ``float`` argument are glibc's ``logf``/``powf``/...,
  called through ctypes (no Python or numpy function rounds as they do);
* Python's ``math`` raises where C returns an IEEE value (log(0), pow overflow, x/0), and
  ``math.lgamma`` is CPython's own; the ``c*`` helpers give C's answers. Upstream's binary
  links the old symbol versions ``log``/``pow``/``exp@GLIBC_2.2.5`` (SVID wrappers: log of a
  negative number is +NaN there, -NaN in the current version), so those cases call the same
  versioned symbols (``dlvsym``); finite in-domain arguments reach the same code either way.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from ..platform import libm

INF = math.inf
NAN = math.nan
FLT_MIN = 2.0 ** -126
DBL_MIN = 2.0 ** -1022
INT64_MIN = -(1 << 63)

_logf, _log1pf, _tanf = (libm.function(n, single=True) for n in ("logf", "log1pf", "tanf"))
_powf = libm.function("powf", single=True, nargs=2)
_pow = libm.versioned("pow", 2)
_log = libm.versioned("log", 1)
_exp = libm.versioned("exp", 1)
lgamma = libm.function("lgamma")  # glibc's (upstream's lgamma@GLIBC_2.23), not CPython's

_F = struct.Struct("f")


def f32(x: float) -> float:
    """``(float)x``: round to nearest float (overflow to +-inf), back as a Python float."""
    try:
        return _F.unpack(_F.pack(x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def logf(x: float) -> float:
    return _logf(x)


def log1pf(x: float) -> float:
    return _log1pf(x)


def tanf(x: float) -> float:
    return _tanf(x)


def powf(x: float, y: float) -> float:
    return _powf(x, y)


def sqrtf(x: float) -> float:
    return f32(csqrt(x))


def clog(x: float) -> float:
    """``std::log(double)``: -inf at 0, NaN below."""
    return math.log(x) if x > 0.0 else _log(x)


def cexp(x: float) -> float:
    """``std::exp(double)``: inf on overflow."""
    try:
        return math.exp(x)
    except OverflowError:
        return _exp(x)


def cpow(x: float, y: float) -> float:
    """``std::pow(double, double)``: inf on overflow, NaN or inf where ``math.pow`` raises."""
    try:
        return math.pow(x, y)
    except (OverflowError, ValueError):
        return _pow(x, y)


def csqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0.0 else NAN


def cdiv(a: float, b: float) -> float:
    """``a / b`` with IEEE's answer for b == 0."""
    if b != 0.0:
        return a / b
    if a != a or a == 0.0:
        return NAN
    return math.copysign(INF, a) * math.copysign(1.0, b)


def cfloor(x: float) -> float:
    """``std::floor`` as a double (Python's floor returns an int and raises on inf/NaN)."""
    return float(math.floor(x)) if math.isfinite(x) else x


def cceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


def to_int64(x: float) -> int:
    """``(int64_t)x``: x86's cvttsd2si gives INT64_MIN for NaN and out-of-range values."""
    return int(x) if -9.223372036854775808e18 <= x < 9.223372036854775808e18 else INT64_MIN


def cmax(a: float, b: float) -> float:
    """``std::max(a, b)``: ``(a < b) ? b : a`` (a NaN b gives a)."""
    return b if a < b else a


def cmin(a: float, b: float) -> float:
    """``std::min(a, b)``: ``(b < a) ? b : a``."""
    return b if b < a else a


def each(fn, *arrays, dtype=np.float64) -> np.ndarray:
    """``fn`` (one of the scalar functions above) applied element by element to arrays of one
    shape; float functions' results are exact in ``dtype=np.float32``."""
    shape = np.shape(arrays[0])
    lists = [np.asarray(a, np.float64).ravel().tolist() for a in arrays]
    return np.fromiter(map(fn, *lists), dtype, len(lists[0])).reshape(shape)
