"""``c10::Scalar::to<T>()``: a Python number converted to a kernel's scalar type, refusing the
values ``c10::checked_convert`` refuses (``c10::overflows``)."""

from __future__ import annotations

import numpy as np

from ...platform.cpp_names import scalar_cpp
from ...core import dtypes as D
from ...core.cast import cast_array
from ...core.int_range import int_bounds
from ...core.tensor import TensorBase

_BOOL, _INT64 = D.BY_NAME["bool"], D.BY_NAME["int64"]
_F64, _C128 = D.BY_NAME["float64"], D.BY_NAME["complex128"]
# the largest finite value of each floating type (c10's numeric_limits<T>::max()); only e5m2
# among the float8 types has infinities
FLOAT_MAX = {D.BY_NAME["float16"]: 65504.0, D.BY_NAME["bfloat16"]: 3.3895313892515355e38,
             D.BY_NAME["float32"]: float(np.finfo(np.float32).max),
             D.BY_NAME["float64"]: float(np.finfo(np.float64).max),
             D.BY_NAME["float8_e4m3fn"]: 448.0, D.BY_NAME["float8_e4m3fnuz"]: 240.0,
             D.BY_NAME["float8_e5m2"]: 57344.0, D.BY_NAME["float8_e5m2fnuz"]: 57344.0,
             D.BY_NAME["float8_e8m0fnu"]: 2.0 ** 127}
_NO_INFINITY = frozenset(D.BY_NAME[n] for n in ("float8_e4m3fn", "float8_e4m3fnuz",
                                                "float8_e5m2fnuz", "float8_e8m0fnu"))
_INFINITIES = (float("inf"), -float("inf"))


def overflows(value, dt) -> bool:
    """c10::overflows<T>(value): NaN passes into floating types, infinities into those that have
    them; negative integers wrap into unsigned ones (two's complement, as upstream allows); a
    complex value with an imaginary part overflows any real type, and goes into a complex type
    component by component."""
    if isinstance(value, complex):
        if dt.is_complex:
            return overflows(value.real, dt) or overflows(value.imag, dt)
        if value.imag != 0:
            return True
        value = value.real
    if dt.is_complex:
        dt = dt.to_real()
    hi = FLOAT_MAX.get(dt)
    if hi is None and dt.is_floating_point:
        hi = float(np.finfo(D.numpy_dtype(dt)).max)
    if hi is not None:
        if isinstance(value, float) and (value != value or
                                         value in _INFINITIES and dt not in _NO_INFINITY):
            return False
        return value < -hi or value > hi
    lo_int, lo, hi = int_bounds(dt)
    if isinstance(value, float):
        return value != value or value < float(lo) or value > float(hi)
    return value < lo_int or value > hi


_PLAIN_FLOATS = {D.BY_NAME["float32"]: np.float32, D.BY_NAME["float64"]: np.float64}


def plain_float(value: float, dt):
    """A Python float read as a float32/float64 scalar (one rounding from double), or None where
    the general conversion decides: another type, or a finite value beyond the type's range
    (which overflows)."""
    conv = _PLAIN_FLOATS.get(dt)
    if conv is None or abs(value) > FLOAT_MAX[dt] and value not in _INFINITIES:
        return None
    return conv(value)


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
    if src is _C128 and not dt.is_complex and dt._name != "bool":
        # c10 converts a complex to a real type through its real part, silently (numpy's cast
        # would warn); a bool reads both parts
        src, value = _F64, value.real
    return cast_array(np.asarray(value, D.numpy_dtype(src)), src, dt)[()]
