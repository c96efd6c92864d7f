"""What the torch.special kernels share: Cephes' polynomial and Chebyshev-series evaluators over
numpy arrays, and the registration of a unary float op computed in double precision.

Math.h evaluates float32 inputs in float (and a few functions, zeta among them, in double);
here every element is evaluated in double precision with upstream's coefficients and branches
and rounded once, so float64 results are upstream's own arithmetic and float32 results are at
least as close to upstream's float64 rerun as upstream's single-precision result. Upstream's
build contracts ``a * b + c`` (and ``a * b - c``) into fused multiply-adds; ``fma`` below does
the same where its C++ expression has that shape, so float64 results match it to the bit.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..ops.kernel_registry import kernel
from ..random.fpmath import contracted64
from .pointwise_base import FLOAT_H, FLOATING, check, finish, operand, quiet
from .pointwise_unary import float_dtype

F64 = np.dtype(np.float64)
_FLOAT32 = D.BY_NAME["float32"]


def fma(a, b, c):
    """``a * b + c`` as upstream's compiled float64 code computes it (one rounding)."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
    r = np.asarray(contracted64(a, b, c)).reshape(shape)
    # an exact zero takes its sign from IEEE's rules for a * b + c, which the emulation loses
    return np.where(r == 0, np.multiply(a, b) + c, r)


def polevl(x, coef):
    """sum coef[i] x^(N-i), Horner's scheme from the leading coefficient."""
    acc = np.zeros_like(x)
    for c in coef:
        acc = fma(acc, x, c)
    return acc


def chbevl(x, coef):
    """Cephes' Chebyshev series: 0.5 (b0 - b2) of the Clenshaw recurrence."""
    b0 = np.full_like(x, coef[0])
    b1 = np.zeros_like(x)
    b2 = np.zeros_like(x)
    for c in coef[1:]:
        b2 = b1
        b1 = b0
        b0 = fma(x, b1, -b2) + c
    return 0.5 * (b0 - b2)


def unary(name: str, fn, lowp: bool = False, kernel_name: str | None = None, fn32=None):
    """Registers ``name`` as ``fn`` over float64 values; integer inputs give the default float
    dtype; float16/bfloat16 are refused unless upstream dispatches them (``lowp``). ``fn32``,
    where given, computes float32 results in float32 arithmetic as upstream's float kernel."""
    allowed = FLOAT_H if lowp else FLOATING
    label = kernel_name or f"{name.removeprefix('special_')}_cpu"

    @kernel(name)
    def compute(self):
        dt = float_dtype(self)
        check(label, dt, allowed)
        if fn32 is not None and dt is _FLOAT32:
            with quiet():
                r = fn32(np.asarray(operand(self, dt, np.dtype(np.float32)), np.float32))
            return finish(np.asarray(r, np.float32), dt, self)
        x = np.asarray(operand(self, dt, F64), F64)
        with quiet():
            r = fn(x)
        return finish(np.asarray(r, F64), dt, self)

    return compute


def first_dtype(*dts):
    for d in dts:
        if d is not None:
            return d
    return D.get_default_dtype()
