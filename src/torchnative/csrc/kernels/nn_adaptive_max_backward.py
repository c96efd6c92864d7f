"""The adaptive max pools' backward kernels (AdaptiveMaxPooling2d.cpp / 3d.cpp,
AdaptiveMaxPoolKernel.cpp): adaptive_max_pool2d_backward and adaptive_max_pool3d_backward.

The gradient is zero except where the forward took its maxima: each output's gradient is added
at its index (a position in its plane), the outputs of a plane in order, so overlapping windows
sum in upstream's order. Contiguous and channels-last loops visit every input element's
contributions in that same order; float16/bfloat16 round after each addition (``scalar_t +=``).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.cast import cast_array
from ..ops.kernel_registry import kernel
from .nn_pool import _FLOATS, _output, _suggest_cl
from .support.common import arr, as_compute, int_list, wrap
from .support.nn_util import not_implemented, typemeta

_F32 = D.BY_NAME["float32"]
_INT64 = D.BY_NAME["int64"]


def window_grads(grad_output, indices, shape, spatial: int, dt) -> np.ndarray:
    """The input gradient (an array of ``shape``, in the compute dtype): ``grad_output`` added
    at ``indices`` plane by plane (the last ``spatial`` dims form a plane)."""
    if indices._dtype is not _INT64:  # the kernel reads them as int64_t
        raise RuntimeError(f"expected scalar type Long but found {indices._dtype._cpp_name}")
    lead = tuple(shape[:-spatial])
    planes = int(np.prod(lead)) if lead else 1
    plane = int(np.prod(shape[-spatial:]))
    go = as_compute(grad_output, dt).reshape(planes, -1)
    idx = arr(indices).reshape(planes, -1)
    grad = np.zeros((planes, plane), go.dtype)
    if go.dtype == D.numpy_dtype(dt):
        rows = np.broadcast_to(np.arange(planes)[:, None], idx.shape)
        np.add.at(grad, (rows, idx), go)   # sequential: each target's additions in order
    else:  # float16/bfloat16: every += rounds to the dtype, in output order
        rows = np.arange(planes)
        for o in range(idx.shape[1]):
            acc = grad[rows, idx[:, o]] + go[:, o]
            grad[rows, idx[:, o]] = cast_array(cast_array(acc, _F32, dt), dt, _F32)
    return grad.reshape(shape)


@kernel("adaptive_max_pool2d_backward")
def adaptive_max_pool2d_backward(grad_output, self, indices):
    size = grad_output._size
    if len(size) not in (3, 4):
        raise RuntimeError("adaptive_max_pooling2d_backward(): Expected 3D or 4D grad_output, "
                           f"but got: {int_list(size)}")
    for i in range(1, len(size)):
        if size[i] <= 0:
            raise RuntimeError("adaptive_max_pool2d_backward(): Expected grad_output to have "
                               "non-zero size for non-batch dimensions, but grad_output has sizes "
                               f"{int_list(size)} with dimension {i} being empty")
    if len(self._size) != len(indices._size):
        raise RuntimeError(f"expected dimensions {len(self._size)} for `indices` but got "
                           f"dimensions {len(indices._size)}")
    dt = self._dtype
    if grad_output._dtype is not dt:
        raise RuntimeError(f"expected dtype {typemeta(dt)} for `grad_output` but got dtype "
                           f"{typemeta(grad_output._dtype)}")
    if indices._size != size:
        raise RuntimeError(f"expected sizes {int_list(indices._size)} for `grad_output` but got "
                           f"sizes {int_list(size)}")
    cl = _suggest_cl(self)  # the meta's layout for grad_input, whose layout picks the loop
    if dt not in _FLOATS:
        raise not_implemented("adaptive_max_pool2d_backward" + ("_channels_last" if cl else ""),
                              dt)
    grad = window_grads(grad_output, indices, tuple(self._size), 2, dt)
    return _output(self, grad, dt, cl)


@kernel("adaptive_max_pool3d_backward")
def adaptive_max_pool3d_backward(grad_output, self, indices):
    dt = grad_output._dtype
    return wrap(window_grads(grad_output, indices, tuple(self.shape), 3, dt), dt)
