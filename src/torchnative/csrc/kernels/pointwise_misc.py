"""Clamp, lerp, addcmul/addcdiv and the activation functions that are pointwise kernels upstream
(relu, gelu, silu, mish, elu, leaky_relu, hardtanh, hardsigmoid, hardswish, softplus, threshold).

Each formula is upstream's CPU loop, step by step, in the compute dtype (float32 for
float16/bfloat16): the order of roundings decides the last bit, and ``a * b + c`` is one fused
multiply-add wherever upstream's compiled loop fuses it (lerp, addcmul, gelu's tanh form).
gelu has both of upstream's forms, never to be swapped (they differ by up to ~1e-3): the exact
``x/2 (1 + erf(x/sqrt 2))`` -- for contiguous float32/bfloat16/float16 computed as upstream's
oneDNN kernel computes it, elsewhere with upstream's own vectorized erf -- and the tanh form.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .pointwise_base import (ALL_H, ALL_HB, ALL_HC, BF16, BOOL, COMPLEX, F16, F32, F64, FLOAT_H,
                             FLOAT_HC, INTEGRAL, REDUCED, U8, broadcasting, check, checked,
                             compute_dtype, finish, operand, result_type)
from .pointwise_binary import maximum, minimum
from .pointwise_math import (CHUNK, ONEDNN_AVX2, ONEDNN_AVX512, ONEDNN_BF16, ONEDNN_FP16,
                             ONEDNN_SSE41, SIMD_MATH, erf, erf_vec32, exact, fma, gelu_onednn,
                             gelu_onednn_avx2, vectorized_mask)
from .inplace_lane import lane as _inplace_lane, written as _written
from .support.relu_max import relu_array
from ..core.construct import from_result
from ..core.mem_overlap import assert_no_internal_overlap
from ..dispatch.structured import inplace_wrapper
from ..ops.kernel_registry import kernel

_SELECT = frozenset((F32, D.BY_NAME["float64"]))   # dtypes of the bit-select lane


def _apply(fn, self, dt, *more):
    """``fn`` over self (and ``more`` tensors) cast to ``dt``, in its compute dtype."""
    cdt = compute_dtype(dt)
    xs = [operand(t, dt, cdt) for t in (self, *more)]
    r = broadcasting(lambda: fn(*xs), self, *more)   # (the door's quiet float state)
    return finish(r, dt, self, *more)


# ---- clamp --------------------------------------------------------------------------------------
_NO_COMPLEX = "clamp is not supported for complex types"


def _clamp_dtype(self, *bounds):
    dt = self._dtype
    if dt in COMPLEX:
        raise NotImplementedError(_NO_COMPLEX)
    if not dt.is_floating_point:
        dt = result_type(self, *[b for b in bounds if b is not None])
    if dt in COMPLEX:
        raise NotImplementedError(_NO_COMPLEX)
    return dt


def _is_nan(v) -> bool:
    return isinstance(v, float) and v != v


def _nan_result(self, dt):
    return finish(np.full(self._size, np.nan, dtype=compute_dtype(dt)), dt, self)


@kernel("clamp")
def clamp(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = _clamp_dtype(self, min, max)
    for bound in (min, max):  # the implementation reads each bound with toDouble() first
        if bound is not None:
            checked(bound, F64)
    if min is not None and max is not None and (_is_nan(min) or _is_nan(max)):
        check("fill_", dt, ALL_HB)
        return _nan_result(self, dt)
    if max is None:
        return _clamp_min(self, min, dt)
    if min is None:
        return _clamp_max(self, max, dt)
    check("clamp_scalar_cpu", dt, ALL_H)
    lo, hi = checked(min, dt), checked(max, dt)
    return _apply(lambda x: _below(_above(x, lo), hi), self, dt)


# std::max(a, lo) / std::min(a, hi): ``a`` itself when equal (keeps -0.0) or NaN
def _above(x, lo):
    return np.where(x < lo, lo, x)


def _below(x, hi):
    return np.where(x > hi, hi, x)


def _clamp_min(self, min, dt):
    if _is_nan(min):
        return _nan_result(self, dt)
    check("clamp_min_scalar_cpu", dt, ALL_H)
    lo = checked(min, dt)
    if lo == 0 and dt is self._dtype and not np.signbit(lo):
        fast = _relu_select(self)
        if fast is not None:
            return fast
    return _apply(lambda x: _above(x, lo), self, dt)


def _relu_select(self):
    """max(x, +0.0) of a C-contiguous float32/float64 tensor: x itself (-0.0 and NaN too) unless
    x < 0, where it is all-zero bits (support/relu_max.py); else None."""
    x = self._np
    if self._dtype not in _SELECT or x is None or not x.ndim or not x.flags.c_contiguous or \
            self._math_bits:
        return None
    return from_result(relu_array(x), self._dtype)


def _clamp_max(self, max, dt):
    if _is_nan(max):
        return _nan_result(self, dt)
    check("clamp_max_scalar_cpu", dt, ALL_H)
    hi = checked(max, dt)
    return _apply(lambda x: _below(x, hi), self, dt)


def _clamp_inplace(functional):
    """clamp_ / clamp_min_ / clamp_max_: the meta function refuses a promoted result type with
    its own message (the dtype printed as caffe2's type name), then its iterator a ``self``
    with internal overlap."""
    def inplace(self, *bounds):
        from ..platform.cpp_names import typemeta
        from ..dispatch.structured import write_into

        result = functional(self, *bounds)
        if result._dtype is not self._dtype:
            name = typemeta(self._dtype._name, self._dtype._cpp_name)
            raise RuntimeError(f"result type {result._dtype._cpp_name} can't be cast to the "
                               f"desired output type {name}")
        assert_no_internal_overlap(self)
        write_into(self, result)
        return self

    return inplace


@kernel("clamp_min")
def clamp_min(self, min):
    if isinstance(min, complex):
        raise NotImplementedError(_NO_COMPLEX)
    return _clamp_min(self, min, _clamp_dtype(self, min))


@kernel("clamp_max")
def clamp_max(self, max):
    if isinstance(max, complex):
        raise NotImplementedError(_NO_COMPLEX)
    return _clamp_max(self, max, _clamp_dtype(self, max))


kernel("clamp_")(_clamp_inplace(clamp))
kernel("clamp_min_")(_clamp_inplace(clamp_min))
kernel("clamp_max_")(_clamp_inplace(clamp_max))


@kernel("clamp.Tensor")
def clamp_tensor(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self._dtype in COMPLEX:
        raise NotImplementedError(_NO_COMPLEX)
    if max is None:
        return maximum(self, min)
    if min is None:
        return minimum(self, max)
    dt = result_type(self, min, max)
    check("clamp_cpu", dt, ALL_H)
    return _apply(lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), self, dt, min, max)


@kernel("clamp_min.Tensor")
def clamp_min_tensor(self, min):
    return maximum(self, min)


@kernel("clamp_max.Tensor")
def clamp_max_tensor(self, max):
    return minimum(self, max)


# ---- lerp, addcmul, addcdiv ---------------------------------------------------------------------
def _lerp(x, end, w, out=None):
    if not isinstance(w, np.ndarray):   # one weight: one branch for every element
        if np.abs(w) < 0.5:
            return fma(w, end - x, x, out)
        return fma(w - 1, end - x, end, out)
    small = np.abs(w) < 0.5
    coeff = np.where(small, w, w - 1)
    base = np.where(small, x, end)
    return fma(coeff, end - x, base, out)  # upstream: fmadd(coeff, end - start, base)


def _same_dtype(self, other, what):
    if other._dtype is not self._dtype:
        raise RuntimeError(f"expected dtype {_py_name(self._dtype)} for `{what}` but got dtype "
                           f"{_py_name(other._dtype)}")


def _py_name(dt):
    return D.PYTHON_NAMES[dt][-1] if dt in D.PYTHON_NAMES else dt._name


@kernel("lerp.Scalar")
def lerp_scalar(self, end, weight):
    _same_dtype(self, end, "end")
    dt = self._dtype
    check("lerp_kernel_scalar", dt, FLOAT_HC)
    w = checked(weight, dt) if dt not in REDUCED else np.float32(checked(weight, F32))
    return _apply(lambda x, e: _lerp(x, e, w), self, dt, end)


@kernel("lerp.Tensor")
def lerp_tensor(self, end, weight):
    _same_dtype(self, end, "end")
    _same_dtype(self, weight, "weight")
    dt = self._dtype
    check("lerp_kernel_tensor", dt, FLOAT_HC)
    return _apply(_lerp, self, dt, end, weight)


def _pointwise3(name, self, t1, t2, value, fn):
    """addcmul/addcdiv: ``value`` read as the compute type (float for float16/bfloat16, without
    rounding it to the tensor's type first; Scalar.to<int>() truncates an in-range float)."""
    dt = result_type(self, t1, t2)
    check(f"{name}_cpu_out", dt, ALL_HC)
    v = np.float32(checked(value, F32)) if dt in REDUCED else checked(value, dt)
    return _apply(lambda a, b, c: fn(a, b, c, v), self, dt, t1, t2)


def _addcmul(a, b, c, v, out=None):
    if a.dtype.kind == "f":
        return fma(v * b, c, a, out)
    return np.add(a, v * b * c, out=out)


@kernel("addcmul")
def addcmul(self, tensor1, tensor2, *, value=1):
    if result_type(self, tensor1, tensor2) is BOOL:
        raise NotImplementedError('"addcmul_cpu_out" not implemented for \'Bool\'')
    return _pointwise3("addcmul", self, tensor1, tensor2, value, _addcmul)


@kernel("addcdiv")
def addcdiv(self, tensor1, tensor2, *, value=1):
    if not (tensor1._dtype.is_floating_point or tensor1._dtype.is_complex) and \
            not (tensor2._dtype.is_floating_point or tensor2._dtype.is_complex):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return _pointwise3("addcdiv", self, tensor1, tensor2, value, _addcdiv)


def _addcdiv(a, b, c, v, out=None):
    return np.add(a, v * b / c, out=out)


# ---- their in-place forms: the functional's values written into self ----------------------------
_LERP_SCALAR_ = inplace_wrapper(lerp_scalar, "lerp_.Scalar")
_ADDCMUL_ = inplace_wrapper(addcmul, "addcmul_")
_ADDCDIV_ = inplace_wrapper(addcdiv, "addcdiv_")


@kernel("lerp_.Scalar")
def lerp_scalar_(self, end, weight):
    x = _inplace_lane(self, end)
    if x is None:
        return _LERP_SCALAR_(self, end, weight)
    return _written(self, x, _lerp, x, end._np, checked(weight, self._dtype))


@kernel("addcmul_")
def addcmul_(self, tensor1, tensor2, *, value=1):
    x = _inplace_lane(self, tensor1, tensor2)
    if x is None:
        return _ADDCMUL_(self, tensor1, tensor2, value=value)
    return _written(self, x, _addcmul, x, tensor1._np, tensor2._np, checked(value, self._dtype))


@kernel("addcdiv_")
def addcdiv_(self, tensor1, tensor2, *, value=1):
    x = _inplace_lane(self, tensor1, tensor2)
    if x is None:
        return _ADDCDIV_(self, tensor1, tensor2, value=value)
    return _written(self, x, _addcdiv, x, tensor1._np, tensor2._np, checked(value, self._dtype))


# ---- activations --------------------------------------------------------------------------------
def _act(kname, self, fn, types=FLOAT_H):
    dt = self._dtype
    check(kname, dt, types)
    return _apply(fn, self, dt)


@kernel("relu")
def relu(self):
    fast = _relu_select(self)
    if fast is not None:
        return fast
    if self._dtype is BOOL:
        raise RuntimeError("Boolean inputs not supported for relu")
    return clamp_min(self, 0)


_SQRT1_2 = 0.70710678118654752440
_GELU_BETA = np.sqrt(2.0) * (2.0 / np.sqrt(np.pi)) * 0.5  # M_SQRT2 * M_2_SQRTPI * 0.5


def _gelu_none(x, mask):
    t = x.dtype.type
    z = x * t(_SQRT1_2)
    e = erf(z)
    if mask is not None and x.dtype == np.float32 and SIMD_MATH:
        # upstream's SIMD loop uses its polynomial erf; only the loop's scalar tail calls erff
        e = np.where(mask, erf_vec32(z), e)
    return x * t(0.5) * (t(1) + e)


def _gelu_tanh(x):
    t = x.dtype.type
    cube = x * x * x
    inner = t(_GELU_BETA) * fma(np.full_like(x, 0.044715), cube, x)
    return t(0.5) * x * (t(1) + exact(np.tanh, inner))


@kernel("gelu")
def gelu(self, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if approximate == "tanh":
        return _act("GeluKernelImpl", self, _gelu_tanh)
    dt = self._dtype
    if dt in _ONEDNN_GELU and self.numel() > 1 and self.is_contiguous():
        # upstream hands contiguous float32 (and bfloat16) to oneDNN's eltwise_gelu_erf, whose
        # algorithm depends on the ISA oneDNN finds on the CPU (not on ATen's capability)
        if ONEDNN_AVX512:
            return _act("GeluKernelImpl", self, gelu_onednn)
        if ONEDNN_AVX2 and dt is F32:
            return _act("GeluKernelImpl", self, gelu_onednn_avx2)
        if ONEDNN_SSE41 and dt is F32:
            return _act("GeluKernelImpl", self, lambda x: gelu_onednn_avx2(x, fused=False))
    mask = vectorized_mask(self._size, self._stride, dt.itemsize)
    return _act("GeluKernelImpl", self, lambda x: _gelu_none(x, mask))


_ONEDNN_GELU = frozenset([F32] + [BF16] * ONEDNN_BF16 + [F16] * ONEDNN_FP16)


@kernel("silu")
def silu(self):
    return _act("silu_cpu", self, _silu, FLOAT_HC)


def _silu(x):
    """x / (1 + exp(-x)), the exp evaluated in float64 and rounded once (``exact``)."""
    if x.dtype != np.float32 or not x.flags.c_contiguous or not x.ndim:
        return x / (1 + exact(np.exp, -x))
    # float32: the same steps (exact negation and widening, exp into a fresh array, one
    # rounding, then 1 + e and x / d in float32) with fewer temporaries; a large x a chunk at a
    # time, so no float64 array as large as x
    n = x.size
    if n <= CHUNK:
        d = np.exp(np.negative(x, dtype=np.float64)).astype(np.float32)
        d += 1
        return np.divide(x, d, out=d)
    out = np.empty(x.shape, np.float32)
    xf, of = x.reshape(-1), out.reshape(-1)
    wide, val = np.empty(CHUNK, np.float64), np.empty(CHUNK, np.float64)
    for i in range(0, n, CHUNK):
        xs, d = xf[i:i + CHUNK], of[i:i + CHUNK]
        w, v = wide[:xs.size], val[:xs.size]
        np.negative(xs, out=w)
        np.exp(w, out=v)
        np.copyto(d, v, casting="same_kind")
        np.add(d, 1, out=d)
        np.divide(xs, d, out=d)
    return out


@kernel("mish")
def mish(self):
    return _act("mish_cpu", self,
                lambda x: x * exact(np.tanh, exact(np.log1p, exact(np.exp, x))))


@kernel("elu")
def elu(self, alpha=1, scale=1, input_scale=1):
    dt = self._dtype
    check("elu_cpu", dt, FLOAT_H)
    t = F32 if dt in REDUCED else dt
    a, s, i = checked(alpha, t), checked(scale, t), checked(input_scale, t)
    negcoef = a * s

    def fn(x):
        return np.where(x > 0, x * s, exact(np.expm1, x * i) * negcoef)

    return _apply(fn, self, dt)


@kernel("leaky_relu")
def leaky_relu(self, negative_slope=0.01):
    dt = self._dtype
    check("leaky_relu_cpu", dt, FLOAT_H)
    slope = checked(negative_slope, F32 if dt in REDUCED else dt)
    return _apply(lambda x: np.where(x > 0, x, x * slope), self, dt)


@kernel("hardtanh")
def hardtanh(self, min_val=-1, max_val=1):
    if self._dtype is BOOL:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if self._dtype in INTEGRAL:
        min_val, max_val = int(min_val), int(max_val)
        if self._dtype is U8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return clamp(self, min_val, max_val)


def _hardsigmoid(x):
    t = x.dtype.type
    return np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6)


@kernel("hardsigmoid")
def hardsigmoid(self):
    return _act("hardsigmoid_cpu", self, _hardsigmoid)


@kernel("hardswish")
def hardswish(self):
    def fn(x):
        t = x.dtype.type
        return x * np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6)

    return _act("hardswish_cpu", self, fn)


@kernel("softplus")
def softplus(self, beta=1, threshold=20):
    dt = self._dtype
    check("softplus_cpu", dt, FLOAT_H)
    t = F32 if dt in REDUCED else dt
    b, th = checked(beta, t), checked(threshold, t)

    def fn(x):
        xb = x * b
        return np.where(xb > th, x, exact(np.log1p, exact(np.exp, xb)) / b)

    return _apply(fn, self, dt)


@kernel("threshold")
def threshold(self, threshold, value):
    dt = self._dtype
    check("threshold_cpu", dt, ALL_H)
    th, v = checked(threshold, dt), checked(value, dt)
    return _apply(lambda x: np.where(x <= th, v, x), self, dt)


