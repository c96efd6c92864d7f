"""hash_tensor (ReduceOps.cpp, mode 0 only): each element widened to its 64-bit kind (floats to
double, integers and bool to int64), its bits read as uint64, xor-reduced over ``dim``.

The widening is a value cast, so NaN payloads and -0.0 keep their bits as the hardware converts
them; xor has no order, so the result is exact whatever the iteration. The checks come in
upstream's order: an out= tensor's dtype first (the structured meta function), then the mode,
the dtype (AT_DISPATCH_ALL_TYPES_AND3 Half, BFloat16, Bool), and the reduced dims."""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..ops.kernel_registry import kernel
from .reduction import dim_list, reduce_axes, reduced_size
from .support.common import arr, wrap
from .support.nn_util import not_implemented

_UINT64 = D.BY_NAME["uint64"]
_ALLOWED = frozenset(D.BY_NAME[n] for n in (
    "float32", "float64", "float16", "bfloat16", "bool",
    "int8", "int16", "int32", "int64", "uint8"))


def _hash(self, dim, keepdim, mode):
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if self._dtype not in _ALLOWED:
        raise not_implemented("xor_sum_cpu", self._dtype)
    dims = dim_list(dim)
    if not dims and self.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
    axes = reduce_axes(self, dims)
    for a in axes:
        if self._size[a] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {a} to have non-zero size.")
    a = arr(self)
    wide = a.astype(np.float64 if self._dtype.is_floating_point else np.int64)
    bits = wide.view(np.uint64)
    out = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim) if axes else bits.copy()
    return wrap(np.ascontiguousarray(np.asarray(out, np.uint64)).reshape(
        reduced_size(self, axes, keepdim)), _UINT64)


@kernel("hash_tensor")
def hash_tensor(self, dim=(), keepdim=False, *, mode=0):
    return _hash(self, dim, keepdim, mode)


@kernel("hash_tensor.out")
def hash_tensor_out(self, dim=(), keepdim=False, *, mode=0, out):
    from ..dispatch.structured import resize_out, write_into

    if out._dtype is not _UINT64:
        raise RuntimeError(f"Expected result to be of dtype uint64, but got "
                           f"{out._dtype._cpp_name}")
    result = _hash(self, dim, keepdim, mode)
    resize_out(out, result._size)
    write_into(out, result)
    return out
