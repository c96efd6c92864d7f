"""What kernels share: numpy views of tensors, wrapping numpy results as tensors, upstream's
type promotion for operator arguments, and the compute ("opmath") dtype.

Upstream computes float16/bfloat16 arithmetic in float32 and rounds once at the end; ``opmath``
gives that compute dtype, and ``wrap`` rounds a float32 result into the tensor's dtype with
upstream's rounding (cast.cast_array).
"""

from __future__ import annotations

import numbers

import numpy as np

from ...core import dtypes as D
from ...core.cast import cast_array, readable
from ...core.construct import from_dense_result, from_result, scalar_tensor, tensor_from_numpy
from ...core.promotion import SCALAR, TENSOR, ZERODIM, result_type_of
from ...core.refuse import TorchnativeNotImplementedError
from ...core.tensor import TensorBase

BOOL = D.BY_NAME["bool"]
INT64 = D.BY_NAME["int64"]
FLOAT32 = D.BY_NAME["float32"]
FLOAT64 = D.BY_NAME["float64"]
COMPLEX32 = D.BY_NAME["complex32"]
_F32_NP = np.dtype(np.float32)
_C64_NP = np.dtype(np.complex64)


def int_list(sizes) -> str:
    """An IntArrayRef as c10 prints it in a message: ``[2, 3]``."""
    return "[" + ", ".join(str(int(n)) for n in sizes) + "]"


def arr(t: TensorBase) -> np.ndarray:
    """The numpy array a cpu tensor reads and writes (refuses meta tensors by name)."""
    a = t._np
    if a is None:
        raise TorchnativeNotImplementedError(
            f"this operator on a '{t.device.type}' tensor",
            "its kernel computes values, and the tensor has none")
    return a


def opmath(dt: D.dtype) -> np.dtype:
    """The numpy dtype upstream computes ``dt`` in (float16/bfloat16/float8 -> float32,
    complex32 -> complex64)."""
    if dt in D.REDUCED_FLOATING or (dt.is_floating_point and dt.itemsize == 1):
        return _F32_NP
    if dt is COMPLEX32:
        return _C64_NP
    return D.numpy_dtype(dt)


def as_compute(t: TensorBase, dt: D.dtype) -> np.ndarray:
    """``t``'s values converted (as upstream's casts do) to ``dt``'s compute dtype."""
    a = arr(t)
    if t.dtype == dt:
        target = opmath(dt)
        return a if a.dtype == target else readable(a, dt).astype(target, copy=False)
    converted = readable(cast_array(a, t.dtype, dt), dt)
    target = opmath(dt)
    return converted if converted.dtype == target else converted.astype(target)


def wrap(result: np.ndarray, dt: D.dtype) -> TensorBase:
    """A new cpu tensor of dtype ``dt`` holding ``result`` (computed in opmath(dt) or dt).

    The result array becomes the storage when it already has ``dt``'s storage type, so no copy
    is made; its layout (numpy keeps the inputs' memory order) is kept, as TensorIterator does.
    """
    npdt = D.numpy_dtype(dt)
    if result.dtype != npdt:
        src = D.dtype_from_numpy(result.dtype) or dt
        result = cast_array(result, src, dt) if src != dt else result.astype(npdt)
    if not isinstance(result, np.ndarray):
        result = np.asarray(result, dtype=npdt)
    if result.flags.c_contiguous:
        return from_result(result, dt)
    t = from_dense_result(result, dt)
    return tensor_from_numpy(result) if t is None else t


def operand_kind(x):
    """(kind, dtype-or-python-type) for upstream's result_type rules."""
    if isinstance(x, TensorBase):
        if x._wrapped:
            return SCALAR, x._dtype
        return (TENSOR if x._size else ZERODIM), x._dtype
    if isinstance(x, bool):
        return SCALAR, bool
    if isinstance(x, numbers.Integral):
        return SCALAR, int
    if isinstance(x, numbers.Real):
        return SCALAR, float
    if isinstance(x, numbers.Complex):
        return SCALAR, complex
    raise TypeError(f"unexpected operand {type(x).__name__}")


def result_type(*operands) -> D.dtype:
    """The dtype upstream's TensorIterator computes for these tensors and Python numbers."""
    return result_type_of(operand_kind(x) for x in operands if x is not None)


def scalar(value, dt: D.dtype) -> TensorBase:
    return scalar_tensor(value, dt)
