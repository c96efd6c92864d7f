"""``_standard_gamma_grad`` and ``_dirichlet_grad``: the reparameterised gradients of gamma and
Dirichlet (Beta) samples, as upstream's ``standard_gamma_grad_one``/``dirichlet_grad_one``
(Distributions.h) compute them element by element, here one branch at a time over numpy arrays.

``standard_gamma_grad_one<scalar_t, double>`` works in double throughout. ``dirichlet_grad_one``
mixes: its Taylor branches (``_beta_grad_*_small``) and ``digamma_one<scalar_t, double>`` run in
``scalar_t``, so for float32 those operations are numpy float32 operations (each rounded as C's
float operation is) calling glibc's ``logf``/``powf``/``tanf``, while the saddle-point and
rational branches run in double. C's double literals next to a float operand are written as
``np.float64`` (a bare Python float would keep numpy in float32). glibc's double functions are
called per element (csrc/random/clibm.py): numpy's own log/exp/pow differ in the last bit.
"""

from __future__ import annotations

import math

import numpy as np

from ..ops.kernel_registry import kernel
from ..random.clibm import cexp, clog, cpow, each, logf, powf, tanf
from .random_rejection import check_same_dtype, dispatch_floating, in_order, iteration_shape
from .support.common import wrap

F64 = np.float64
_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)
_1E17F = float(np.float32(1.0e17))
_0_8F, _0_9F, _1_1F = (float(np.float32(v)) for v in (0.8, 0.9, 1.1))


def _log(x: np.ndarray) -> np.ndarray:
    """std::log of a scalar_t array: glibc's logf for float32, log for float64."""
    if x.dtype == np.float32:
        return each(logf, x, dtype=np.float32)
    return each(clog, x)


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype == np.float32:
        return each(powf, x, y, dtype=np.float32)
    return each(cpow, x, y)


def _polevl(x: np.ndarray, coefs) -> np.ndarray:
    # each step rounded twice: Distributions.cpp is built without FMA (special_common.polevl
    # fuses, as the vectorised special kernels' build does)
    result = np.zeros_like(x)
    for c in coefs:
        result = result * x + c
    return result


def digamma_one(x: np.ndarray) -> np.ndarray:
    """``digamma_one<scalar_t, double>`` with scalar_t = ``x.dtype``: the operations on ``x`` in
    scalar_t, the sums in double, the result scalar_t."""
    T = x.dtype.type
    result = np.zeros(x.shape)
    additional = np.zeros(x.shape)
    out = np.empty(x.shape, T)
    integer = x == np.floor(x)
    poles = (x == 0) | ((x < 0) & integer)
    reflect = (x < 0) & ~integer
    if reflect.any():
        pi = T(math.pi)
        xr = x[reflect]
        tan_ = each(tanf, pi * xr, dtype=np.float32) if T is np.float32 else each(math.tan, pi * xr)
        additional[reflect] = -pi / tan_
        x = np.where(reflect, T(1) - x, x)
    x = x.copy()
    while True:
        below = x < 10
        if not below.any():
            break
        result[below] -= T(1) / x[below]
        x[below] = x[below] + T(1)
    ten = x == 10
    out[ten] = result[ten] + _PSI_10 + additional[ten]
    rest = ~ten
    xs = x[rest]
    y = np.zeros(xs.shape)
    small = xs < _1E17F
    z = 1.0 / (xs[small] * xs[small]).astype(F64)
    y[small] = z * _polevl(z, _DIGAMMA_A)
    out[rest] = result[rest] + _log(xs) - (T(0.5) / xs) - y + additional[rest]
    out[poles] = np.inf
    return out


# ------------------------------------------------------------------------------- gamma gradient
_COEF_UV = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343,
             1, 0.32668115, 0.10406089, 0.0014179084),
            (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
             0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
            (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
             0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07))


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """-(d/dalpha cdf(x; alpha)) / pdf(x; alpha), in double (a NaN Taylor result becomes 0)."""
    out = np.empty(x.shape)
    taylor = x < _0_8F
    rice = ~taylor & (alpha > 8.0)
    rational = ~taylor & ~rice
    if taylor.any():
        a, xt = alpha[taylor], x[taylor]
        numer = np.ones(a.shape)
        denom = a.copy()
        series1 = numer / denom
        series2 = numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-xt / i)
            denom = denom + 1
            series1 = series1 + numer / denom
            series2 = series2 + numer / (denom * denom)
        pow_x_alpha = each(cpow, xt, a)
        gamma_pdf = each(cpow, xt, a - 1) * each(cexp, -xt)
        gamma_cdf = pow_x_alpha * series1
        gamma_cdf_alpha = (each(clog, xt) - digamma_one(a)) * gamma_cdf - pow_x_alpha * series2
        result = -gamma_cdf_alpha / gamma_pdf
        out[taylor] = np.where(np.isnan(result), 0.0, result)
    if rice.any():
        a, xr = alpha[rice], x[rice]
        near = (_0_9F * a <= xr) & (xr <= _1_1F * a)
        numer_1 = 1 + 24 * a * (1 + 12 * a)
        numer_2 = 1440 * (a * a) + 6 * xr * (53 - 120 * xr) - 65 * xr * xr / a + a * (107 + 3600 * xr)
        denom = 1244160 * (a * a) * (a * a)
        saddle = numer_1 * numer_2 / denom
        denom = np.sqrt(8 * a)
        term2 = denom / (a - xr)
        term3 = each(cpow, xr - a - a * each(clog, xr / a), np.full(a.shape, -1.5))
        term23 = np.where(xr < a, term2 - term3, term2 + term3)
        term1 = each(clog, xr / a) * term23 - np.sqrt(2 / a) * (a + xr) / ((a - xr) * (a - xr))
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        numer = xr * term1
        out[rice] = np.where(near, saddle, -stirling * numer / denom)
    if rational.any():
        a, xq = alpha[rational], x[rational]
        u = each(clog, xq / a)
        v = each(clog, a)
        coef_v = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_COEF_UV)]
        p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]))
        q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]))
        out[rational] = each(cexp, p / q)
    return out


