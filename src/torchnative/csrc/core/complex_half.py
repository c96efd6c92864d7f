"""complex32 (c10::complex<c10::Half>) as numpy holds it: a pair of float16 fields.

numpy has no complex type made of two float16 values. A structured dtype of two ``<f2`` fields,
``real`` then ``imag``, has the layout upstream's ComplexHalf has (4 bytes, real part first), so
storage, views, copies, indexing and checkpoints move the same bytes; its fields are float16
views (``view_as_real``, ``.real``/``.imag``). numpy's ufuncs refuse the structured type, so
arithmetic is reached only through ``widen``/``narrow``: upstream computes ComplexHalf in
complex<float> (its opmath type) and rounds each part to Half.
"""

from __future__ import annotations

import numpy as np

STORAGE = np.dtype([("real", "<f2"), ("imag", "<f2")])


def parts(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The float16 real and imaginary parts of a complex32-stored array (views)."""
    return a["real"], a["imag"]


def widen(a: np.ndarray) -> np.ndarray:
    """complex64 values of a complex32-stored array (exact; a signalling NaN comes out quiet,
    as x86's F16C converter that upstream's build widens Half with makes it)."""
    out = np.empty(a.shape, np.complex64)
    out.real = a["real"]
    out.imag = a["imag"]
    parts = out.reshape(-1).view(np.float32)  # a view: ``out`` is new and contiguous
    nan = np.isnan(parts)
    if nan.any():
        parts.view(np.uint32)[nan] |= np.uint32(0x00400000)
    return out


def pack(real16: np.ndarray, imag16: np.ndarray) -> np.ndarray:
    """A complex32-stored array from float16 parts (already rounded)."""
    real16, imag16 = np.broadcast_arrays(real16, imag16)
    out = np.empty(real16.shape, STORAGE)
    out["real"] = real16
    out["imag"] = imag16
    return out
