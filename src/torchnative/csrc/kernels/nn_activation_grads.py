"""Activation backward kernels upstream writes in C++ (cpu/Activation.cpp): leaky_relu_backward,
log_sigmoid_backward, silu_backward and hardtanh_backward.

Each is a TensorIterator op over grad and the forward's input (leaky_relu's promotes them to a
common dtype; log_sigmoid's requires one dtype and writes into empty_like(grad_output)), whose
loop computes in the compute dtype (float32 for float16/bfloat16) and rounds once. A bfloat16
result stores a NaN as the loop that converted it does (``scalar_nans``).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.cast import BF16_SCALAR_NAN, BF16_VECTOR_NAN
from ..platform import cpu_capability
from .pointwise_base import (BF16, F16, FLOAT_H, FLOAT_HC, REDUCED,
                             broadcasting, check, checked, compute_dtype, finish, operand, quiet,
                             result_type)
from .pointwise_math import VEC_BYTES, fma
from .exp_lanes import loop_exp
from .support.complex_arith import product, quotient
from .copy import copy_into
from .factories import empty_like
from .simd_lanes import loop_nans, tensor_lanes
from ..ops.kernel_registry import kernel

_F32 = np.float32


def binary(kname, types, ops, fn, scalar_types=None, computed=True, stored=()):
    """``fn`` over the iterator's inputs ``ops`` cast to their common dtype, in its compute
    dtype; the dtype refused by AT_DISPATCH's ``kname`` outside ``types``. ``fn`` receives the
    arrays and the dtype (to read Scalars with). ``scalar_types``: not promoting, every operand
    must already have the first one's dtype (a TensorIterator without a common dtype).
    ``computed``: the bfloat16 result is converted from float (not an input's bits passed
    through), so its NaNs are stored as the converting loop stores them. ``stored``: the
    indices of operands ``fn`` receives in ``dt`` itself, their bits to pass on."""
    dt = result_type(*ops) if scalar_types is None else scalar_types
    check(kname, dt, types)
    cdt = compute_dtype(dt)
    xs = [operand(t, dt, D.numpy_dtype(dt) if i in stored else cdt) for i, t in enumerate(ops)]
    with quiet():
        r = broadcasting(lambda: fn(dt, *xs), *ops)
    out = finish(r, dt, *ops)
    if dt is BF16 and computed:
        scalar_nans(out, ops)
    return out


def scalar_nans(out, ops) -> None:
    """A bfloat16 result's NaNs as its loops store them (simd_lanes.loop_nans)."""
    loop_nans(out, ops)


def scalar_of(v, dt):
    """``Scalar.to<T>()`` of the loop's math type: float for float16/bfloat16."""
    return checked(v, D.BY_NAME["float32"] if dt in REDUCED else dt)


def simd_lanes(ops, itemsize: int):
    """Which elements of the broadcast result upstream's ``cpu_kernel_vec`` computes with its
    SIMD op (None: none): simd_lanes.tensor_lanes' mask."""
    run = run_positions(ops, itemsize)
    return None if run is None else run.mask


def run_positions(ops, itemsize: int, step=None):
    """simd_lanes.tensor_lanes of the loop over ``ops``: (each element's place in its loop, that
    loop's SIMD part's length, the mask), None where no element is vectorized. ``step``: the
    elements one iteration takes (two vectors' unless given)."""
    return tensor_lanes(ops, itemsize, step=step)


# ---- log_sigmoid: no promotion; the result is shaped and laid out like grad_output --------------
@kernel("log_sigmoid_backward")
def log_sigmoid_backward(grad_output, self, buffer):
    # the iterator's dtype check: its output (empty_like(grad_output)), then buffer, then grad
    # against self's dtype
    for t in (grad_output, buffer):
        if t._dtype is not self._dtype:
            raise RuntimeError(f"Found dtype {t._dtype._cpp_name} but expected "
                               f"{self._dtype._cpp_name}")
    ops = (self, buffer, grad_output)

    def fn(dt, a, b, c):
        t = a.dtype.type
        neg = a < 0
        return (np.where(neg, t(1), t(0)) - np.where(neg, t(1), t(-1)) * (b / (1 + b))) * c

    r = binary("log_sigmoid_backward_cpu", FLOAT_H, ops, fn, scalar_types=self._dtype)
    if r._size != grad_output._size:  # the output is resized: the iterator's layout
        return r
    out = empty_like(grad_output)
    copy_into(out, r)
    return out


