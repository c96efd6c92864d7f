"""Unary pointwise ops: the float functions (exp, log, trig, sqrt, sigmoid, erf...), rounding
(floor/ceil/trunc/round/frac), signs (neg, abs, sign, sgn, signbit), bitwise/logical not, and
the float-class predicates (isnan, isinf, isposinf, isneginf).

Integer and bool inputs of the float functions compute in the default dtype, as upstream's
``build_borrowing_unary_float_op``. Transcendental functions on float32 are evaluated in float64
and rounded once (``pointwise_math.exact``): that is what upstream's SLEEF/libm results are, to
the last bit, in nearly every element; numpy's own float32 loops are a few ulp off.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .support.common import arr, opmath
from ..core.cast import cast_array, nan_stamp
from ..core.construct import from_result
from .pointwise_base import (ALL_H, ALL_HC, BOOL, C32, COMPLEX, F8, F32, F64, FLOAT_H, FLOAT_HC,
                             INTEGRAL,
                             NATIVE, REDUCED, check, checked, compute_dtype, finish,
                             operand, quiet)
from .pointwise_math import erf, erf_vec32, erfc, erfinv, exact
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .simd_lanes import (AVX2_BYTES, SCALAR, VML, build_bytes, loop_nans, sign_bit_nans,
                         tensor_lanes)

_WIDE = build_bytes(True)   # the kernels upstream also builds for AVX512


def float_dtype(self) -> D.dtype:
    dt = self._dtype
    return dt if dt.is_floating_point or dt.is_complex else D.get_default_dtype()


def apply1(fn, self, dt: D.dtype, out_dt: D.dtype | None = None):
    x = self._np
    if dt in NATIVE and self._dtype is dt and x is not None:
        # the common case: a dense tensor already in the compute dtype (float exceptions: the
        # door runs kernels in the quiet state)
        r = fn(x)
        if type(r) is np.ndarray and r.flags.c_contiguous and x.flags.c_contiguous and \
                r.dtype == x.dtype and out_dt is None:
            return from_result(r, dt)
        return finish(r, out_dt or dt, self)
    x = operand(self, dt, compute_dtype(dt))
    r = fn(x)
    return finish(r, out_dt or dt, self)


def _erf(self):
    """float32/float64 go through MKL's accurate erf upstream; float16/bfloat16 through
    Vectorized<float>::erf, the polynomial approximation, on every element."""
    def fn(x):
        return erf(x) if self._dtype in (F32, F64) or x.dtype != np.float32 else erf_vec32(x)

    return fn


def _float_op(names, kname, types, fn, loop=VML):
    """Register a unary float op: promote integers to the default dtype, check the dispatch
    group, compute ``fn`` in the opmath dtype. ``loop``: the vector width of upstream's loop
    (simd_lanes.loop_nans), which decides a float16/bfloat16 NaN's bits."""
    def op(self):
        dt = float_dtype(self)
        check(kname, dt, types)
        since = nan_stamp() if dt in REDUCED else None
        return reduced_nans(apply1(fn or _erf(self), self, dt), self, loop, since)

    op.__name__ = names[0]
    kernel(*names)(op)
    return op


def reduced_nans(out, self, loop, since):
    if since is not None and since != nan_stamp():   # (None: not float16/bfloat16)
        loop_nans(out, (self,), loop, since)
    return out


def _e(f):
    """f evaluated through ``exact`` (correctly rounded float32/complex64 results)."""
    return lambda x: exact(f, x)


def _rsqrt(x):
    return 1 / np.sqrt(x)


@kernel("rsqrt")
def rsqrt(self):
    dt = float_dtype(self)
    check("rsqrt_cpu", dt, FLOAT_HC)
    if dt not in REDUCED:
        return apply1(_rsqrt, self, dt)
    # float16/bfloat16: the SIMD loop (float vectors) rounds once; its scalar tail computes
    # 1 / std::sqrt(a) in the reduced type, rounding the square root first
    # Vectorized<Half/BFloat16> of AVX2's build; DEFAULT's generic one computes as the tail
    run = None if cpu_capability.CAPABILITY == cpu_capability.DEFAULT else \
        tensor_lanes((self,), 2, AVX2_BYTES)
    mask = None if run is None else run.mask
    npdt = D.numpy_dtype(dt)

    def fn(x):
        tail = 1 / np.sqrt(x).astype(npdt).astype(np.float32)
        return tail if mask is None else np.where(mask, 1 / np.sqrt(x), tail)

    since = nan_stamp() if dt in REDUCED else None
    return reduced_nans(apply1(fn, self, dt), self, AVX2_BYTES, since)