# --------------------------------------------------------------------------- dirichlet gradient
def _beta_grad_alpha_small(x, alpha, beta):
    """Taylor expansion for x near 0, in scalar_t."""
    T = x.dtype.type
    factor = digamma_one(alpha) - digamma_one(alpha + beta) - _log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + T(1) / alpha)
    for i in range(1, 11):
        ci = T(i)
        numer = numer * ((ci - beta) * x / ci)
        denom = alpha + ci
        series = series + numer / denom * (factor + T(1) / denom)
    result = x * _pow(T(1) - x, -beta) * series
    return np.where(np.isnan(result), T(0), result)


def _beta_grad_beta_small(x, alpha, beta):
    """Taylor expansion (in scalar_t) of the gradient with respect to beta, for x near 0."""
    T = x.dtype.type
    factor = digamma_one(alpha + beta) - digamma_one(beta)
    numer = np.ones_like(x)
    betas = np.ones_like(x)
    dbetas = np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        ci = T(i)
        numer = numer * (-x / ci)
        dbetas = dbetas * (beta - ci) + betas
        betas = betas * (beta - ci)
        series = series + numer / (alpha + ci) * (dbetas + factor * betas)
    result = -_pow(T(1) - x, T(1) - beta) * series
    return np.where(np.isnan(result), T(0), result)


def _beta_grad_alpha_mid(x, alpha, beta):
    """Rice saddle point expansion for large alpha and beta, in double."""
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)  # the singularity at x = mean
    poly = (47 * x * (beta * beta) * (beta * beta) + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
            (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
            8 * (1 - x) * (135 * beta - 11))))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    at_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = (np.sqrt(2 * alpha / beta) * each(cpow, total, np.full(total.shape, 1.5))
                 * axbx * axbx)
    term1 = term1_num / term1_den
    term2 = 0.5 * each(clog, alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4_base = beta * each(clog, beta / (total * (1 - x))) + alpha * each(clog, alpha / (total * x))
    term4 = each(cpow, term4_base, np.full(total.shape, -1.5))
    term1234 = term1 + term2 * (term3 + np.where(x < mean, term4, -term4))
    return np.where(near, at_mean, stirling * prefactor * term1234)


_C = (((((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
         (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
         (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
        ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
         (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
         (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
        ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
         (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
         (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
       (((1, -0.02924021934, -0.04438342661, 0.007285809825),
         (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
         (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
        ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
         (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
         (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
        ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
         (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
         (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06)))))


def _rational(x, alpha, total, T):
    """The rational correction to the analytic approximation, in double; the digammas in
    scalar_t, subtracted in scalar_t."""
    beta = total - alpha
    u = each(clog, x)
    a = each(clog, alpha) - u
    b = each(clog, total) - a
    pow_u = (1.0, u, u * u)
    pow_a = (1.0, a, a * a)
    p = np.zeros(x.shape)
    q = np.zeros(x.shape)
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _C[0][i][j], _C[1][i][j]
            p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    psi = digamma_one(total.astype(T)) - digamma_one(alpha.astype(T))
    return p / q * (x * psi.astype(F64) / beta)


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """-(d/dalpha cdf(x; alpha, beta)) / pdf(x; alpha, beta) / (1 - x), total = alpha + beta,
    for scalar_t arrays; the result in scalar_t."""
    T = x.dtype.type
    out = np.empty(x.shape, T)
    beta = total - alpha
    boundary = total * x * (T(1) - x)
    small_a = (x <= 0.5) & (boundary < 2.5)  # x close to 0
    small_b = ~small_a & (x >= 0.5) & (boundary < 0.75)  # x close to 1
    mid = ~small_a & ~small_b & (alpha > 6) & (beta > 6)
    rational = ~small_a & ~small_b & ~mid
    if small_a.any():
        out[small_a] = _beta_grad_alpha_small(x[small_a], alpha[small_a], beta[small_a])
    if small_b.any():
        out[small_b] = -_beta_grad_beta_small(T(1) - x[small_b], beta[small_b], alpha[small_b])
    wide = [v.astype(F64) for v in (x, alpha, total)]
    if mid.any():
        xm, am, tm = (v[mid] for v in wide)
        out[mid] = _beta_grad_alpha_mid(xm, am, tm - am)
    if rational.any():
        out[rational] = _rational(*(v[rational] for v in wide), T)
    return out


# ------------------------------------------------------------------------------------- kernels
@kernel("_standard_gamma_grad")
def standard_gamma_grad_kernel(self, output):
    check_same_dtype(self, output)
    shape = iteration_shape(self._size, self, output)
    dispatch_floating("_standard_gamma_grad_cpu", self)
    with np.errstate(all="ignore"):
        grad = standard_gamma_grad(in_order(self, shape).astype(F64), in_order(output, shape).astype(F64))
        values = grad.astype(self._dtype._name)
    return wrap(values.reshape(shape), self._dtype)


@kernel("_dirichlet_grad")
def dirichlet_grad_kernel(x, alpha, total):
    check_same_dtype(x, alpha, total)
    shape = iteration_shape(x._size, x, alpha, total)
    dispatch_floating("_dirichlet_grad_cpu", x)
    with np.errstate(all="ignore"):
        values = dirichlet_grad(*(in_order(t, shape) for t in (x, alpha, total)))
    return wrap(values.reshape(shape), x._dtype)
