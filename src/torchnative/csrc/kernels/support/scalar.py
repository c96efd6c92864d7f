"""``c10::Scalar::to<T>()``: a Python number converted to a kernel's scalar type, refusing the
values ``c10::checked_convert`` refuses (``c10::overflows``)."""

from __future__ import annotations

import numpy as np

from ...platform.cpp_names import scalar_cpp
from ...core import dtypes as D
from ...core.cast import cast_array
from ...core.tensor import TensorBase

_BOOL, _INT64 = D.BY_NAME["bool"], D.BY_NAME["int64"]
_F64, _C128 = D.BY_NAME["float64"], D.BY_NAME["complex128"]
_BFLOAT16_MAX = 3.3895313892515355e38
# the float8 types' largest finite values; only e5m2 has infinities
_FLOAT8_MAX = {D.BY_NAME["float8_e4m3fn"]: 448.0, D.BY_NAME["float8_e4m3fnuz"]: 240.0,
               D.BY_NAME["float8_e5m2"]: 57344.0, D.BY_NAME["float8_e5m2fnuz"]: 57344.0}


def overflows(value, dt) -> bool:
    """c10::overflows<T>(value): infinities and NaN pass into floating types; negative integers
    wrap into unsigned ones (two's complement, as upstream allows); a complex value with an
    imaginary part overflows any real type."""
    if isinstance(value, complex):
        if not dt.is_complex and value.imag != 0:
            return True
        value = value.real
    if dt.is_complex:
        dt = dt.to_real()
    if dt in _FLOAT8_MAX:  # c10::overflows with the type's numeric_limits
        if isinstance(value, float) and value != value:
            return False
        if dt._name == "float8_e5m2" and value in (float("inf"), -float("inf")):
            return False
        return value < -_FLOAT8_MAX[dt] or value > _FLOAT8_MAX[dt]
    if dt.is_floating_point:
        hi = _BFLOAT16_MAX if dt._name == "bfloat16" else float(np.finfo(D.numpy_dtype(dt)).max)
        if isinstance(value, float) and (value != value or value in (float("inf"), -float("inf"))):
            return False
        return value < -hi or value > hi
    info = np.iinfo(D.numpy_dtype(dt))
    if isinstance(value, float):
        return value != value or value < float(info.min) or value > float(info.max)
    if info.min == 0:
        return value > info.max or (value < 0 and -value > info.max)
    return value < info.min or value > info.max


def scalar_to(value, dt, checked=True):
    """``value`` (a Python or numpy number, or a one-element tensor) as a numpy scalar of
    ``dt``'s storage type, converted as upstream converts it; overflow raises upstream's error
    (unless not ``checked``: a plain static_cast)."""
    if isinstance(value, TensorBase):
        value = value.item()
    if isinstance(value, (bool, np.bool_)):
        src, value = _BOOL, bool(value)
    elif isinstance(value, (int, np.integer)):
        src, value = _INT64, int(value)
    elif isinstance(value, (float, np.floating)):
        src, value = _F64, float(value)
    else:
        src, value = _C128, complex(value)
    if checked and dt._name != "bool" and src is not _BOOL and overflows(value, dt):
        raise RuntimeError(f"value cannot be converted to type {scalar_cpp(dt._name)} without overflow")
    return cast_array(np.asarray(value, D.numpy_dtype(src)), src, dt)[()]