# ---- leaky_relu ---------------------------------------------------------------------------------
@kernel("leaky_relu_backward")
def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    if self_is_result and float(checked(negative_slope, D.BY_NAME["float64"])) < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope")

    def fn(dt, x, g):
        slope = scalar_of(negative_slope, dt)
        return np.where(x > 0, g, g * slope)

    return binary("leaky_relu_backward_cpu", FLOAT_H, (self, grad_output), fn)


# ---- complex arithmetic as c10::complex and Vectorized<c10::complex<T>> round it -----------------
def blend(mask, simd, scalar):
    """The SIMD loop's value where ``mask`` (simd_lanes), the scalar loop's elsewhere."""
    if mask is None:
        return scalar()
    return np.where(mask, simd(), scalar())


# ---- sigmoid, tanh (BinaryOpsKernel.cpp): the output's gradient; complex values conjugated ---
def _rounded_steps(dt):
    """float16 computes in its own type, one rounding per step (else the identity)."""
    if dt is not F16:
        return lambda v: v
    return lambda v: np.asarray(v).astype(np.float16).astype(_F32)


@kernel("sigmoid_backward")
def sigmoid_backward(grad_output, output):
    ops = (grad_output, output)

    def fn(dt, a, b):
        if a.dtype.kind != "c":
            rnd = _rounded_steps(dt)
            return rnd(rnd(a * rnd(1 - b)) * b)
        mask = simd_lanes(ops, a.dtype.itemsize)
        return blend(mask, lambda: product(a, np.conj(product(1 - b, b, False)), False),
                     lambda: product(a, np.conj(product(1 - b, b, True)), True))

    return binary("sigmoid_backward_cpu", FLOAT_HC, ops, fn)


@kernel("tanh_backward")
def tanh_backward(grad_output, output):
    ops = (grad_output, output)

    def fn(dt, a, b):
        if a.dtype.kind != "c":
            # 1 - b * b, one fused (negated) multiply-add: a NaN b comes through unnegated
            return a * np.where(b != b, b, fma(-b, b, b.dtype.type(1)))
        mask = simd_lanes(ops, a.dtype.itemsize)
        return blend(mask, lambda: product(a, np.conj(1 - product(b, b, False)), False),
                     lambda: product(a, np.conj(1 - product(b, b, True)), True))

    return binary("tanh_backward_cpu", FLOAT_HC, ops, fn)


# ---- silu: dy * s * (1 + x * (1 - s)), s = 1 / (1 + exp(-x)) -------------------------------------
@kernel("silu_backward")
def silu_backward(grad_output, self):
    ops = (grad_output, self)

    def fn(dt, dy, x):
        run = run_positions(ops, dt.itemsize)
        mask = None if run is None else run[2]
        if x.dtype.kind != "c":
            t = x.dtype.type
            nx = np.negative(x)
            e = loop_exp(nx, mask)
            if np.isnan(x).any():
                e = np.where(x != x, nx, e)  # exp passes a NaN on, sign and all
            s = t(1) / (t(1) + e)
            r = fma(t(1) - s, x, t(1)) * (dy * s)
            return nan_values(r, *_silu_nans(dt, run, dy, x))
        # exp is c10's (glibc's cexp) in both loops, as numpy's; only the products differ
        one = x.dtype.type(1)
        s = quotient(np.ones_like(x), one + np.exp(-x))

        def go(fused):
            return product(product(dy, s, fused), one + product(x, one - s, fused), fused)

        return blend(mask, lambda: go(False), lambda: go(True))

    # (a complex result's NaN may carry another sign bit than c10's arithmetic leaves it)
    return binary("silu_backward_cpu", FLOAT_HC, ops, fn)


def _silu_nans(dt, run, dy, x):
    """Which NaN silu_backward's compiled loops keep, first to last (``nan_values``): FMA builds
    keep -x's, then dy's; DEFAULT keeps -x's, then the invalid x = inf * 0's, then dy's --
    except float16's vectorized loop, which keeps x's in the first and last quarter of every 16
    elements (the order its compiled instructions take their operands)."""
    if cpu_capability.CONTRACTS_FMA:
        return [(x != x, -x), (dy != dy, dy)]
    own = -x
    if dt is F16 and run is not None:
        pos, cut, _ = run
        quarter = pos % 16 // 4
        own = np.where((pos < cut) & ((quarter == 0) | (quarter == 3)), x, own)
    return [(x != x, own), (x == np.inf, _DEFAULT_NAN[x.dtype.type]), (dy != dy, dy)]


