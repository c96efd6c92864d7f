"""Binary arithmetic: add, sub, mul, div (with rounding modes), remainder, fmod, floor_divide, pow,
atan2, hypot, copysign, xlogy, logaddexp, minimum/maximum/fmin/fmax, heaviside, nextafter.

Semantics are upstream's CPU kernels (BinaryOpsKernel.cpp, PowKernel.cpp): integer division by
zero raises "ZeroDivisionError"; integers wrap; C's fmod and Python's floor/remainder conventions
are written out rather than left to numpy (numpy's float remainder gives +0.0 where upstream
keeps fmod's sign, and numpy's int division by zero returns 0 with a warning). float16/bfloat16
compute in float32 and round once; a single-element second operand of mul/div is read in float32
straight from its own dtype (upstream's ``original_scalar_value``).
"""

from __future__ import annotations

import numpy as np

from .support import complex_arith
from ..core import dtypes as D
from ..core.tensor import TensorBase
from .pointwise_base import (ALL_H, ALL_HB, ALL_HBC, ALL_HC, BOOL, COMPLEX, F8, F64, FLOAT_H,
                             FLOAT_HC,
                             I64, INTEGRAL, REDUCED, broadcast_shape, check, checked,
                             compute_dtype, finish, is_scalar_operand, operand,
                             original_f32, py_dtype, quiet, result_type, shapes_of)
from .pointwise_math import exact, fma
from ..ops.kernel_registry import kernel
from ..core.cast import nan_stamp
from .simd_lanes import AVX2_BYTES, loop_nans
from .pointwise_base import NATIVE as _NATIVE, scalar_value
from ..core.construct import from_result


def dtype2(a, b) -> D.dtype:
    """result_type of two operands, with the hot cases first: two tensors of one dtype, and a
    tensor with a Python bool/int/float (or its wrapped-number tensor), which is weak: it keeps
    the tensor's dtype unless it raises the category (int tensor with a float -> default dtype;
    bool tensor with an int -> int64)."""
    if isinstance(a, TensorBase) and not a._wrapped:
        if isinstance(b, TensorBase):
            if b._dtype is a._dtype:
                return a._dtype
            if b._wrapped:
                kind = b._dtype
                if kind is F64:
                    return _with_float(a._dtype)
                if kind is I64:
                    return I64 if a._dtype is BOOL else a._dtype
                if kind is BOOL:
                    return a._dtype
        elif type(b) is float:
            return _with_float(a._dtype)
        elif type(b) is int:
            return I64 if a._dtype is BOOL else a._dtype
        elif type(b) is bool:
            return a._dtype
    return result_type(a, b)


def _with_float(dt: D.dtype) -> D.dtype:
    return dt if dt.is_floating_point or dt.is_complex else D.get_default_dtype()


def _float_dtype(dt: D.dtype) -> D.dtype:
    """promote_integer_inputs_to_float: integral (and bool) results become the default dtype."""
    return D.get_default_dtype() if not (dt.is_floating_point or dt.is_complex) else dt


def apply2(fn, a, b, dt: D.dtype, out_dt: D.dtype | None = None, reduced_scalar: bool = False):
    """``fn(x, y)`` over a and b cast to ``dt`` (computed in opmath(dt)), as a tensor of
    ``out_dt`` (default ``dt``)."""
    if dt in _NATIVE and isinstance(a, TensorBase) and a._dtype is dt and not a._wrapped:
        # the common cases: a dense tensor already in the compute dtype with another such
        # tensor, or with a Python number (converted as the wrapped-number path converts it)
        x = a._np
        if x is None:
            y = None
        elif isinstance(b, TensorBase) and b._dtype is dt and not b._wrapped:
            y = b._np  # _native_operand's first case, without its frame
        else:
            y = _native_operand(b, dt)
        if y is not None:   # (float exceptions: the door runs kernels in the quiet state)
            try:
                r = fn(x, y)
            except ValueError:
                broadcast_shape(*shapes_of(a, b))
                raise
            if type(r) is np.ndarray and r.flags.c_contiguous and x.flags.c_contiguous and \
                    (type(y) is not np.ndarray or y.flags.c_contiguous) and \
                    r.dtype == x.dtype and out_dt is None:
                return from_result(r, dt)
            return finish(r, out_dt or dt, a, b)
    cdt = compute_dtype(dt)
    x = operand(a, dt, cdt)
    if reduced_scalar and dt in REDUCED and is_scalar_operand(b):
        y = original_f32(b)
    else:
        y = operand(b, dt, cdt)
    try:
        r = fn(x, y)
    except ValueError:
        broadcast_shape(*shapes_of(a, b))
        raise
    return finish(r, out_dt or dt, a, b)


