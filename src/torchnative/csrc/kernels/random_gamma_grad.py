"""``_standard_gamma_grad`` and ``_dirichlet_grad``: the reparameterised gradients of gamma and
Dirichlet (Beta) samples, as upstream's ``standard_gamma_grad_one``/``dirichlet_grad_one``
(Distributions.h) compute them element by element.

``standard_gamma_grad_one<scalar_t, double>`` works in double throughout. ``dirichlet_grad_one``
mixes: its Taylor branches (``_beta_grad_*_small``) and the ``digamma_one<scalar_t, double>`` they
call run in ``scalar_t``, so for float32 those operations round to float and call glibc's
``logf``/``powf``/``tanf`` (csrc/random/clibm.py), while the saddle-point and rational branches
run in double.
"""

from __future__ import annotations

import math

import numpy as np

from ..ops.kernel_registry import kernel
from ..random.clibm import INF, cdiv, cexp, cfloor, clog, cpow, csqrt, f32, logf, powf, tanf
from .random_rejection import check_same_dtype, dispatch_floating, in_order, iteration_shape
from .support.common import wrap

_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)
_1E17F = f32(1.0e17)
_0_8F, _0_9F, _1_1F = f32(0.8), f32(0.9), f32(1.1)
_PI_F = f32(math.pi)


def _polevl(x: float, coefs) -> float:
    result = 0.0
    for c in coefs:
        result = result * x + c
    return result


def digamma_one(x: float, single: bool) -> float:
    """``digamma_one<scalar_t, double>``: ``x`` and the operations on it in scalar_t, the sum in
    double, the result cast to scalar_t."""
    F = f32 if single else float
    log_, tan_, pi = (logf, tanf, _PI_F) if single else (clog, math.tan, math.pi)
    if x == 0:
        return INF
    additional = 0.0
    x_is_integer = x == cfloor(x)
    if x < 0:
        if x_is_integer:
            return INF
        additional = F(cdiv(-pi, tan_(F(pi * x))))
        x = F(1 - x)
    result = 0.0
    while x < 10:
        result -= F(1 / x)
        x = F(x + 1)
    if x == 10:
        return F(result + _PSI_10 + additional)
    y = 0.0
    if x < _1E17F:
        z = 1.0 / F(x * x)
        y = z * _polevl(z, _DIGAMMA_A)
    return F(result + log_(x) - F(0.5 / x) - y + additional)


# ------------------------------------------------------------------------------- gamma gradient
_COEF_UV = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343,
             1, 0.32668115, 0.10406089, 0.0014179084),
            (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
             0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
            (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
             0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07))


def standard_gamma_grad_one(alpha: float, x: float) -> float:
    """-(d/dalpha cdf(x; alpha)) / pdf(x; alpha) in double (a NaN Taylor result becomes 0)."""
    if x < _0_8F:  # Taylor series for small x
        numer = 1.0
        denom = alpha
        series1 = cdiv(numer, denom)
        series2 = cdiv(numer, denom * denom)
        for i in range(1, 6):
            numer *= -x / i
            denom += 1
            series1 += cdiv(numer, denom)
            series2 += cdiv(numer, denom * denom)
        pow_x_alpha = cpow(x, alpha)
        gamma_pdf = cpow(x, alpha - 1) * cexp(-x)
        gamma_cdf = pow_x_alpha * series1
        gamma_cdf_alpha = (clog(x) - digamma_one(alpha, False)) * gamma_cdf - pow_x_alpha * series2
        result = cdiv(-gamma_cdf_alpha, gamma_pdf)
        return 0.0 if result != result else result
    if alpha > 8.0:  # Rice saddle point expansion for large alpha
        if _0_9F * alpha <= x <= _1_1F * alpha:
            numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
            numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
                       + alpha * (107 + 3600 * x))
            denom = 1244160 * (alpha * alpha) * (alpha * alpha)
            return numer_1 * numer_2 / denom
        denom = math.sqrt(8 * alpha)
        term2 = cdiv(denom, alpha - x)
        term3 = cpow(x - alpha - alpha * clog(x / alpha), -1.5)
        term23 = term2 - term3 if x < alpha else term2 + term3
        term1 = (clog(x / alpha) * term23
                 - cdiv(math.sqrt(2 / alpha) * (alpha + x), (alpha - x) * (alpha - x)))
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        numer = x * term1
        return -stirling * numer / denom
    # bivariate rational approximation
    u = clog(cdiv(x, alpha))
    v = clog(alpha)
    coef_v = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_COEF_UV)]
    p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]))
    q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]))
    return cexp(cdiv(p, q))


