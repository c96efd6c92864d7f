"""What the matmul and neural-network kernels share: upstream's names for dtypes in messages,
checked Scalar conversion, dispatch-type refusals and layout queries."""

from __future__ import annotations

import numpy as np

from ...platform.cpp_names import scalar_cpp, typemeta as _typemeta
from ...core import dtypes as D
from ...core.tensor import TensorBase
from ...dispatch.call import call



def typemeta(dt: D.dtype) -> str:
    return _typemeta(dt._name, dt._cpp_name)


def scalar_name(dt: D.dtype) -> str:
    """c10's ScalarType name ('Float', 'Long', 'ComplexFloat', ...)."""
    return dt._cpp_name


def not_implemented(kernel_name: str, dt: D.dtype) -> NotImplementedError:
    """What AT_DISPATCH raises for a dtype outside the kernel's list."""
    return NotImplementedError(f"\"{kernel_name}\" not implemented for '{dt._cpp_name}'")


_F32, _F64 = D.BY_NAME["float32"], D.BY_NAME["float64"]
_BOOL = D.BY_NAME["bool"]
_INT_RANGE = {"int64": (-(1 << 63), (1 << 63) - 1), "int32": (-(1 << 31), (1 << 31) - 1),
              "int16": (-(1 << 15), (1 << 15) - 1), "int8": (-128, 127), "uint8": (0, 255)}


def opmath_dtype(dt: D.dtype) -> D.dtype:
    """at::opmath_type: float for float16/bfloat16/float8, else the dtype itself."""
    if dt in D.REDUCED_FLOATING or dt in D.FLOAT8:
        return _F32
    return dt


def scalar_to(value, dt: D.dtype):
    """``Scalar::to<T>()`` for T = dt's C++ type: c10::checked_convert (overflow and a complex
    value with an imaginary part are errors; float -> int truncates)."""
    name = dt._name
    overflow = RuntimeError(f"value cannot be converted to type {scalar_cpp(name)} "
                            "without overflow")
    if isinstance(value, TensorBase):
        value = value.item()
    if dt.is_complex:
        return complex(value)
    if isinstance(value, complex):
        if value.imag != 0:
            raise overflow
        value = value.real
    if name == "bool":
        return bool(value)
    if dt.is_floating_point:
        v = float(value)
        if name == "float32" and np.isfinite(v) and abs(v) > float(np.finfo(np.float32).max):
            raise overflow
        return v
    lo, hi = _INT_RANGE[name]
    if isinstance(value, float):
        if not np.isfinite(value) or value <= lo - 1 or value >= hi + 1:
            raise overflow
        return int(value)
    v = int(value)
    if v < lo or v > hi:
        raise overflow
    return v


def fma(a, b, c) -> np.ndarray:
    """a * b + c rounded once, as upstream's CPU kernels compute it (GCC contracts these
    expressions into FMA instructions). float32: the float64 product is exact and the sum rounds
    to float64 first (a double rounding that differs from a true FMA only at exact float32
    ties); float64 operands are computed unfused (one extra rounding of the product)."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if a.dtype == np.float32:
        out = a.astype(np.float64) * b.astype(np.float64)
        out += c
        return out.astype(np.float32)
    return a * b + c


# ---- calling operators through the door -------------------------------------------------------

def subclass_like(*tensors) -> bool:
    """at::isTensorSubclassLike: a dispatch mode is active or a tensor has the Python key."""
    from ...dispatch import python_dispatch as pd

    if pd.TLS.disabled:
        return False
    if pd.TLS.stack or pd.TLS.infra:
        return True
    return any(isinstance(t, TensorBase) and pd._overrides(t) for t in tensors)


def is_channels_last(t) -> bool:
    """Tensor::suggest_memory_format() == ChannelsLast / ChannelsLast3d: c10's
    is_channels_last_strides_2d/3d heuristic (ambiguous layouts default to contiguous)."""
    n = len(t._size)
    if n not in (4, 5):
        return False
    sizes, strides = t._size, t._stride
    if strides[1] == 0:
        return False
    order = (1, 3, 2, 0) if n == 4 else (1, 4, 3, 2, 0)
    low = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False
        low = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


def python_key(t) -> bool:
    """Does the tensor carry the Python dispatch key (a subclass overriding __torch_dispatch__)?"""
    from ...dispatch import python_dispatch as pd

    return pd._overrides(t)


def contiguous(t: TensorBase) -> TensorBase:
    """Tensor::contiguous(): itself if contiguous, else a clone (what upstream dispatches)."""
    if t.is_contiguous():
        return t
    from ...core.layouts import contiguous_format

    return call("clone", t, memory_format=contiguous_format)