def _native_operand(b, dt: D.dtype):
    """b as apply2's fast path reads it, or None when the general path must: a dense tensor of
    ``dt`` itself, a wrapped number or Python number as ``scalar_value`` converts it."""
    if isinstance(b, TensorBase):
        if b._wrapped:
            v = b._np.item() if b._np is not None else None
            return None if v is None else scalar_value(v, dt, compute_dtype(dt))
        return b._np if b._dtype is dt else None
    if type(b) in (float, int, bool):
        return scalar_value(b, dt, compute_dtype(dt))
    return None


def _float_pair(fn, a, b):
    """``fn(a, b)`` as a tensor when both are dense, non-wrapped tensors of one float32/float64
    dtype (apply2's first case, without dtype2's and apply2's frames: the hottest add, sub and
    mul); None where apply2 must decide (then nothing has been computed)."""
    if isinstance(b, TensorBase) and isinstance(a, TensorBase):  # a kernel's self may be a number
        dt = a._dtype
        if b._dtype is dt and dt in _NATIVE_FLOATS and not a._wrapped and not b._wrapped:
            x, y = a._np, b._np
            if x is not None and y is not None:
                try:
                    r = fn(x, y)
                except ValueError:
                    return None  # sizes that do not broadcast: apply2 names them
                # 0-d operands give a numpy scalar, which only finish makes an array
                if type(r) is np.ndarray and r.flags.c_contiguous and x.flags.c_contiguous and \
                        y.flags.c_contiguous:
                    return from_result(r, dt)
                return finish(r, dt, a, b)
    return None


_NATIVE_FLOATS = frozenset(D.BY_NAME[n] for n in ("float32", "float64"))


# ---- add / sub / mul ----------------------------------------------------------------------------
def _alpha_check(dt: D.dtype, alpha) -> None:
    dta = py_dtype(alpha)
    if dta is BOOL and dt is not BOOL:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not (dt.is_floating_point or dt.is_complex) and dta not in (BOOL, D.BY_NAME["int64"]):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if not dt.is_complex and dta.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")


def _add(a, b, alpha, dt):
    if type(alpha) is not int or alpha != 1:
        _alpha_check(dt, alpha)
    check("add_stub", dt, ALL_HBC)
    if dt is BOOL:
        if not alpha:
            return apply2(lambda x, y: np.logical_or(x, False), a, b, dt)
        return apply2(np.logical_or, a, b, dt)
    since = nan_stamp() if dt in REDUCED else None
    if alpha == 1 and dt not in COMPLEX:
        return reduced_nans(apply2(np.add, a, b, dt), a, b, since)
    return reduced_nans(apply2(_axpy(alpha, dt), a, b, dt), a, b, since)


def reduced_nans(out, a, b, since):
    """A float16/bfloat16 result's NaNs as add/sub/mul/div's loop stores them (their AVX2
    build runs under AVX512 too); a one-element second operand is no operand of the loop
    (upstream reads it once: ``is_cpu_scalar``). ``since``: ``cast.nan_stamp()`` before the
    result was converted (unchanged: no NaN stored)."""
    if since is not None and since != nan_stamp():   # (None: not float16/bfloat16)
        one = not isinstance(b, TensorBase) or b.numel() == 1
        loop_nans(out, (a,) if one else (a, b), AVX2_BYTES, since)
    return out


def _axpy(alpha, dt):
    """``x + alpha * y`` as upstream's add loop computes it: one fused multiply-add (alpha is
    first converted to the tensor's dtype); complex values multiply in full."""
    al = checked(alpha, dt)
    if dt in COMPLEX:
        return lambda x, y: exact(lambda u, v: u + al * v, x, y)
    if dt.is_floating_point:
        return lambda x, y: fma(y, al, x)
    return lambda x, y: x + al * y


