"""Upstream's lazy conjugate and negative bits (TensorImpl's ``is_conj`` / ``is_neg`` keys).

``x.conj()`` of a complex tensor is a view of ``x``'s memory whose values read conjugated;
``x._neg_view()`` one whose values read negated. A tensor's ``_math_bits`` holds them (CONJ | NEG;
the class default 0, so a tensor without bits stores nothing). Its numpy array (``_np``) is the
raw memory, as upstream's data pointer is: kernels read raw values, so the door sends a call with a
bit-carrying tensor through the fallback (``dispatch/math_bits.py``), which resolves it first.

``LIVE`` turns true the first time any tensor gets a bit: until then the door does not look.
"""

from __future__ import annotations

import numpy as np

from . import complex_half

CONJ, NEG = 1, 2
LIVE = [False]


def bits(tensor) -> int:
    return tensor._math_bits


def set_bits(tensor, value: int) -> None:
    if value:
        tensor._math_bits = value
        LIVE[0] = True
    else:
        tensor._math_bits = 0


def is_conj(tensor) -> bool:
    return bool(tensor._math_bits & CONJ)


def is_neg(tensor) -> bool:
    return bool(tensor._math_bits & NEG)


def bits_in(values) -> int:
    """The bits carried by any tensor among ``values`` (or inside a list among them), or-ed."""
    seen = 0
    for a in values:
        seen |= getattr(a, "_math_bits", 0)
        if isinstance(a, (list, tuple)):
            for x in a:
                seen |= getattr(x, "_math_bits", 0)
    return seen


def has_bits(args, kwargs=None) -> bool:
    return bool(bits_in(args) or kwargs and bits_in(kwargs.values()))


def apply_bits(array: np.ndarray, value: int) -> np.ndarray:
    """The values ``array`` reads as under ``value``'s bits, written in place."""
    if array.dtype == complex_half.STORAGE:  # complex32: flip the float16 parts' signs
        if value & CONJ:
            np.negative(array["imag"], out=array["imag"])
        if value & NEG:
            np.negative(array["real"], out=array["real"])
            np.negative(array["imag"], out=array["imag"])
        return array
    if value & CONJ and array.dtype.kind == "c":
        np.conjugate(array, out=array)
    if value & NEG:
        np.negative(array, out=array)
    return array


def logical_array(tensor) -> np.ndarray:
    """The tensor's values as a numpy array: its raw view, or with bits a resolved copy."""
    b = tensor._math_bits
    a = tensor._np
    return a if not b or a is None else apply_bits(np.array(a), b)


def _complex_only(tensor, what: str) -> None:
    if not tensor.dtype.is_complex:
        # upstream: TensorImpl::_set_conj asserts the dtype is complex
        raise RuntimeError("isComplexType(typeMetaToScalarType(dtype())) INTERNAL ASSERT "
                           f"FAILED: {what} of a {tensor.dtype._cpp_name} tensor")


def set_conj(tensor, value: bool) -> None:
    """``torch._C._set_conj``: flip the bit in place, nothing recomputed (as upstream)."""
    if value:
        _complex_only(tensor, "_set_conj")
    set_bits(tensor, (tensor._math_bits & ~CONJ) | (CONJ if value else 0))


def set_neg(tensor, value: bool) -> None:
    set_bits(tensor, (tensor._math_bits & ~NEG) | (NEG if value else 0))


TORCH_C = {"torch._C._set_conj": set_conj, "torch._C._set_neg": set_neg}