# --------------------------------------------------------------------------- dirichlet gradient
def _beta_grad_alpha_small(x: float, alpha: float, beta: float, single: bool) -> float:
    """Taylor expansion for x near 0, in scalar_t."""
    F = f32 if single else float
    log_, pow_ = (logf, powf) if single else (clog, cpow)
    factor = F(F(digamma_one(alpha, single) - digamma_one(F(alpha + beta), single)) - log_(x))
    numer = 1.0
    series = F(F(cdiv(numer, alpha)) * F(factor + F(cdiv(1, alpha))))
    for i in range(1, 11):
        numer = F(numer * F(cdiv(F(F(i - beta) * x), i)))
        denom = F(alpha + i)
        series = F(series + F(F(cdiv(numer, denom)) * F(factor + F(cdiv(1, denom)))))
    result = F(F(x * pow_(F(1 - x), F(-beta))) * series)
    return 0.0 if result != result else result


def _beta_grad_beta_small(x: float, alpha: float, beta: float, single: bool) -> float:
    """Taylor expansion (in scalar_t) of the gradient with respect to beta, for x near 0."""
    F = f32 if single else float
    pow_ = powf if single else cpow
    factor = F(digamma_one(F(alpha + beta), single) - digamma_one(beta, single))
    numer, betas, dbetas = 1.0, 1.0, 0.0
    series = F(cdiv(factor, alpha))
    for i in range(1, 9):
        numer = F(numer * F(cdiv(-x, i)))
        dbetas = F(F(dbetas * F(beta - i)) + betas)
        betas = F(betas * F(beta - i))
        series = F(series + F(F(cdiv(numer, F(alpha + i))) * F(dbetas + F(factor * betas))))
    result = F(-pow_(F(1 - x), F(1 - beta)) * series)
    return 0.0 if result != result else result


def _beta_grad_alpha_mid(x: float, alpha: float, beta: float) -> float:
    """Rice saddle point expansion for large alpha and beta, in double."""
    total = alpha + beta
    mean = alpha / total
    std = csqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:  # avoid the singularity at x = mean
        poly = (47 * x * (beta * beta) * (beta * beta) + alpha * (
                (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                8 * (1 - x) * (135 * beta - 11))))))
        prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return cdiv(prefactor_num, 1 - x) * poly / prefactor_den
    prefactor = cdiv(-x, csqrt(2 * alpha * beta / total))
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = csqrt(2 * alpha / beta) * cpow(total, 1.5) * axbx * axbx
    term1 = cdiv(term1_num, term1_den)
    term2 = 0.5 * clog(cdiv(alpha, total * x))
    term3 = cdiv(csqrt(8 * alpha * beta / total), beta * x + alpha * (x - 1))
    term4_base = (beta * clog(cdiv(beta, total * (1 - x)))
                  + alpha * clog(cdiv(alpha, total * x)))
    term4 = cpow(term4_base, -1.5)
    term1234 = term1 + term2 * (term3 + (term4 if x < mean else -term4))
    return stirling * prefactor * term1234


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


def dirichlet_grad_one(x: float, alpha: float, total: float, single: bool) -> float:
    """-(d/dalpha cdf(x; alpha, beta)) / pdf(x; alpha, beta) / (1 - x), total = alpha + beta."""
    F = f32 if single else float
    beta = F(total - alpha)
    beta_ = total - alpha
    boundary = F(F(total * x) * F(1 - x))
    if x <= 0.5 and boundary < 2.5:  # x close to 0
        return _beta_grad_alpha_small(x, alpha, beta, single)
    if x >= 0.5 and boundary < 0.75:  # x close to 1
        return F(-_beta_grad_beta_small(F(1 - x), beta, alpha, single))
    if alpha > 6 and beta > 6:
        return F(_beta_grad_alpha_mid(x, alpha, beta_))
    u = clog(x)
    a = clog(alpha) - u
    b = clog(total) - a
    pow_u = (1.0, u, u * u)
    pow_a = (1.0, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _C[0][i][j], _C[1][i][j]
            p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    approx = cdiv(x * F(digamma_one(total, single) - digamma_one(alpha, single)), beta_)  # scalar_t - scalar_t
    return F(cdiv(p, q) * approx)


# ------------------------------------------------------------------------------------- kernels
@kernel("_standard_gamma_grad")
def standard_gamma_grad(self, output):
    check_same_dtype(self, output)
    shape = iteration_shape(self._size, self, output)
    dispatch_floating("_standard_gamma_grad_cpu", self)
    single = self._dtype._name == "float32"
    F = f32 if single else float
    values = [F(standard_gamma_grad_one(a, x))
              for a, x in zip(in_order(self, shape).tolist(), in_order(output, shape).tolist())]
    return wrap(np.array(values, self._dtype._name).reshape(shape), self._dtype)


@kernel("_dirichlet_grad")
def dirichlet_grad(x, alpha, total):
    check_same_dtype(x, alpha, total)
    shape = iteration_shape(x._size, x, alpha, total)
    dispatch_floating("_dirichlet_grad_cpu", x)
    single = x._dtype._name == "float32"
    values = [dirichlet_grad_one(xv, av, tv, single)
              for xv, av, tv in zip(*(in_order(t, shape).tolist() for t in (x, alpha, total)))]
    return wrap(np.array(values, x._dtype._name).reshape(shape), x._dtype)