_DEFAULT_NAN = {np.float32: np.array(0xFFC00000, np.uint32).view(np.float32)[()],
                np.float64: np.array(0xFFF8000000000000, np.uint64).view(np.float64)[()]}


def nan_values(r, *rules):
    """``r`` with each NaN as upstream's compiled loop leaves it. x86 passes on the first NaN
    operand of an instruction (in whichever order the compiler put them) and makes an invalid
    operation's NaN negative: ``rules`` are (where, value) pairs in the order the loop's NaNs
    win, the default NaN after them."""
    nan = r != r
    if not nan.any():
        return r
    v = np.broadcast_to(_DEFAULT_NAN[r.dtype.type], r.shape)
    for where, value in reversed(rules):
        v = np.where(where, value, v)
    r = np.array(r, copy=True) if not isinstance(r, np.ndarray) else r
    np.copyto(r, v, where=nan)
    return r



# ---- hardtanh: grad where min < x < max, else 0 -------------------------------------------------
@kernel("hardtanh_backward")
def hardtanh_backward(grad_output, self, min_val, max_val):
    ops = (grad_output, self)

    def fn(dt, g, x):
        lo, hi = scalar_of(min_val, dt), scalar_of(max_val, dt)
        keep = (x > lo) & (x < hi)
        # a NaN x: the SIMD loop masks it out, the scalar loop (x <= min || x >= max) keeps grad
        nan = x != x
        if nan.any():
            mask = compiled_lanes(ops, dt.itemsize)
            keep = keep | (nan if mask is None else nan & ~mask)
        return np.where(keep, g, g.dtype.type(0))

    out = binary("hardshrink_backward_cpu", FLOAT_H, ops, fn, computed=False, stored=(0,))
    if out._dtype in REDUCED:
        round_trip_nans(out, ops)
    return out


def compiled_lanes(ops, itemsize: int):
    """``simd_lanes``, widened to where an AVX512 build's compiler vectorized the scalar loop
    too: its remainder's whole vectors along a vectorizable run (measured: a NaN there takes
    the SIMD comparison's side)."""
    if not _AUTOVEC:
        return simd_lanes(ops, itemsize)
    run = run_positions(ops, itemsize, VEC_BYTES // itemsize)
    return None if run is None else run[2]


_AUTOVEC = cpu_capability.CAPABILITY == cpu_capability.AVX512


def round_trip_nans(out, ops) -> None:
    """A float16/bfloat16 result's NaNs where its SIMD loop took grad through float and back:
    bfloat16's vector converter stores 0xFFFF, float16's (F16C) keeps sign and payload, quieted;
    DEFAULT's element-wise c10 converters store 0x7FC0 and sign | 0x7E00. The scalar loop passes
    grad's bits on (an AVX512 build's compiler-vectorized remainder converts as the SIMD loop)."""
    a = out._np
    mask = compiled_lanes(ops, 2)
    if a is None or not a.size or mask is None:
        return
    bits = a.view(np.uint16)
    nans = mask & ((bits & np.uint16(0x7FFF)) > np.uint16(0x7F80 if out._dtype is BF16
                                                            else 0x7C00))
    if not nans.any():
        return
    default = cpu_capability.CAPABILITY == cpu_capability.DEFAULT
    if out._dtype is BF16:
        v = BF16_SCALAR_NAN if default else BF16_VECTOR_NAN
    else:
        v = (bits & np.uint16(0x8000)) | np.uint16(0x7E00) if default else bits | np.uint16(0x200)
    bits[...] = np.where(nans, v, bits)


# ---- elu: grad * scale where x > 0, else grad * input_scale * alpha * scale * exp(x * input_scale)
# (or, from the result y, grad * input_scale * (y + alpha * scale))
@kernel("elu_backward")
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    if is_result and float(checked(alpha, D.BY_NAME["float64"])) < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead.")
    ops = (grad_output, self_or_result)

    def fn(dt, a, b):
        neg = scalar_of(alpha, dt) * scalar_of(scale, dt)
        pos, ipt = scalar_of(scale, dt), scalar_of(input_scale, dt)
        mask = simd_lanes(ops, dt.itemsize)
        b = np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape))
        if is_result:
            low = a * ipt * (b + neg)
        else:
            low = a * ipt * neg * loop_exp(np.array(b * ipt), mask)
        # a NaN x: the SIMD loop blends on x > 0 (the low side), the scalar loop on x <= 0
        return blend(mask, lambda: np.where(b > 0, a * pos, low),
                     lambda: np.where(b <= 0, low, a * pos))

    return binary("elu_backward_cpu", FLOAT_H, ops, fn)
