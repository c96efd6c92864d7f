"""max_pool2d_with_indices_backward as a kernel: the computation of upstream's decomposition it
replaces (torch/_decomp: zeros, a scatter_add of the gradient at the saved indices per channel,
the input's memory format), in numpy without its door calls (it was an eighth of a small CNN's
backward), so its bits, layout and index errors are the decomposition's.

Each channel's gradients are added at their indices one after another in output order (numpy's
``add.at`` is sequential, as the scatter kernel), float16/bfloat16 accumulated in float32 and
rounded once. Arguments outside the shapes the decomposition was written for (a rank other than
3 or 4, sizes that do not reshape, non-int64 or non-float operands, deterministic mode, where
the decomposition declines) still go through the decomposition itself.
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import numel_of
from ..core import dtypes as D
from ..core.determinism import STATE
from ..core.layouts import is_channels_last_strides
from ..ops.kernel_registry import kernel
from .indexing import _check_bounds
from .nn_softmax_backward import to_dtype
from .support.common import arr, wrap
from .support.nn_util import typemeta

_FLOAT = frozenset(D.BY_NAME[n] for n in ("float16", "bfloat16", "float32", "float64"))
_INT64 = D.BY_NAME["int64"]
_F32 = D.BY_NAME["float32"]
_DECOMPOSED: list = []


def _decomposition(*args):
    if not _DECOMPOSED:
        from ..dispatch.door import _decomposition as find, _guarded_decomposition
        from ..ops.dispatcher import REGISTRY

        op = REGISTRY.find("aten::max_pool2d_with_indices_backward", "")
        _DECOMPOSED.append(_guarded_decomposition(op, find(op)))
    return _DECOMPOSED[0](*args)


def _common_case(grad_output, self, indices) -> bool:
    if len(self._size) not in (3, 4) or len(grad_output._size) != len(self._size) or \
            grad_output._dtype not in _FLOAT or indices._dtype is not _INT64:
        return False
    lead = self._size[:-2]
    return grad_output._size[:-2] == lead and indices._size == grad_output._size and \
        numel_of(self) > 0 and not STATE["enabled"]


@kernel("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    if grad_output._dtype is not self._dtype:  # upstream's native kernel checks; scatter_add did not
        raise RuntimeError(f"expected dtype {typemeta(self._dtype)} for `gradOutput` but got "
                           f"dtype {typemeta(grad_output._dtype)}")
    if not _common_case(grad_output, self, indices):
        return _decomposition(grad_output, self, kernel_size, stride, padding, dilation,
                              ceil_mode, indices)
    h, w = self._size[-2:]
    dt = grad_output._dtype
    acc = _F32 if dt in D.REDUCED_FLOATING else dt
    g = arr(grad_output)
    if g.dtype != D.numpy_dtype(acc):
        g = arr(to_dtype(grad_output, acc))
    rows = numel_of(self) // (h * w)
    idx = arr(indices).reshape(rows, -1)
    _check_bounds(idx, h * w, 1)
    key = (idx + (np.arange(rows, dtype=np.int64) * (h * w))[:, None]).reshape(-1)
    out = np.zeros(rows * h * w, D.numpy_dtype(acc))
    np.add.at(out, key, g.reshape(-1))
    out = out.reshape(self._size)
    # the decomposition's contiguous(memory_format=suggest_memory_format(input as 4-d))
    size, stride_ = tuple(self._size), tuple(self._stride)
    if len(size) == 3:
        size, stride_ = (1,) + size, (size[0] * stride_[0],) + stride_
    if is_channels_last_strides(size, stride_):
        out = np.ascontiguousarray(np.moveaxis(out, -3, -1)) if out.ndim == 3 else \
            np.ascontiguousarray(out.transpose(0, 2, 3, 1))
        out = np.moveaxis(out, -1, -3)
    result = wrap(out, acc)
    return to_dtype(result, dt) if acc is not dt else result
