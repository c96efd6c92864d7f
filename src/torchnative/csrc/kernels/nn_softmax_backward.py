"""_log_softmax_backward_data as a kernel: ``grad - exp(output) * grad.sum(dim, keepdim=True)``,
computed in the inputs' opmath dtype and cast to ``input_dtype``, exactly as the decomposition it
replaces (upstream's torch/_decomp) computes it, but calling the exp, sum, mul, sub and cast
kernels directly instead of going through the door for each (a fifth of a small MLP's backward).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import from_result
from ..ops.kernel_registry import KERNELS, kernel
from .pointwise_math import exact
from .reduction import dense_sum_plan
from .support.common import result_type

_F32 = D.BY_NAME["float32"]
_C64 = D.BY_NAME["complex64"]
_exp, _mul, _sub = np.exp, np.multiply, np.subtract


def computation_dtype(*tensors):
    """elementwise_dtypes(..., DEFAULT)'s computation dtype: the promoted dtype, with float16
    and bfloat16 (and complex32) computed in their opmath type."""
    dt = result_type(*tensors)
    if dt in D.REDUCED_FLOATING:
        return _F32
    if dt is D.BY_NAME.get("complex32"):
        return _C64
    return dt


def to_dtype(t, dt):
    """``t.to(dt)``: ``t`` itself when it has that dtype already, else the casting copy."""
    return t if t._dtype is dt else KERNELS["_to_copy"](t, dtype=dt)


_NATIVE = frozenset((_F32, D.BY_NAME["float64"]))


def _dense_lane(grad_output, output, dim, input_dtype):
    """The steps below on the arrays themselves, when both operands are C-contiguous arrays of
    one float32/float64 dtype and shape and the result keeps it: the sum kernel's own plan, the
    exp kernel's once-rounded exp, numpy's product and difference in that dtype (the bits of the
    kernels they stand for). None otherwise."""
    dt = grad_output._dtype
    if dt not in _NATIVE or output._dtype is not dt or input_dtype is not dt or \
            output._math_bits or output._size != grad_output._size or not output._size:
        return None
    g, o = grad_output._np, output._np
    if g is None or o is None or not (g.size and o.flags.c_contiguous):
        return None
    total = dense_sum_plan(grad_output, [dim], True)
    if total is None:
        return None
    r = _mul(exact(_exp, o), total(g))   # (the door's quiet float state)
    _sub(g, r, r)
    return from_result(r, dt)


@kernel("_log_softmax_backward_data")
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    fast = _dense_lane(grad_output, output, dim, input_dtype)
    if fast is not None:
        return fast
    comp = computation_dtype(grad_output, output)
    grad, out = to_dtype(grad_output, comp), to_dtype(output, comp)
    total = KERNELS["sum.dim_IntList"](grad, [dim], True)
    grad_input = KERNELS["sub.Tensor"](grad, KERNELS["mul.Tensor"](KERNELS["exp"](out), total))
    return to_dtype(grad_input, input_dtype)
