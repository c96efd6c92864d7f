"""torch.special's orthogonal polynomials (Math.h's *_polynomial_*_forward): Chebyshev T/U/V/W
and their shifted forms, Hermite H/He, Laguerre L, Legendre P, evaluated by upstream's
three-term recurrences and its closed forms (cos(n acos x) ...) on the same branches.

Every element runs in double precision and is rounded once to the result dtype: float64 results
are upstream's recurrence itself, float32 ones are at least as close to it as upstream's
single-precision loop. ``n`` is truncated to an integer as upstream's static_cast does; a
non-finite ``n`` behaves as a negative one.

The Tensor-Scalar overloads wrap the scalar as a 0-dim tensor (a wrapped number, weak in type
promotion), as upstream's CompositeExplicitAutograd forms do.
"""

from __future__ import annotations

import threading

import numpy as np

from ..core import dtypes as D
from ..core.construct import wrapped_number
from ..core.tensor import TensorBase
from ..platform import libm_arrays as C
from ..ops.kernel_registry import kernel
from .pointwise_base import FLOATING, check, finish, operand, quiet
from .pointwise_binary import dtype2
from .special_common import fma

_F64 = np.dtype(np.float64)
# The closed forms (cos(n acos x) ...) run in the result's precision: upstream's float kernel
# calls acosf/cosf/sinf, and near a zero of the polynomial that rounding is the whole value.
_MODE = threading.local()


def _f(v):
    """``v`` in the precision of the closed forms (float32 for float32 results)."""
    return np.asarray(v, np.float32) if getattr(_MODE, "single", False) else v


def _orders(n: np.ndarray) -> np.ndarray:
    finite = np.isfinite(n) if n.dtype.kind == "f" else np.ones(n.shape, bool)
    return np.where(finite, np.trunc(np.where(finite, n, -1)), -1).astype(np.int64)


def _recur(step, n, p, q, start, stop_on_nan=True):
    """Runs ``r = step(k, p, q)`` for k = start .. n per element; the last r."""
    top = int(n.max()) if n.size else 0
    for k in range(start, top + 1):
        active = k <= n
        if stop_on_nan:
            active &= ~np.isnan(q)
        if not active.any():
            break
        r = step(k, p, q)
        p = np.where(active, q, p)
        q = np.where(active, r, q)
    return q


def _cheb(x, n, first, closed, lim):
    """The common shape of T/U/V/W: q1 = first(x); r = 2x q - p; closed form for n > lim
    (those elements, and |x| == 1, skip the recurrence)."""
    big = (n > lim) & (np.abs(x) < 1)
    steps = np.where(big | (np.abs(x) == 1), 0, n)
    r = _recur(lambda k, p, q: fma(x + x, q, -p), steps, np.ones_like(x), first(x), 2)
    out = np.where(n == 0, 1.0, r)
    if big.any():
        out = np.where(big, closed(np.where(big, x, 0.0), n), out)
    return out


def _cheb_t(x, n):
    out = _cheb(x, n, lambda x: x, lambda x, n: C.cos(_f(n) * C.arccos(_f(x))), 6)
    edge = np.abs(x) == 1
    out = np.where(edge, np.where((x > 0) | (n % 2 == 0), 1.0, -1.0), out)
    return np.where(n < 0, 0.0, out)


def _cheb_u(x, n):
    def closed(x, n):
        t = C.arccos(_f(x))
        s = C.sin(t)
        m = _f(n + 1)
        return np.where(s != 0, C.sin(m * t) / np.where(s != 0, s, 1), m * C.cos(m * t) / _f(x))

    out = _cheb(x, n, lambda x: x + x, closed, 8)
    edge = np.abs(x) == 1
    out = np.where(edge, np.where((x > 0) | (n % 2 == 0), n + 1.0, -(n + 1.0)), out)
    return np.where(n < 0, 0.0, out)


