"""hardshrink, softshrink and their backward (one shrink_backward loop) as upstream's CPU kernels
compute them (cpu/Activation.cpp): TensorIterator unary/binary ops, so the backward promotes grad
and input to a common dtype; softshrink's meta function checks lambd against the dtype's range.

No arithmetic but softshrink's ``x -/+ lambd`` (float for float16/bfloat16, rounded once). Where
upstream's loops differ (``compiled_lanes`` says which loop took each element), measured on every
capability: shrink_backward's SIMD loop keeps grad where x < -lambd or x > lambd (a NaN x never),
its scalar loop zeroes where -lambd <= x <= lambd (a NaN x never); softshrink's dead zone is +0
from the SIMD loop and ``x * 0`` (signed; a NaN passed on) from the scalar loop.
"""

from __future__ import annotations

import numpy as np

from ..core.cast import scalar_nans
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .nn_activation_grads import binary, compiled_lanes, scalar_of
from .pointwise_base import BF16, FLOAT_H, check, checked


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def pick(m, a, b):
    """``np.where(m, a, b)`` for numeric ``a``/``b`` of one itemsize (arrays or scalars), as
    the SIMD loops' blend does it: bit masks, several times faster than np.where on a mask
    without long runs. Bits pass unchanged (signed zeros, NaN payloads)."""
    a, b = np.asarray(a), np.asarray(b)
    dt = b.dtype if b.ndim else a.dtype
    u = _UINT[dt.itemsize]
    ones = np.negative(np.asarray(m).astype(u))   # all bits set where m
    r = np.bitwise_and(a.astype(dt, copy=False).view(u), ones)
    r |= np.bitwise_and(b.astype(dt, copy=False).view(u), ~ones)
    return r.view(dt)


def stored_nans(t, ops):
    """``t`` (a loop's new result) with its bfloat16 NaNs as the loop that converted each one
    stored it: 0xFFFF in the SIMD lanes (``compiled_lanes``), c10's 0x7FC0 elsewhere and
    everywhere in the DEFAULT build."""
    if t._dtype is BF16 and t._np is not None and t._np.size:
        scalar_nans(t._np, None if _DEFAULT else compiled_lanes(ops, 2))
    return t


_DEFAULT = cpu_capability.CAPABILITY == cpu_capability.DEFAULT


@kernel("hardshrink")
def hardshrink(self, lambd=0.5):
    def fn(dt, bits, x):
        lam = checked(lambd, dt)   # Scalar.to<scalar_t>(): float16/bfloat16 round it
        return pick(np.abs(x) <= lam, bits.dtype.type(0), bits)   # a NaN is kept

    # the input twice: its own bits to pass on, its values (in float) to compare
    return binary("hardshrink_cpu", FLOAT_H, (self, self), fn, computed=False, stored=(0,))


_MAX = {"float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308,
        "float16": 65504.0, "bfloat16": 3.3895313892515355e38}


@kernel("softshrink")
def softshrink(self, lambd=0.5):
    dt = self._dtype
    check("softshrink_check", dt, FLOAT_H)   # the meta function's range check, per dtype
    lam, top = float(lambd), _MAX[dt._name]
    if not 0 <= lam <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{dt._cpp_name}, but found {lam:g}")
    ops = (self,)

    def fn(dt, x):
        lam = scalar_of(lambd, dt)   # float for float16/bfloat16: x -/+ lambd rounds once
        # x - lambd, x + lambd, and in the dead zone x - x: +0 as the SIMD loop stores it, a
        # NaN passed on; the scalar loop's dead zone is x * 0 (-0 for a negative x)
        r = x - np.clip(x, -lam, lam)
        mask = compiled_lanes(ops, dt.itemsize)
        tail = None if mask is not None and mask.all() else \
            (np.abs(x) <= lam) if mask is None else (np.abs(x) <= lam) & ~mask
        if tail is not None and tail.any():
            r = pick(tail, x * x.dtype.type(0), r)
        return r

    return stored_nans(binary("softshrink_cpu", FLOAT_H, ops, fn, computed=False), ops)


def _shrink_backward(grad_out, self, lambd):
    ops = (grad_out, self)

    def fn(dt, g, x):
        lam = checked(lambd, dt)
        keep = np.abs(x) > lam
        nan = x != x
        if nan.any():   # the scalar loop keeps grad at a NaN x (see the module's note)
            mask = compiled_lanes(ops, dt.itemsize)
            keep = keep | (nan if mask is None else nan & ~mask)
        return pick(keep, g, g.dtype.type(0))

    return binary("shrink_backward_cpu", FLOAT_H, ops, fn, computed=False, stored=(0,))


@kernel("hardshrink_backward")
def hardshrink_backward(grad_out, self, lambd):
    return _shrink_backward(grad_out, self, lambd)


@kernel("softshrink_backward")
def softshrink_backward(grad_output, self, lambd):
    return _shrink_backward(grad_output, self, lambd)
