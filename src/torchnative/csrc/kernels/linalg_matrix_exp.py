"""torch.linalg.matrix_exp: LinearAlgebra.cpp's mexp (Bader, Blanes, Casas 2019: optimized Taylor
polynomials of degree 1, 2, 4, 8, 12, 18, the last with scaling and squaring).

A single matrix takes the cheapest polynomial its 1-norm allows (float32/complex64 with the
single-precision bounds, every other dtype with the double-precision ones); a batch takes
degree 18. float32 and wider run in double precision and are rounded once.

float16 and bfloat16 run in their own precision, every tensor operation rounded as upstream's
is, and with upstream's coefficients as it reads them: for these dtypes mexp is instantiated
with double coefficients, which ``from_blob`` then reads as an array of the 16-bit dtype (the
first bytes of the doubles, reinterpreted). The degree-4 polynomial, for instance, becomes
1.984375 * A^2 * 0 (a zero matrix); larger norms meet NaN bit patterns. Reproducing that, not
the mathematically right exponential, is what agreeing means here.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from .linalg_common import C64, F32, check_floating_or_complex, check_square, out, wide
from .support.common import arr

_THETAS_DOUBLE = (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                  4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00)
_THETAS_FLOAT = (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                 5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00)
_B12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
         0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
         0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
         -0.00675951846863086359))
_B18 = ((0., -1.00365581030144618291e-01, -8.02924648241156932449e-03,
         -8.92138498045729985177e-04, 0.),
        (0., 3.97849749499645077844e-01, 1.36783778460411720168e+00,
         4.98289622525382669416e-01, -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02,
         -1.40086798182036094347e-05))
_SQRT_177 = 0.1330413469565007072504e+2
_X3 = 2.0 / 3.0
_T8 = dict(
    x1=_X3 * ((1.0 + _SQRT_177) / 88.0), x2=_X3 * ((1.0 + _SQRT_177) / 352.0),
    x4=(-271.0 + 29.0 * _SQRT_177) / (315.0 * _X3), x5=(-11.0 + 11.0 * _SQRT_177) / (1260.0 * _X3),
    x6=(-99.0 + 11.0 * _SQRT_177) / (5040.0 * _X3), x7=(89.0 - _SQRT_177) / (5040.0 * _X3),
    y2=(857.0 - 58.0 * _SQRT_177) / 630.0)


class _Wide:
    """Arithmetic of float32 and wider: double precision, nothing rounded on the way."""

    def r(self, x):
        return x

    def coef(self, values):
        return np.asarray(values, np.float64).reshape(np.shape(values))

    def mm(self, x, y):
        return x @ y

    def comb(self, mats, coef):
        acc = np.zeros_like(mats[0])
        for m, c in zip(mats, coef):
            acc = acc + c * m
        return acc


class _Low(_Wide):
    """float16/bfloat16: each operation computed in float32 (upstream's opmath, and its gemm's
    accumulator) and rounded to the dtype; coefficient blobs read as the 16-bit dtype."""

    def __init__(self, npdt):
        self.npdt = npdt

    def r(self, x):
        with np.errstate(over="ignore"):
            return np.asarray(x, np.float32).astype(self.npdt).astype(np.float32)

    def coef(self, values):
        shape = np.shape(values)
        raw = np.frombuffer(np.asarray(values, np.float64).tobytes(), np.uint16)
        return raw[:int(np.prod(shape))].view(self.npdt).astype(np.float32).reshape(shape)

    def mm(self, x, y):
        return self.r(x @ y)

    def comb(self, mats, coef):
        # _compute_linear_combination: out += in * coeff, both steps in the dtype
        acc = np.zeros_like(mats[0])
        for m, c in zip(mats, coef):
            acc = self.r(acc + self.r(m * c))
        return acc


def _powers(k, a, count):
    """[I, A, A^2, A^3, A^6][:count] (_fill_matrix_powers)."""
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    mats = [eye, a]
    if count > 2:
        mats.append(k.mm(a, a))
    if count > 3:
        mats.append(k.mm(a, mats[2]))
    if count > 4:
        mats.append(k.mm(mats[3], mats[3]))
    return mats[:count]


def _t1(k, a):
    i, a1 = _powers(k, a, 2)
    return k.r(i + a1)


def _t2(k, a):
    i, a1, a2 = _powers(k, a, 3)
    return k.r(i + a1 + k.r(a2 / 2.0))


def _t4(k, a):
    i, a1, a2 = _powers(k, a, 3)
    a4 = k.mm(a2, k.comb([i, a1, a2], k.coef((1 / 2.0, 1 / 6.0, 1 / 24.0))))
    return k.comb([i, a1, a2, a4], k.coef((1.0, 1.0, 0.0, 1.0)))


def _t8(k, a):
    c = _T8
    i, a1, a2 = _powers(k, a, 3)
    a4 = k.mm(a2, k.comb([a1, a2], k.coef((c["x1"], c["x2"]))))
    a8 = k.mm(k.comb([a2, a4], k.coef((_X3, 1.0))),
              k.comb([i, a1, a2, a4], k.coef((c["x4"], c["x5"], c["x6"], c["x7"]))))
    return k.comb([i, a1, a2, a4, a8], k.coef((1.0, 1.0, c["y2"], 0.0, 1.0)))


def _t12(k, a):
    mats = _powers(k, a, 4)
    b = [k.comb(mats, row) for row in k.coef(_B12)]
    b[2] = k.r(b[2] + k.mm(b[3], b[3]))
    return k.r(b[0] + k.mm(k.r(b[1] + b[2]), b[2]))


def _t18(k, a):
    mats = _powers(k, a, 5)
    b = [k.comb(mats, row) for row in k.coef(_B18)]
    b[3] = k.r(b[3] + k.mm(b[0], b[4]))
    return k.r(b[1] + k.mm(k.r(b[2] + b[3]), b[3]))


def _t18_scaled(k, a, norm, theta):
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.maximum(np.ceil(k.r(np.log2(k.r(norm / theta)))), 0)
    # a NaN or infinite norm scales the matrix to NaN (pow(2, -NaN), inf * 0) and squares nothing
    r = _t18(k, k.r(a * np.power(2.0, -s)[:, None, None]))
    steps = np.where(np.isfinite(s), s, 0)
    for i in range(int(steps.max()) if steps.size else 0):
        r = np.where((steps > i)[:, None, None], k.mm(r, r), r)
    return r


def _expm(k, flat, thetas):
    norm = k.r(np.abs(flat).sum(-2)).max(-1)
    if flat.shape[0] > 1:
        return _t18_scaled(k, flat, norm, thetas[5])
    res = np.full_like(flat, np.nan)  # a NaN norm falls in no interval
    lower = -1.0
    for theta, fn in zip(thetas[:5], (_t1, _t2, _t4, _t8, _t12)):
        if lower < norm[0] <= theta:
            res = fn(k, flat)
        lower = theta
    if norm[0] >= thetas[4]:
        res = _t18_scaled(k, flat, norm, thetas[5])
    return res


@kernel("linalg_matrix_exp")
def linalg_matrix_exp(self):
    fn = "linalg.matrix_exp"
    check_square(self, fn)
    check_floating_or_complex(self, fn, allow_low=True)
    n = self.shape[-1]
    if n == 0:
        return call("clone", self)
    if n == 1:
        return call("exp", self)
    dt = self.dtype
    if dt in (D.BY_NAME["float16"], D.BY_NAME["bfloat16"]):
        k, flat, thetas = _Low(D.numpy_dtype(dt)), arr(self).astype(np.float32), _THETAS_DOUBLE
    else:
        k, flat = _Wide(), wide(self)
        thetas = _THETAS_FLOAT if dt in (F32, C64) else _THETAS_DOUBLE
    flat = np.ascontiguousarray(flat).reshape(-1, n, n)
    with np.errstate(all="ignore"):
        return out(_expm(k, flat, thetas).reshape(tuple(self.shape)), dt)
