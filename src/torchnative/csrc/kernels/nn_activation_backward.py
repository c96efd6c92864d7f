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
from ..core.construct import empty
from ..ops.kernel_registry import kernel


@kernel("threshold_backward")
def threshold_backward(grad_output, self, threshold):
    check("threshold_cpu", dtype2(self, grad_output), ALL_H)  # upstream's kernel name in errors
    dt = result_type(grad_output, 0)
    zero = wrap(np.zeros((), D.numpy_dtype(dt)), dt)  # zero is all-zero bits in every dtype
    grad = grad_output
    if grad._dtype is not dt:
        grad = empty(grad_output._size, dt, grad_output.device)
        copy_into(grad, grad_output)
    return where(le(self, threshold), zero, grad)