def _cheb_v(x, n):
    odd_sign = np.where(n % 2 == 0, n + n + 1.0, -(n + n + 1.0))

    def closed(x, n):
        t = C.arccos(_f(x))
        half = t / _f(2.0)
        ok = C.sin(half) != 1
        return np.where(ok, C.cos((_f(n) + _f(0.5)) * t) / C.cos(half), odd_sign)

    out = _cheb(x, n, lambda x: x + x - 1.0, closed, 8)
    edge = np.abs(x) == 1
    out = np.where(edge, np.where(x > 0, 1.0, odd_sign), out)
    return np.where(n < 0, 0.0, out)


def _cheb_w(x, n):
    unit = np.where(n % 2 == 0, 1.0, -1.0)

    def closed(x, n):
        t = C.arccos(_f(x))
        half = t / _f(2.0)
        ok = C.cos(half) != 1
        alt = np.where(x > 0, n + n + 1.0, unit)
        return np.where(ok, C.sin((_f(n) + _f(0.5)) * t) / C.sin(half), alt)

    out = _cheb(x, n, lambda x: x + x + 1.0, closed, 8)
    edge = np.abs(x) == 1
    out = np.where(edge, np.where(x > 0, n + n + 1.0, unit), out)
    return np.where(n < 0, 0.0, out)


def _shifted(fn_edge_one, fn_edge_zero, first, closed, lim):
    """Shifted forms: the recurrence in y = 2x - 1 (spelled as upstream spells it), with
    upstream's special values at x == 1 and x == 0."""
    def compute(x, n):
        y = x + x - 1.0
        ys = _f(x) + _f(x) - _f(1.0)
        big = (n > lim) & (np.abs(ys) < 1)
        steps = np.where(big | (x == 0) | (x == 1), 0, n)
        r = _recur(lambda k, p, q: fma(y + y, q, -p), steps, np.ones_like(x), first(x, y), 2)
        out = np.where(n == 0, 1.0, r)
        if big.any():
            out = np.where(big, closed(np.where(big, ys, _f(0.0)), n, x), out)
        out = np.where(x == 0, fn_edge_zero(n), out)
        out = np.where(x == 1, fn_edge_one(n), out)
        return np.where(n < 0, 0.0, out)

    return compute


def _alt(n, value):
    return np.where(n % 2 == 0, value, -value)


def _closed_t(y, n, x):
    return C.cos(_f(n) * C.arccos(y))


def _closed_u(y, n, x):
    t = C.arccos(y)
    s = C.sin(t)
    m = _f(n + 1)
    return np.where(s != 0, C.sin(m * t) / np.where(s != 0, s, 1), m * C.cos(m * t) / y)


def _closed_v(y, n, x):
    t = C.arccos(y)
    half = t / _f(2.0)
    ok = C.sin(half) != 1
    return np.where(ok, C.cos((_f(n) + _f(0.5)) * t) / C.cos(half), _alt(n, n + n + 1.0))


def _closed_w(y, n, x):
    t = C.arccos(y)
    half = t / _f(2.0)
    ok = C.cos(half) != 1
    return np.where(ok, C.sin((_f(n) + _f(0.5)) * t) / C.sin(half), _alt(n, 1.0))


_SHIFTED = {
    "t": _shifted(lambda n: 1.0, lambda n: _alt(n, 1.0), lambda x, y: y, _closed_t, 6),
    "u": _shifted(lambda n: n + 1.0, lambda n: _alt(n, n + 1.0), lambda x, y: y + y, _closed_u,
                  6),
    "v": _shifted(lambda n: 1.0, lambda n: _alt(n, n + n + 1.0), lambda x, y: y + y - 1.0,
                  _closed_v, 6),
    "w": _shifted(lambda n: n + n + 1.0, lambda n: _alt(n, 1.0), lambda x, y: y + y + 1.0,
                  _closed_w, 4),
}


def _hermite_h(limit):
    def compute(x, n):
        steps = np.where(n > limit, 0, n)
        # r = 2x q - k p for k = 2, 4, ..., 2n - 2: step j (2..n) uses k = 2j - 2
        r = _recur(lambda j, p, q: fma(x + x, q, -((2 * j - 2) * p)), steps, np.ones_like(x), x + x,
                   2, stop_on_nan=False)
        out = r
        out = np.where(n > limit, np.nan, out)
        out = np.where(n == 0, 1.0, out)
        return np.where(n < 0, 0.0, out)

    return compute