# real dtypes whose add/mul are their plain numpy loops (no bool, complex, reduced or float8
# rule applies): _add's and mul's checks and branches all end in apply2 with np.add/np.multiply
_PLAIN_REAL = frozenset(D.BY_NAME[n] for n in ("float32", "float64", "int64", "int32", "int16",
                                              "int8", "uint8"))


@kernel("add.Tensor", "add.Scalar")
def add(self, other, alpha=1):
    if type(alpha) is int and alpha == 1:
        r = _float_pair(np.add, self, other)
        if r is not None:
            return r
    dt = dtype2(self, other)
    if dt in _PLAIN_REAL and type(alpha) is int and alpha == 1:
        return apply2(np.add, self, other, dt)
    return _add(self, other, alpha, dt)


def _sub_check(a, b) -> None:
    ab = isinstance(a, TensorBase) and a._dtype is BOOL or isinstance(a, bool)
    bb = isinstance(b, TensorBase) and b._dtype is BOOL or isinstance(b, bool)
    if ab and bb:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if ab or bb:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


@kernel("sub.Tensor", "sub.Scalar")
def sub(self, other, alpha=1):
    if type(alpha) is int and alpha == 1:
        r = _float_pair(np.subtract, self, other)  # float tensors: _sub_check's bools excluded
        if r is not None:
            return r
    _sub_check(self, other)
    dt = dtype2(self, other)
    if type(alpha) is not int or alpha != 1:
        _alpha_check(dt, alpha)
    check("sub_stub", dt, ALL_HC)
    since = nan_stamp() if dt in REDUCED else None
    if alpha == 1 and dt not in COMPLEX:
        return reduced_nans(apply2(np.subtract, self, other, dt), self, other, since)
    # upstream: add with -alpha
    return reduced_nans(apply2(_axpy(-alpha, dt), self, other, dt), self, other, since)


@kernel("rsub.Tensor", "rsub.Scalar")
def rsub(self, other, alpha=1):
    return sub(other, self, alpha)


@kernel("mul.Tensor", "mul.Scalar")
def mul(self, other):
    r = _float_pair(np.multiply, self, other)
    if r is not None:
        return r
    dt = dtype2(self, other)
    if dt in _PLAIN_REAL:
        return apply2(np.multiply, self, other, dt)
    if dt in F8:  # float8 multiplies tensors only; a scalar operand takes the reduced-float path
        if not all(isinstance(t, TensorBase) and not t._wrapped for t in (self, other)):
            raise NotImplementedError(f'"mul_cpu_reduced_float" not implemented for '
                                      f"'{dt._cpp_name}'")
        return apply2(np.multiply, self, other, dt)
    check("mul_cpu", dt, ALL_HBC)
    if dt is BOOL:
        return apply2(np.logical_and, self, other, dt)
    if dt in COMPLEX:  # c10::complex's product, each part rounded in the dtype
        return apply2(complex_arith.product, self, other, dt)
    since = nan_stamp() if dt in REDUCED else None
    return reduced_nans(apply2(np.multiply, self, other, dt, reduced_scalar=True), self, other,
                        since)


# ---- division -----------------------------------------------------------------------------------
def _nonzero_divisor(a, b, dt) -> None:
    """Integer division by zero raises, as upstream's loop does -- if the loop runs at all."""
    if any(isinstance(t, TensorBase) and t.numel() == 0 for t in (a, b)):
        return
    y = b._np if isinstance(b, TensorBase) else b
    if isinstance(b, TensorBase) and b._dtype is not dt:
        y = operand(b, dt, D.numpy_dtype(dt))
    if not np.all(y):
        raise RuntimeError("ZeroDivisionError")


def _trunc_div_int(x, y):
    q = np.floor_divide(x, y)
    # floor -> trunc: step back toward zero where the signs differ and the division is inexact
    fix = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
    return q + fix.astype(q.dtype)


