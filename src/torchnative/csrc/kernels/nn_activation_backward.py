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
from ..core.construct import empty, from_result
from ..ops.kernel_registry import kernel


# the float dtypes of the dense lane: their zero, and the integer type of their bits
_DENSE = {D.BY_NAME["float32"]: (np.float32(0), np.int32),
          D.BY_NAME["float64"]: (np.float64(0), np.int64)}


def _relu_lane(grad_output, self, threshold):
    """ReLU's gradient on two C-contiguous arrays of one float dtype and shape: the composition
    gives ``grad`` where ``self > 0`` or NaN and +0.0 (all-zero bits) elsewhere, in the layout of
    its C-contiguous operands. That is ``grad``'s bits ANDed with an all-ones or all-zero mask
    per element (``np.where`` on a random mask is three times slower)."""
    if type(threshold) not in (int, float) or threshold != 0:
        return None
    dt = grad_output._dtype
    lane = _DENSE.get(dt)
    if lane is None or self._dtype is not dt or self._size != grad_output._size:
        return None
    g, s = grad_output._np, self._np
    if g is None or s is None or not g.ndim or \
            not (g.flags.c_contiguous and s.flags.c_contiguous):
        return None
    zero, bits = lane
    keep = np.subtract(np.less_equal(s, zero).view(np.uint8), 1, dtype=bits)  # 0 or all ones
    return from_result(np.bitwise_and(g.view(bits), keep, out=keep).view(g.dtype), dt)


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
