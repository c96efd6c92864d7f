"""dtype tags for the sampling functions and upstream's casts into each dtype."""

from __future__ import annotations

import functools
import math

import numpy as np

from ..platform.cpp_names import TYPEMETA

FLOATS = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}  # name -> mantissa digits
INTS = {"bool": (0, 1), "uint8": (0, 255), "int8": (-128, 127), "int16": (-(1 << 15), (1 << 15) - 1),
        "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
        "uint16": (0, (1 << 16) - 1), "uint32": (0, (1 << 32) - 1), "uint64": (0, (1 << 64) - 1)}
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
            "short": "int16", "char": "int8", "byte": "uint8"}
# how upstream's messages print a dtype (caffe2::TypeMeta names)
META_NAME = TYPEMETA
# the ScalarType names upstream's "not implemented for" errors use
SCALAR_NAME = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
               "int64": "Long", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


def name_of(dtype) -> str:
    """Canonical name for a numpy dtype, an ml_dtypes type, or a tag like 'float32'/'torch.half'."""
    if isinstance(dtype, str):
        name = dtype.removeprefix("torch.")
        name = _ALIASES.get(name, name)
    else:
        name = np.dtype(dtype).name
    if name not in FLOATS and name not in INTS:
        raise TypeError(f"unsupported dtype for the CPU generator: {dtype!r}")
    return name


def np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes  # bfloat16 storage comes from ml_dtypes, as everywhere in torchnative

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


@functools.lru_cache(maxsize=None)
def float_range(name: str) -> tuple[float, float]:
    """(lowest, max) of a floating dtype as doubles (every sampler call checks its bounds)."""
    if name == "bfloat16":
        import ml_dtypes

        info = ml_dtypes.finfo(ml_dtypes.bfloat16)
    else:
        info = np.finfo(np.dtype(name))
    return float(info.min), float(info.max)


def from_float32(x: np.ndarray, name: str) -> np.ndarray:
    """float -> scalar_t: one round-to-nearest-even (c10::Half(float), c10::BFloat16(float));
    float32 itself is returned as it is."""
    return x.astype(np_dtype(name), copy=False)


def from_double(x: np.ndarray, name: str) -> np.ndarray:
    """``static_cast<scalar_t>(double)``. Half and BFloat16 only construct from float, so the
    double is rounded to float first (two roundings, as upstream); integers truncate."""
    if name == "float64":
        return x.astype(np.float64)
    if name in FLOATS:
        return x.astype(np.float32).astype(np_dtype(name))
    if name == "bool":
        return x != 0
    with np.errstate(invalid="ignore"):
        return x.astype(np.int64).astype(np_dtype(name))


def from_int64(x: np.ndarray, name: str) -> np.ndarray:
    """``static_cast<scalar_t>(int64_t)``: rounds to nearest for floats (via float for 16-bit
    floats), wraps for narrower integers, ``!= 0`` for bool."""
    if name in ("float16", "bfloat16"):
        return x.astype(np.float32).astype(np_dtype(name))
    if name == "bool":
        return x != 0
    return x.astype(np_dtype(name))


def scalar_to(value: float, name: str) -> float:
    """One Python number cast like ``static_cast<scalar_t>(double)``, back as a Python float."""
    if type(value) is float:  # a sampler's bounds on every call: remembered, -0.0 apart from 0.0
        return _float_to(value, name, math.copysign(1.0, value))
    return _cast(value, name)


def _cast(value, name: str) -> float:
    return float(from_double(np.array([value], np.float64), name)[0])


@functools.lru_cache(maxsize=256)
def _float_to(value: float, name: str, sign: float) -> float:
    return _cast(value, name)