def _hermite_he(limit):
    def compute(x, n):
        steps = np.where(n > limit, 0, n)
        # r = x q - k p for k = 1 .. n-1: step j (2..n) uses k = j - 1
        r = _recur(lambda j, p, q: fma(x, q, -((j - 1) * p)), steps, np.ones_like(x), x.copy(), 2,
                   stop_on_nan=False)
        out = r
        out = np.where(n > limit, np.nan, out)
        out = np.where(n == 0, 1.0, out)
        return np.where(n < 0, 0.0, out)

    return compute


def _laguerre(x, n):
    p = np.ones_like(x)
    q = 1.0 - x
    # r = ((2k + (1 - x)) q - k p) / (k + 1) for k = 1 .. n-1: step j uses k = j - 1
    r = _recur(lambda j, p, q: fma((2 * (j - 1)) + (1.0 - x), q, -((j - 1) * p)) / j, n, p, q, 2)
    out = np.where(n == 1, 1.0 - x, r)
    out = np.where(n == 0, 1.0, out)
    out = np.where(np.abs(x) == 0, 1.0, out)
    return np.where(n < 0, 0.0, out)


def _legendre(x, n):
    p = np.ones_like(x)
    # r = ((2k + 1) x q - k p) / (k + 1) for k = 1 .. n-1: step j uses k = j - 1
    r = _recur(lambda j, p, q: fma((2 * (j - 1) + 1) * x, q, -((j - 1) * p)) / j, n, p, x.copy(),
               2)
    out = np.where(n == 1, x, r)
    out = np.where(n == 0, 1.0, out)
    edge = np.abs(x) == 1
    out = np.where(edge, np.where((x > 0) | (n % 2 == 0), 1.0, -1.0), out)
    return np.where(n < 0, 0.0, out)


def _as_tensor(v, like):
    return v if isinstance(v, TensorBase) else wrapped_number(v)


def _register(name: str, fn, by_dtype=None):
    def compute(x, n):
        dt = dtype2(x, n)
        if not (dt.is_floating_point or dt.is_complex):
            dt = D.get_default_dtype()
        check(f"{name}_cpu", dt, FLOATING)
        xs = operand(x, dt, _F64)
        ns = _orders(operand(n, dt, _F64))
        xs, ns = np.broadcast_arrays(np.asarray(xs, _F64), ns)
        f = by_dtype(dt) if by_dtype is not None else fn
        _MODE.single = dt is D.BY_NAME["float32"]
        try:
            with quiet():
                r = f(xs, ns)
        finally:
            _MODE.single = False
        return finish(np.asarray(r, _F64), dt, *(t for t in (x, n) if isinstance(t, TensorBase)))

    kernel(f"special_{name}")(lambda x, n: compute(x, n))
    kernel(f"special_{name}.x_scalar")(lambda x, n: compute(_as_tensor(x, n), n))
    kernel(f"special_{name}.n_scalar")(lambda x, n: compute(x, _as_tensor(n, x)))


_register("chebyshev_polynomial_t", _cheb_t)
_register("chebyshev_polynomial_u", _cheb_u)
_register("chebyshev_polynomial_v", _cheb_v)
_register("chebyshev_polynomial_w", _cheb_w)
for _k in "tuvw":
    _register(f"shifted_chebyshev_polynomial_{_k}", _SHIFTED[_k])
# getHermitianLimit: float 128, double 512
_register("hermite_polynomial_h", None,
          lambda dt: _hermite_h(128 if dt is D.BY_NAME["float32"] else 512))
_register("hermite_polynomial_he", None,
          lambda dt: _hermite_he(128 if dt is D.BY_NAME["float32"] else 512))
_register("laguerre_polynomial_l", _laguerre)
_register("legendre_polynomial_p", _legendre)