def _sigmoid(x):
    # upstream's loop: reciprocal(1 + exp(-x)), each step rounded in the compute dtype
    d = 1 + exact(np.exp, -x)
    return complex_reciprocal(d) if d.dtype.kind == "c" else 1 / d


def complex_reciprocal(z):
    """Vectorized<complex>::reciprocal: conj(z) / (re^2 + im^2), all in z's precision."""
    re, im = z.real, z.imag
    n = re * re + im * im
    out = np.empty_like(z)
    with quiet():
        out.real = re / n
        out.imag = -im / n
    return out


def complex_log1p(z):
    """c10's log1p for complex: 0.5 * log1p(x (2 + x) + y^2) near 0, log |1 + z| elsewhere,
    with the angle atan2(y, 1 + x) -- numpy's log(1 + z) loses the small real part."""
    w = z.astype(np.complex128)
    x, y = w.real, w.imag
    with quiet():
        theta = np.arctan2(y, x + 1)
        small = np.abs(w) < 0.5
        r = x * (2 + x) + y * y
        near = np.where(r == 0, x, 0.5 * np.log1p(r))
        far = np.log(np.hypot(x + 1, y))
    out = np.empty(w.shape, np.complex128)
    out.real = np.where(small, near, far)
    out.imag = theta
    return out.astype(z.dtype)


def _log1p(x):
    return complex_log1p(x) if x.dtype.kind == "c" else exact(np.log1p, x)


def _exp2(x):
    if x.dtype.kind == "c":  # upstream: exp(ln 2 * z), ln 2 in the real precision
        return exact(np.exp, x * x.real.dtype.type(np.log(2.0)))
    return exact(np.exp2, x)


def _sinc(x):
    one = x.dtype.type(1)
    p = x * x.dtype.type(np.pi)
    with quiet():
        r = exact(np.sin, p) / p
    return np.where(x == 0, one, r)


def _reciprocal(x):
    return 1 / x


for _names, _k, _types, _fn, _loop in (
    (("exp",), "exp_vml_cpu", FLOAT_HC, _e(np.exp), VML),
    (("exp2",), "exp2_vml_cpu", FLOAT_HC, _exp2, _WIDE),
    (("expm1",), "expm1_vml_cpu", FLOAT_HC, _e(np.expm1), VML),
    (("log",), "log_vml_cpu", FLOAT_HC, _e(np.log), VML),
    (("log2",), "log2_vml_cpu", FLOAT_HC, _e(np.log2), VML),
    (("log10",), "log10_vml_cpu", FLOAT_HC, _e(np.log10), VML),
    (("log1p",), "log1p_vml_cpu", FLOAT_HC, _log1p, VML),
    (("sin",), "sin_vml_cpu", FLOAT_HC, _e(np.sin), VML),
    (("cos",), "cos_vml_cpu", FLOAT_HC, _e(np.cos), VML),
    (("tan",), "tan_vml_cpu", FLOAT_HC, _e(np.tan), VML),
    (("asin",), "asin_vml_cpu", FLOAT_HC, _e(np.arcsin), VML),
    (("acos",), "acos_vml_cpu", FLOAT_HC, _e(np.arccos), VML),
    (("atan",), "atan_vml_cpu", FLOAT_HC, _e(np.arctan), VML),
    (("sinh",), "sinh_vml_cpu", FLOAT_HC, _e(np.sinh), _WIDE),
    (("cosh",), "cosh_vml_cpu", FLOAT_HC, _e(np.cosh), _WIDE),
    (("tanh",), "tanh_vml_cpu", FLOAT_HC, _e(np.tanh), VML),
    (("asinh",), "asinh_cpu", FLOAT_HC, _e(np.arcsinh), SCALAR),
    (("acosh",), "acosh_cpu", FLOAT_HC, _e(np.arccosh), SCALAR),
    (("atanh",), "atanh_cpu", FLOAT_HC, _e(np.arctanh), _WIDE),
    (("sqrt",), "sqrt_vml_cpu", FLOAT_HC, np.sqrt, VML),
    (("reciprocal",), "reciprocal_cpu", FLOAT_HC, _reciprocal, _WIDE),
    (("sigmoid",), "sigmoid_cpu", FLOAT_HC, _sigmoid, _WIDE),
    (("sinc",), "sinc_cpu", FLOAT_HC, _sinc, SCALAR),
    (("erf",), "erf_vml_cpu", FLOAT_H, None, VML),
    (("erfc",), "erfc_vml_cpu", FLOAT_H, erfc, VML),
    (("erfinv",), "erfinv_vml_cpu", FLOAT_H, erfinv, VML),
):
    _float_op(_names, _k, _types, _fn, _loop)


