"""torch.special's zeta, polygamma (n >= 2), ndtri, erfcx and log_ndtr (Math.h), in double
precision with upstream's branches (special_common.py says why).

zeta is Cephes' (Euler-Maclaurin after at least nine terms), which upstream evaluates in double
even for float32; polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x). erfcx on [0, 50] is upstream's
table of 100 Chebyshev fits, which is not reproduced here: exp(x^2) erfc(x) is computed with x^2
split exactly in two parts (below 10) and by its asymptotic series (10 to 50), each within a few
ulp of the true value; beyond 50 and for negative x it is upstream's formula.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.tensor import TensorBase
from ..platform import libm, libm_arrays as C
from ..ops.kernel_registry import kernel
from .pointwise_base import FLOATING, check, finish, operand, quiet
from .pointwise_binary import dtype2
from .pointwise_math import erfc64
from .special_common import F64, polevl, unary
from .composite_out import register_out_forms

_MACHEP = 1.11022302462515654042E-16
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def zeta(x, q):
    """Hurwitz zeta(x, q), elementwise over broadcast float64 arrays."""
    x, q = np.broadcast_arrays(np.asarray(x, F64), np.asarray(q, F64))
    res = np.full(x.shape, np.nan)
    done = np.zeros(x.shape, bool)
    s = C.power(q, -x)
    a = q.copy()
    b = np.zeros_like(x)
    i = 0
    while True:
        cont = ~done & ((i < 9) | (a <= 9.0))
        if not cont.any():
            break
        i += 1
        a = np.where(cont, a + 1.0, a)
        b = np.where(cont, C.power(a, -x), b)
        s = np.where(cont, s + b, s)
        conv = cont & (-_MACHEP * s < b) & (b < _MACHEP * s)
        res = np.where(conv, s, res)
        done |= conv
    w = a
    s = s + b * w / (x - 1.0)
    s = s - 0.5 * b
    a = np.ones_like(x)
    k = np.zeros_like(x)
    for c in _ZETA_A:
        a = a * (x + k)
        b = b / w
        t = a * b / c
        s = s + t
        conv = ~done & (np.abs(t / s) < _MACHEP)
        res = np.where(conv, s, res)
        done |= conv
        k = k + 1.0
        a = a * (x + k)
        b = b / w
        k = k + 1.0
    res = np.where(done, res, s)
    bad_q = q <= 0
    res = np.where(bad_q & (x != np.floor(x)), np.nan, res)
    res = np.where(bad_q & (q == np.floor(q)), np.inf, res)
    res = np.where(x < 1.0, np.nan, res)
    return np.where(x == 1.0, np.inf, res)


def _zeta_compute(x, q):
    dt = dtype2(x, q)
    if not (dt.is_floating_point or dt.is_complex):
        dt = D.get_default_dtype()
    check("zeta_cpu", dt, FLOATING)
    xs = np.asarray(operand(x, dt, F64), F64)
    qs = np.asarray(operand(q, dt, F64), F64)
    with quiet():
        r = zeta(xs, qs)
    return finish(r, dt, *(t for t in (x, q) if isinstance(t, TensorBase)))


def _wrap(v):
    from ..core.construct import wrapped_number

    return v if isinstance(v, TensorBase) else wrapped_number(v)


@kernel("special_zeta")
def special_zeta(self, other):
    return _zeta_compute(self, other)


@kernel("special_zeta.self_scalar")
def special_zeta_self_scalar(self, other):
    return _zeta_compute(_wrap(self), other)


@kernel("special_zeta.other_scalar")
def special_zeta_other_scalar(self, other):
    return _zeta_compute(self, _wrap(other))


def _c_lgamma(v: float) -> float:
    """glibc's lgamma (std::lgamma): Python's math.lgamma is CPython's own and differs in the
    last bit (exp(lgamma(6)) is 120 in C, 120.00000000000009 through math)."""
    return libm.function("lgamma")(v)


def polygamma_np(n: int, x: np.ndarray) -> np.ndarray:
    """calc_polygamma for n >= 2: (-1)^(n+1) exp(lgamma(n + 1)) zeta(n + 1, x)."""
    sign = 1.0 if n % 2 else -1.0
    xs = np.asarray(x, F64)
    return (sign * math.exp(_c_lgamma(n + 1.0)) * zeta(np.full(xs.shape, n + 1.0), xs)
            ).astype(x.dtype)


# --- ndtri ------------------------------------------------------------------------------------

_S2PI = 2.50662827463100050242E0
_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0)
_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0)
_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9)
_EXPM2 = 0.13533528323661269189


def ndtri(y0):
    code = ~(y0 > 1.0 - _EXPM2)
    y = np.where(code, y0, 1.0 - y0)
    central = y > _EXPM2
    yc = np.where(central, y, 0.5) - 0.5
    y2 = yc * yc
    mid = (yc + yc * (y2 * polevl(y2, _P0) / polevl(y2, _Q0))) * _S2PI
    yt = np.where(central | ~(y > 0), 0.01, y)
    x = np.sqrt(-2.0 * C.log(yt))
    x0 = x - C.log(x) / x
    z = 1.0 / x
    x1 = np.where(x < 8.0, z * polevl(z, _P1) / polevl(z, _Q1),
                  z * polevl(z, _P2) / polevl(z, _Q2))
    tail = x0 - x1
    tail = np.where(code, -tail, tail)
    out = np.where(central, mid, tail)
    out = np.where((y0 < 0) | (y0 > 1), np.nan, out)
    out = np.where(y0 == 1.0, np.inf, out)
    out = np.where(y0 == 0.0, -np.inf, out)
    return np.where(np.isnan(y0), y0, out)


# --- erfcx and log_ndtr -----------------------------------------------------------------------

_ISPI = 0.56418958354775628694807945156
_SPLIT = 134217729.0  # 2**27 + 1: Dekker's splitting constant


def _exp_square(x):
    """exp(x*x) with x*x carried as an exact sum hi + lo."""
    c = _SPLIT * x
    xh = c - (c - x)
    xl = x - xh
    hi = xh * xh
    lo = 2.0 * xh * xl + xl * xl
    return C.exp(hi) * C.exp(lo)


def _erfcx_pos(x):
    """erfcx for 0 <= x <= 50."""
    near = np.where(x < 10.0, x, 0.0)
    direct = _exp_square(near) * erfc64(near)
    far = np.where(x >= 10.0, x, 10.0)
    inv = 1.0 / (2.0 * far * far)
    term = np.ones_like(far)
    total = np.ones_like(far)
    for k in range(1, 40):
        term = term * -(2 * k - 1) * inv
        total = total + term
    series = total * _ISPI / far
    return np.where(x < 10.0, direct, series)


def erfcx(x):
    ax = np.where(np.isnan(x), 0.0, x)
    pos = ax >= 0
    xp = np.where(pos, ax, -ax)
    big = xp > 50
    xb = np.where(big, xp, 51.0)
    cf = _ISPI * ((xb * xb) * (xb * xb + 4.5) + 2) / (xb * ((xb * xb) * (xb * xb + 5) + 3.75))
    cf = np.where(xb > 5e7, _ISPI / xb, cf)
    tab = _erfcx_pos(np.where(big, 0.0, xp))
    pos_val = np.where(big, cf, tab)
    xn = np.where(pos, -1.0, ax)
    twice = 2.0 * C.exp(xn * xn)  # upstream's own formula here: x*x rounded first
    neg_val = np.where(xn < -6.1, twice, twice - tab)
    neg_val = np.where(xn < -26.7, np.inf, neg_val)
    out = np.where(pos, pos_val, neg_val)
    return np.where(np.isnan(x), x, out)


_FRAC_SQRT_2 = 0.707106781186547524400844362104849039


def log_ndtr(x):
    t = x * _FRAC_SQRT_2
    low = x < -1.0
    tl = np.where(low, t, 0.0)
    left = C.log(erfcx(-tl) / 2) - tl * tl
    th = np.where(low, 0.0, t)
    right = C.log1p(-erfc64(th) / 2)
    return np.where(low, left, right)


unary("special_ndtri", ndtri)
unary("special_erfcx", erfcx)
unary("special_log_ndtr", log_ndtr)


# --- CompositeImplicitAutograd aliases --------------------------------------------------------

def _call(name, *args, **kwargs):
    from ..dispatch.call import call

    return call(name, *args, **kwargs)


@kernel("special_gammainc", composite=True)
def special_gammainc(self, other):
    return _call("igamma", self, other)


@kernel("special_gammaincc", composite=True)
def special_gammaincc(self, other):
    return _call("igammac", self, other)


@kernel("special_softmax", composite=True)
def special_softmax(self, dim, dtype=None):
    return _call("softmax.int", self, dim, dtype)


@kernel("special_log_softmax", composite=True)
def special_log_softmax(self, dim, *, dtype=None):
    return _call("log_softmax.int", self, dim, dtype)


@kernel("special_logsumexp", composite=True)
def special_logsumexp(self, dim, keepdim=False):
    return _call("logsumexp", self, dim, keepdim)


register_out_forms("special_gammainc", "special_gammaincc", "special_softmax",
                   "special_log_softmax", "special_logsumexp")


@kernel("polygamma_")
def polygamma_(self, n):
    """CompositeExplicitAutograd upstream: polygamma_out(self, n, self), with the structured
    in-place check that the result's dtype can be cast to self's."""
    from ..core.promotion import can_cast

    result = _call("polygamma", n, self)
    if not can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {result.dtype._cpp_name} can't be cast to the desired "
                           f"output type {self.dtype._cpp_name}")
    return _call("copy_", self, result)