def _floor_div_float(x, y):
    """c10::div_floor_floating (Python's float floor division), elementwise."""
    mod = np.fmod(x, y)
    div = (x - mod) / y
    div = np.where((mod != 0) & ((y < 0) != (mod < 0)), div - 1, div)
    floordiv = np.floor(div)
    floordiv = np.where(div - floordiv > 0.5, floordiv + 1, floordiv)
    q = x / y
    floordiv = np.where(div == 0, np.copysign(np.zeros_like(q), q), floordiv)
    return np.where(y == 0, q, floordiv)


def div_true(a, b):
    dt = _float_dtype(dtype2(a, b))
    check("div_cpu", dt, FLOAT_HC)
    since = nan_stamp() if dt in REDUCED else None
    return reduced_nans(apply2(np.true_divide, a, b, dt, reduced_scalar=True), a, b, since)


def div_trunc(a, b):
    dt = dtype2(a, b)
    if dt in INTEGRAL:
        _nonzero_divisor(a, b, dt)
        return apply2(_trunc_div_int, a, b, dt)
    check("div_trunc_cpu", dt, FLOAT_H)
    if dt in REDUCED and not is_scalar_operand(b):  # the quotient is rounded before trunc
        npdt = D.numpy_dtype(dt)
        return apply2(lambda x, y: np.trunc(x.astype(npdt) / y.astype(npdt)), a, b, dt)
    return apply2(lambda x, y: np.trunc(x / y), a, b, dt, reduced_scalar=True)


def div_floor(a, b):
    dt = dtype2(a, b)
    if dt in INTEGRAL:
        _nonzero_divisor(a, b, dt)
        return apply2(np.floor_divide, a, b, dt)
    check("div_floor_cpu", dt, FLOAT_H)
    if dt in REDUCED and not is_scalar_operand(b):  # every step rounds in the reduced type
        npdt = D.numpy_dtype(dt)
        return apply2(lambda x, y: _floor_div_float(x.astype(npdt), y.astype(npdt)), a, b, dt)
    return apply2(_floor_div_float, a, b, dt, reduced_scalar=True)


@kernel("div.Tensor", "div.Scalar")
def div(self, other):
    return div_true(self, other)