@kernel("logit")
def logit(self, eps=None):
    dt = float_dtype(self)
    check("logit_cpu", dt, FLOAT_H)

    def fn(x):
        if eps is not None:
            lo = checked(eps, dt)
            hi = x.dtype.type(1) - lo
            if lo >= 0:
                x = np.where(x < lo, lo, np.where(x > hi, hi, x))
        return np.where(x == 1, x.dtype.type(np.inf), exact(np.log, x / (1 - x)))

    return apply1(fn, self, dt)


# ---- same-dtype ops -----------------------------------------------------------------------------
def _same(self, kname, types, fn, out_dt=None):
    dt = self._dtype
    check(kname, dt, types)
    return apply1(fn, self, dt, out_dt)


@kernel("neg")
def neg(self):
    if self._dtype is BOOL:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    if self._dtype is C32:  # no vector path for ComplexHalf: the scalar -z flips both signs
        return _same(self, "neg_cpu", ALL_HC, np.negative)
    if self._dtype in COMPLEX:  # upstream's complex vector negation is 0 - z: -(0+0j) is +0
        return _same(self, "neg_cpu", ALL_HC, lambda z: np.subtract(z.dtype.type(0), z))
    return _signed(self, "neg_cpu", ALL_HC, np.negative, True)


@kernel("abs")
def abs_(self):
    dt = self._dtype
    if dt in COMPLEX:
        return apply1(_e(np.abs), self, dt, dt.to_real())
    return _signed(self, "abs_cpu", ALL_H | F8, np.abs, False)


def _signed(self, kname, types, fn, flip):
    since = nan_stamp()
    out = _same(self, kname, types, fn)
    if out._dtype in REDUCED:
        sign_bit_nans(out, self, flip, since)
    return out


@kernel("abs_")
def abs_inplace(self):
    """upstream's abs_ refuses complex before anything runs (the result would be real)."""
    if self._dtype in COMPLEX:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    from ..dispatch.structured import inplace_wrapper

    return inplace_wrapper(abs_, "abs_")(self)


def _sign(x):
    t = x.dtype.type
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype) if x.dtype.kind != "u" else \
        (x > 0).astype(x.dtype) + t(0)


@kernel("sign")
def sign(self):
    dt = self._dtype
    if dt in COMPLEX:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    if dt is BOOL:
        return apply1(np.copy, self, dt)
    return _same(self, "sign_cpu", ALL_H, _sign)


def _sgn_complex(z):
    # z / |z| with the real |z| dividing each part (c10's complex / scalar), 0 for 0
    a = exact(np.abs, z)
    r = np.empty_like(z)
    with quiet():
        r.real = z.real / a
        r.imag = z.imag / a
    return np.where(a == 0, z.dtype.type(0), r)


@kernel("sgn")
def sgn(self):
    if self._dtype in COMPLEX:
        return apply1(_sgn_complex, self, self._dtype)
    return sign(self)


def _rounding(name, kname, fn):
    def op(self):
        dt = self._dtype
        if dt in INTEGRAL:  # result.copy_(self)
            return apply1(np.copy, self, dt)
        if dt in COMPLEX and name != "round":
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        check(kname, dt, FLOAT_H)
        return apply1(fn, self, dt)

    op.__name__ = name
    return kernel(name)(op)


