"""``add_``, ``sub_``, ``mul_`` and ``div_`` (their Tensor overloads, which Python numbers reach
as wrapped numbers): the dense lane (``inplace_lane``) computes the functional's numpy step into
``self``'s array -- numpy's ufunc, or the fused multiply-add of ``alpha``; every other case runs
the derived in-place kernel (the functional, its checks, then a copy into ``self``)."""

from __future__ import annotations

import numpy as np

from ..dispatch.structured import inplace_wrapper
from ..ops.kernel_registry import kernel
from .inplace_lane import operand, self_array, written
from .pointwise_base import checked
from .pointwise_binary import add, div, mul, sub
from .pointwise_math import fma

_ADD_ = inplace_wrapper(add, "add_.Tensor")
_SUB_ = inplace_wrapper(sub, "sub_.Tensor")
_MUL_ = inplace_wrapper(mul, "mul_.Tensor")
_DIV_ = inplace_wrapper(div, "div_.Tensor")


def _lane(self, other):
    """(self's array, other's operand) when both can take the lane, else None."""
    x = self_array(self)
    if x is None:
        return None
    y = operand(self, other)
    return None if y is None else (x, y)


def _real_alpha(alpha) -> bool:
    # a bool or complex alpha is refused (or read) by the functional's own checks
    return type(alpha) is float or type(alpha) is int


@kernel("add_.Tensor")
def add_(self, other, *, alpha=1):
    pair = _lane(self, other)
    if pair is not None:
        x, y = pair
        if type(alpha) is int and alpha == 1:
            return written(self, x, np.add, x, y)
        if _real_alpha(alpha):  # upstream's add loop: one fused multiply-add
            return written(self, x, fma, y, checked(alpha, self._dtype), x)
    return _ADD_(self, other, alpha=alpha)


@kernel("sub_.Tensor")
def sub_(self, other, *, alpha=1):
    pair = _lane(self, other)  # (bool operands, which sub refuses, are outside the lane)
    if pair is not None:
        x, y = pair
        if type(alpha) is int and alpha == 1:
            return written(self, x, np.subtract, x, y)
        if _real_alpha(alpha):  # upstream: add with -alpha
            return written(self, x, fma, y, checked(-alpha, self._dtype), x)
    return _SUB_(self, other, alpha=alpha)


def _ufunc_inplace(ufunc, derived):
    """mul_/div_: the lane's numpy ufunc into self, else the derived kernel."""
    def inplace(self, other):
        pair = _lane(self, other)
        if pair is not None:
            return written(self, pair[0], ufunc, *pair)
        return derived(self, other)

    return inplace


mul_ = kernel("mul_.Tensor")(_ufunc_inplace(np.multiply, _MUL_))
div_ = kernel("div_.Tensor")(_ufunc_inplace(np.true_divide, _DIV_))