@kernel("div.Tensor_mode", "div.Scalar_mode")
def div_mode(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return div_true(self, other)
    if rounding_mode == "trunc":
        return div_trunc(self, other)
    if rounding_mode == "floor":
        return div_floor(self, other)
    raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


@kernel("floor_divide", "floor_divide.Scalar")
def floor_divide(self, other):
    return div_floor(self, other)


def _remainder_float(x, y):
    mod = np.fmod(x, y)
    return np.where((mod != 0) & ((y < 0) != (mod < 0)), mod + y, mod)


@kernel("remainder.Tensor", "remainder.Scalar", "remainder.Scalar_Tensor")
def remainder(self, other):
    dt = dtype2(self, other)
    if dt in INTEGRAL:
        _nonzero_divisor(self, other, dt)
        return apply2(np.remainder, self, other, dt)
    check("remainder_cpu", dt, FLOAT_H)
    return apply2(_remainder_float, self, other, dt)


@kernel("fmod.Tensor", "fmod.Scalar")
def fmod(self, other):
    dt = dtype2(self, other)
    if dt in INTEGRAL:
        _nonzero_divisor(self, other, dt)
    else:
        check("fmod_cpu", dt, FLOAT_H)
    return apply2(np.fmod, self, other, dt)


# ---- pow ----------------------------------------------------------------------------------------
def _powi(x, y):
    """c10's powi: integer power by squaring (wrapping); negative exponents give 1, +-1 or 0."""
    x, y = np.broadcast_arrays(x, y)
    result = np.ones(x.shape, dtype=x.dtype)
    base = x.copy()
    e = y.astype(np.int64)
    neg = e < 0
    e = np.where(neg, 0, e)
    while np.any(e):
        odd = (e & 1).astype(bool)
        result = np.where(odd, result * base, result)
        base = base * base
        e = e >> 1
    if np.any(neg):
        minus_one = x == -1 if x.dtype.kind == "i" else np.zeros(x.shape, bool)
        neg_val = np.where(x == 1, 1, np.where(minus_one, np.where(y % 2 != 0, -1, 1), 0))
        result = np.where(neg, neg_val.astype(result.dtype), result)
    return result


def _cpow(x, y):
    """C's pow: numpy's float power takes sqrt for an exponent of 0.5, which differs at -inf
    (pow gives +inf) and -0.0 (pow gives +0.0)."""
    r = np.power(x, y)
    half = (y == 0.5) & ((x == -np.inf) | (x == 0))
    if np.any(half):
        r = np.where(half, np.where(x == 0, r.dtype.type(0), r.dtype.type(np.inf)), r)
    return r


def _pow_float(x, y):
    if x.dtype == np.complex64:
        # std::pow(complex<float>) is C's cpowf, which numpy's power calls for finite nonzero
        # operands and exponents other than the small integers it multiplies out; the rest
        # are left to exp(y * log(x))
        with quiet():
            r = np.power(x, y)
            xb, yb = np.broadcast_to(x, r.shape), np.broadcast_to(y, r.shape)
            other = (yb.imag == 0) & (yb.real == np.round(yb.real)) & (np.abs(yb.real) < 100)
            other |= ~np.isfinite(xb) | ~np.isfinite(yb) | (xb == 0)
            if other.any():
                r = np.where(other, exact(np.exp, exact(np.multiply, y, exact(np.log, x))), r)
            return r
    return exact(_cpow, x, y)


@kernel("pow.Tensor_Tensor")
def pow_tensor_tensor(self, exponent):
    dt = dtype2(self, exponent)
    if dt in INTEGRAL:
        return apply2(_powi, self, exponent, dt)
    check("pow", dt, FLOAT_HC)
    return apply2(_pow_float, self, exponent, dt)


def _is(v, target) -> bool:
    """c10::Scalar::equal: a bool scalar equals only a bool; numbers compare by value."""
    if isinstance(v, bool) or isinstance(target, bool):
        return isinstance(v, bool) and isinstance(target, bool) and v == target
    return v == target


_REAL = frozenset((D.BY_NAME["float32"], D.BY_NAME["float64"]))


@kernel("pow.Tensor_Scalar")
def pow_tensor_scalar(self, exponent):
    x = self._np
    if type(exponent) in (int, float) and exponent == 2 and self._dtype in _REAL and \
            x is not None and x.ndim and x.flags.c_contiguous:
        # the common case (RMSNorm's square): the general path's x * x, without its checks
        return from_result(x * x, self._dtype)
    if (self._dtype in INTEGRAL or self._dtype is BOOL) and py_dtype(exponent) in (
            BOOL, D.BY_NAME["int64"]) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    dt = dtype2(self, exponent)
    if _is(exponent, 0) or _is(exponent, False) or _is(exponent, 0.0):  # out.fill_(1)
        return finish(np.ones(self._size, dtype=D.numpy_dtype(dt)), dt, self)
    if _is(exponent, 1) or _is(exponent, True):  # out.copy_(base)
        return finish(operand(self, dt, D.numpy_dtype(dt)).copy(), dt, self)
    x = operand(self, dt, compute_dtype(dt))
    if dt in INTEGRAL:
        r = _powi(x, checked(exponent, dt))
    else:
        check("pow", dt, FLOAT_HC)
        r = _pow_scalar(x, exponent, dt)
    return finish(r, dt, self)


def _pow_scalar(x, e, dt):
    """pow_tensor_scalar_kernel's special exponents: sqrt, rsqrt and reciprocal (not for
    float16), x*x, x*x*x and 1/(x*x); else pow with the exponent held in the tensor's type.
    Complex products are rounded as c10::complex rounds them (support/complex_arith.py)."""
    mul = np.multiply
    if dt in COMPLEX:
        x = x.astype(np.complex64 if x.dtype == np.complex64 else np.complex128, copy=False)
        e, mul = complex(e), complex_arith.product
    if dt is not D.BY_NAME["float16"]:
        if e == 0.5:
            return np.sqrt(x)
        if e == -0.5:
            return 1 / np.sqrt(x)
        if e == -1:
            return 1 / x
    if dt is D.BY_NAME["float16"]:
        return exact(_cpow, x, np.float32(checked(e, dt)))
    if dt in REDUCED:  # the exponent is held as a bfloat16 first
        e = float(checked(e, dt))
    if dt not in COMPLEX and isinstance(e, complex):
        e = e.real
    if dt in REDUCED:  # Vectorized<BFloat16> arithmetic rounds after every operation
        x = x.astype(D.numpy_dtype(dt))
    if e == 2:
        return mul(x, x)
    if e == 3:
        return mul(mul(x, x), x)
    if e == -2:
        return 1 / mul(x, x)
    if dt in COMPLEX:
        return _cpow_complex(x, e)
    return exact(_cpow, x, np.asarray(e, dtype=x.dtype))


def _cpow_complex(x, e: complex):
    """std::pow over c10::complex in the dtype: numpy's power is C's cpow but for the small
    whole exponents it multiplies out and its own cases at 0 and inf (the former path there)."""
    if e.imag == 0 and e.real == round(e.real) and abs(e.real) < 100:
        return exact(_cpow, x, np.asarray(e, dtype=x.dtype))
    r = np.power(x, np.asarray(e, dtype=x.dtype))
    other = ~np.isfinite(x) | (x == 0)
    if other.any():
        r = np.where(other, exact(_cpow, x, np.asarray(e, dtype=x.dtype)), r)
    return r


@kernel("pow.Scalar")
def pow_scalar(self, exponent):
    dt = result_type(self, exponent)
    if _is(self, 1) or _is(self, 1.0) or (isinstance(self, complex) and self == 1):
        return finish(np.ones(exponent._size, dtype=D.numpy_dtype(dt)), dt, exponent)
    from ..core.construct import wrapped_number

    return pow_tensor_tensor(wrapped_number(self), exponent)  # at::pow_out(wrapped base, exp)


# ---- other binary float ops ---------------------------------------------------------------------
@kernel("atan2")
def atan2(self, other):
    dt = _float_dtype(dtype2(self, other))
    check("atan2_cpu", dt, FLOAT_H)
    return apply2(lambda x, y: exact(np.arctan2, x, y), self, other, dt)


@kernel("hypot")
def hypot(self, other):
    dt = dtype2(self, other)
    check("hypot_cpu", dt, FLOAT_H)
    return apply2(np.hypot, self, other, dt)


@kernel("copysign.Tensor", "copysign.Scalar")
def copysign(self, other):
    dt = _float_dtype(dtype2(self, other))
    check("copysign_cpu", dt, FLOAT_H)
    return apply2(np.copysign, self, other, dt)


def _xlogy(x, y):
    r = np.where(x == 0, 0, x * exact(np.log, y))
    return np.where(np.isnan(y), np.nan, r).astype(x.dtype, copy=False)


@kernel("xlogy.Tensor", "xlogy.Scalar_Self", "xlogy.Scalar_Other")
def xlogy(self, other):
    dt = _float_dtype(dtype2(self, other))
    check("xlogy_cpu", dt, FLOAT_H)
    return apply2(_xlogy, self, other, dt)


def _xlog1py(x, y):
    r = np.where(x == 0, 0, x * exact(np.log1p, y))
    return np.where(np.isnan(y), np.nan, r).astype(x.dtype, copy=False)


@kernel("special_xlog1py", "special_xlog1py.self_scalar", "special_xlog1py.other_scalar")
def xlog1py(self, other):
    dt = _float_dtype(dtype2(self, other))
    check("xlog1py_cpu", dt, FLOAT_H)
    return apply2(_xlog1py, self, other, dt)


def _logaddexp(x, y):
    m = np.maximum(x, y)
    r = m + exact(np.log1p, exact(np.exp, -np.abs(x - y)))
    return np.where(np.isinf(x) & (x == y), x, r)


def _logaddexp2(x, y):
    m = np.maximum(x, y)
    inv_ln2 = x.dtype.type(1.0 / np.log(2.0))
    r = fma(exact(np.log1p, exact(np.exp2, -np.abs(x - y))), inv_ln2, m)
    return np.where(np.isinf(x) & (x == y), x, r)


def _logaddexp_complex(x, y):
    """_log_add_exp_helper for complex: ordered by real part, NaN and infinities first."""
    wide = np.complex128
    x, y = np.broadcast_arrays(x.astype(wide), y.astype(wide))
    lo = np.where(x.real < y.real, x, y)
    hi = np.where(x.real < y.real, y, x)
    from .pointwise_unary import complex_log1p

    r = complex_log1p(np.exp(lo - hi)) + hi
    both_inf = ~np.isfinite(lo.real) & (lo.real == hi.real)
    r = np.where(both_inf & (lo.real < 0), lo,
                 np.where(both_inf, np.log(np.exp(lo) + np.exp(hi)), r))
    nan = np.isnan(lo.real) | np.isnan(lo.imag)
    return np.where(nan, complex(np.nan, np.nan), r)


@kernel("logaddexp")
def logaddexp(self, other):
    dt = dtype2(self, other)
    if dt in COMPLEX:
        return apply2(lambda x, y: _logaddexp_complex(x, y).astype(x.dtype), self, other, dt)
    check("logaddexp_cpu", dt, FLOAT_H)
    return apply2(_logaddexp, self, other, dt)


@kernel("logaddexp2")
def logaddexp2(self, other):
    dt = dtype2(self, other)
    check("logaddexp2_cpu", dt, FLOAT_H)
    return apply2(_logaddexp2, self, other, dt)


# ---- minimum / maximum --------------------------------------------------------------------------
def _extremum(name, a, b, fn):
    dt = dtype2(a, b)
    if dt in COMPLEX:
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    if dt is BOOL:
        return apply2(np.logical_or if fn is np.maximum else np.logical_and, a, b, dt)
    check(f"{name}_cpu", dt, ALL_H)
    since = nan_stamp()
    out = apply2(fn, a, b, dt)  # numpy's maximum/minimum propagate NaN, as upstream's do
    if dt in REDUCED:   # the AVX2 build's loop over both operands
        loop_nans(out, (a, b), AVX2_BYTES, since)
    return out


@kernel("maximum")
def maximum(self, other):
    return _extremum("maximum", self, other, np.maximum)


@kernel("minimum")
def minimum(self, other):
    return _extremum("minimum", self, other, np.minimum)


@kernel("fmax")
def fmax(self, other):
    dt = dtype2(self, other)
    if dt.is_floating_point:
        check("fmax_cpu", dt, FLOAT_H)
        return apply2(np.fmax, self, other, dt)
    if dt in COMPLEX:
        raise RuntimeError("fmax not implemented for complex tensors.")
    return _extremum("maximum", self, other, np.maximum)


@kernel("fmin")
def fmin(self, other):
    dt = dtype2(self, other)
    if dt.is_floating_point:
        check("fmin_cpu", dt, FLOAT_H)
        return apply2(np.fmin, self, other, dt)
    if dt in COMPLEX:
        raise RuntimeError("fmin not implemented for complex tensors.")
    return _extremum("minimum", self, other, np.minimum)


@kernel("heaviside")
def heaviside(self, values):
    if self._dtype in COMPLEX or values._dtype in COMPLEX:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self._dtype is not values._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    dt = self._dtype
    check("heaviside_cpu", dt, ALL_HB)
    return apply2(lambda x, y: np.where(x == 0, y, (x > 0).astype(x.dtype)), self, values, dt)


@kernel("nextafter")
def nextafter(self, other):
    dt = dtype2(self, other)
    check("nextafter_cpu", dt, FLOAT_H)
    if dt in REDUCED:  # step in the reduced type's own grid
        npdt = D.numpy_dtype(dt)
        return apply2(lambda x, y: _nextafter_reduced(x, y, npdt), self, other, dt)
    return apply2(np.nextafter, self, other, dt)


def _nextafter_reduced(x, y, npdt):
    xs, ys = x.astype(npdt), y.astype(npdt)
    bits = xs.view(np.uint16).astype(np.int32)
    up = (ys > xs)
    down = (ys < xs)
    pos = xs > 0
    zero = xs == 0
    step = np.where(up == pos, 1, -1)
    nb = np.where(zero, np.where(up, 1, 0x8001), bits + step)
    r = np.where(up | down, nb.astype(np.uint16).view(npdt), ys)
    r = np.where(np.isnan(xs) | np.isnan(ys), np.nan, r.astype(np.float32))
    return r.astype(np.float32)
