"""Activation backward kernels that upstream writes in C++ (Activation.cpp): threshold_backward,
relu's gradient.

threshold_backward(grad, self, t) is ``where(self <= t, 0, grad)``: composed here of the
comparison and where kernels themselves (their dtype promotion, broadcasting and layout), so
its values and errors are those of the decomposition it replaces, without the door calls.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .copy import copy_into
from .pointwise_base import ALL_H, check
from .pointwise_binary import dtype2
from .pointwise_compare import le, where
from .support.common import result_type, wrap
from .support.zero_select import zero_where
from ..core.construct import empty, from_result
from ..ops.kernel_registry import kernel


_DENSE = frozenset((D.BY_NAME["float32"], D.BY_NAME["float64"]))


def _relu_lane(grad_output, self, threshold):
    """ReLU's gradient on two C-contiguous arrays of one float dtype and shape: the composition
    gives ``grad`` where ``self > 0`` or NaN and +0.0 (all-zero bits) elsewhere, in the layout of
    its C-contiguous operands: a bit select (support/zero_select.py)."""
    if type(threshold) not in (int, float) or threshold != 0:
        return None
    dt = grad_output._dtype
    if dt not in _DENSE or self._dtype is not dt or self._size != grad_output._size:
        return None
    g, s = grad_output._np, self._np
    if g is None or s is None or not g.ndim or \
            not (g.flags.c_contiguous and s.flags.c_contiguous):
        return None
    return from_result(zero_where(np.less_equal(s, s.dtype.type(0)), g), dt)


@kernel("threshold_backward")
def threshold_backward(grad_output, self, threshold):
    fast = _relu_lane(grad_output, self, threshold)
    if fast is not None:
        return fast
    check("threshold_cpu", dtype2(self, grad_output), ALL_H)  # upstream's kernel name in errors
    dt = result_type(grad_output, 0)
    zero = wrap(np.zeros((), D.numpy_dtype(dt)), dt)  # zero is all-zero bits in every dtype
    grad = grad_output
    if grad._dtype is not dt:
        grad = empty(grad_output._size, dt, grad_output.device)
        copy_into(grad, grad_output)
    return where(le(self, threshold), zero, grad)