floor = _rounding("floor", "floor_vml_cpu", np.floor)
ceil = _rounding("ceil", "ceil_vml_cpu", np.ceil)
trunc = _rounding("trunc", "trunc_vml_cpu", np.trunc)
round_ = _rounding("round", "round_vml_cpu", np.rint)


@kernel("round.decimals")
def round_decimals(self, *, decimals=0):
    dt = self._dtype
    if dt in COMPLEX:
        raise RuntimeError("round is not supported for complex inputs")
    check("round_cpu", dt, FLOAT_H)
    if decimals == 0:
        return apply1(np.rint, self, dt)
    p = opmath(dt).type(10.0 ** abs(decimals))  # static_cast<opmath_t>(std::pow(10, decimals))
    if decimals < 0:
        return apply1(lambda x: np.rint(x / p) * p, self, dt)
    return apply1(lambda x: np.rint(x * p) / p, self, dt)


@kernel("frac")
def frac(self):
    return _same(self, "frac_cpu", FLOAT_H, lambda x: x - np.trunc(x))


@kernel("bitwise_not")
def bitwise_not(self):
    if self._dtype is BOOL:
        return apply1(np.logical_not, self, BOOL)
    return _same(self, "bitwise_not_cpu", INTEGRAL, np.invert)


@kernel("logical_not")
def logical_not(self):
    return finish(arr(self) == 0, BOOL, self)  # NaN is true, as in C++


@kernel("signbit")
def signbit(self):
    dt = self._dtype
    if dt in COMPLEX:
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if dt is BOOL or dt.is_signed is False:
        return _all_false(self)
    check("signbit_cpu", dt, ALL_H)
    return apply1(np.signbit if dt.is_floating_point else (lambda x: x < 0), self, dt, BOOL)


# ---- predicates ---------------------------------------------------------------------------------
def _all_false(self):
    """zeros_like(self, kBool), laid out like self."""
    return finish(np.zeros(self._size, dtype=bool), BOOL, self)


@kernel("isnan")
def isnan(self):
    dt = self._dtype
    if not (dt.is_floating_point or dt.is_complex):
        return _all_false(self)
    return apply1(np.isnan, self, dt, BOOL)


@kernel("isinf")
def isinf(self):
    dt = self._dtype
    if not (dt.is_floating_point or dt.is_complex):
        return _all_false(self)
    return apply1(np.isinf, self, dt, BOOL)


def _signed_inf(name, positive):
    def op(self):
        dt = self._dtype
        if dt in COMPLEX:
            raise RuntimeError(f"{name} does not support complex inputs.")
        if not dt.is_floating_point:
            return _all_false(self)
        inf = np.inf if positive else -np.inf
        return apply1(lambda x: x == inf, self, dt, BOOL)

    op.__name__ = name
    return kernel(name)(op)


isposinf = _signed_inf("isposinf", True)
isneginf = _signed_inf("isneginf", False)


@kernel("nan_to_num")
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    dt = self._dtype
    if not (dt.is_floating_point or dt.is_complex):  # result.copy_(self)
        return apply1(np.copy, self, dt)
    real = dt.to_real() if dt in COMPLEX else dt
    check("nan_to_num", real, FLOAT_H)
    big = _max_of(real)

    def repl(v, default):  # static_cast<scalar_t>(double)
        if v is None:
            return default
        return float(cast_array(np.asarray(float(v)), F64, real).astype(np.float64))

    vals = (repl(nan, 0.0), repl(posinf, big), repl(neginf, -big))

    def fix(x):
        return np.where(np.isnan(x), vals[0], np.where(x == np.inf, vals[1],
                                                        np.where(x == -np.inf, vals[2], x)))

    def fn(x):
        if dt in COMPLEX:
            return (fix(x.real) + 1j * fix(x.imag)).astype(x.dtype)
        return fix(x).astype(x.dtype)

    return apply1(fn, self, dt)


def _max_of(dt) -> float:
    return {"float16": 65504.0, "bfloat16": 3.3895313892515355e+38,
            "float32": float(np.finfo(np.float32).max),
            "float64": float(np.finfo(np.float64).max)}[dt._name]

