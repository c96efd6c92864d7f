"""Direct kernels for the hottest CompositeImplicitAutograd operators of model inference.

Upstream runs these as the operators they are made of, and so does the door whenever autograd
or Python dispatch could observe them. Otherwise nobody can tell the difference, and one numpy
call replaces several dispatches: ``linear`` is ``x @ w.T + b``, ``reshape`` a view when one
exists. Numerics are those of the composite's own kernels (the same BLAS products).
"""

from __future__ import annotations

import numpy as np

from ..core.construct import from_result
from ..platform.huge_pages import streamed
from .linalg import _gemm
from .support.common import arr
from ..ops.kernel_registry import kernel
from .views import view_as_geometry, view_geometry

_PLAIN = frozenset(("float32", "float64"))
_WIDENED = frozenset(("bfloat16", "float16"))  # products over cached float32 copies (linalg.py)


def _dense(t) -> bool:
    return t._np is not None and t._dtype._name in _PLAIN


@kernel("linear", fast=True)
def linear(input, weight, bias=None):
    # (the sizes read directly: Tensor.dim() is the public method, which asks about modes)
    if not (_dense(input) and _dense(weight) and weight._dtype is input._dtype and
            input._size and len(weight._size) == 2 and (bias is None or (
                _dense(bias) and bias._dtype is input._dtype))):
        if input._dtype._name in _WIDENED:
            from .linalg import linear_widened

            out = linear_widened(input, weight, bias)
            if out is not None:
                return out
        from .linalg import linear as composite

        return composite(input, weight, bias)
    x, w = arr(input), arr(weight)
    if x.shape[-1] != w.shape[1]:
        from .linalg import linear as composite

        return composite(input, weight, bias)
    rows = 1
    for n in x.shape[:-1]:
        rows *= n
    if rows == 1:  # a decode step's product streams the whole weight
        streamed(w)
    # one matrix product, the composite's (upstream's addmm on the flattened input; a stacked
    # matmul would partition the sum differently)
    out = _gemm(x.reshape(rows, w.shape[1]), w.T).reshape(x.shape[:-1] + (w.shape[0],))
    if bias is not None:
        out += arr(bias)
    if not out.flags.c_contiguous:
        out = np.ascontiguousarray(out)
    return from_result(out, input._dtype)


@kernel("reshape", fast=True)
def reshape(self, shape):
    shape, stride = view_geometry(self, shape)
    if stride is not None:
        return view_as_geometry(self, shape, stride)
    from .composites import reshape as composite

    return composite(self, list(shape))
