"""native_dropout_backward (Dropout.cpp): ``grad * mask * scale``, two multiplications with
upstream's type promotion (a bool mask takes grad's dtype; a floating mask may widen it, as a
float64 mask does a bfloat16 grad) and the scale a wrapped double. It is what NativeDropoutBackward0
calls; F.dropout on a CPU tensor takes the non-fused path (input * bernoulli mask), whose gradient
is a multiplication."""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import from_result
from ..ops.kernel_registry import kernel
from .nn_loss_grads import vector_loop_nans
from .pointwise_binary import mul

_DENSE = frozenset((D.BY_NAME["float32"], D.BY_NAME["float64"]))
_BOOL = D.BY_NAME["bool"]


@kernel("native_dropout_backward")
def native_dropout_backward(grad_output, mask, scale):
    g, m = grad_output._np, mask._np
    dt = grad_output._dtype
    if dt in _DENSE and mask._dtype is _BOOL and g is not None and m is not None and g.ndim and \
            g.shape == m.shape and g.flags.c_contiguous and m.flags.c_contiguous:
        # the common case: each grad times 1 or 0 (-0 and NaN as the product gives them), then
        # the scale rounded to grad's dtype, in the mul kernel's own numpy products
        r = np.multiply(g, m, dtype=g.dtype)
        np.multiply(r, g.dtype.type(scale), out=r)
        return from_result(r, dt)
    return vector_loop_nans(mul(mul(grad_output, mask), scale))
