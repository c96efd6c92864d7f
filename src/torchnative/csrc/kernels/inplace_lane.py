"""The dense lane of in-place pointwise kernels (the optimizers' ``add_``, ``mul_``, ``lerp_``,
``addcmul_``...): ``self`` a C-contiguous, writeable float32/float64 tensor, the other operands
tensors of its dtype and size or real numbers. There the functional's own numpy computation
writes straight into ``self``'s array (``out=``): the bits the derived in-place kernel writes
(the functional's result, then copied in), without allocating that result and copying it.
An operand that shares only some of ``self``'s elements is refused first, as upstream's
TensorIterator refuses it."""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.mem_overlap import assert_no_partial_overlap
from ..core.tensor import TensorBase
from .pointwise_base import compute_dtype, scalar_value

DTYPES = frozenset(D.BY_NAME[n] for n in ("float32", "float64"))


def self_array(self):
    """``self``'s array when ``self`` can take the lane, else None (a 0-d result may hold a
    numpy scalar, which cannot be written; a read-only array keeps the derived kernel's error)."""
    x = self._np
    if self._dtype not in DTYPES or type(x) is not np.ndarray or not x.flags.c_contiguous or \
            not x.flags.writeable or self._math_bits or self._wrapped:
        return None
    return x


def lane(self, *others):
    """``self``'s array when ``self`` and every one of ``others`` (tensors of its dtype and size,
    no wrapped numbers, no lazy bits) can take the lane, else None."""
    x = self_array(self)
    if x is None:
        return None
    for o in others:
        if not isinstance(o, TensorBase) or o._dtype is not self._dtype or o._np is None or \
                o._size != self._size or o._math_bits or o._wrapped:
            return None
    _no_partial_overlap(self, others)
    return x


def operand(self, other):
    """``other`` as the functional's fast path reads it against ``self`` (a float32/float64 lane
    dtype): a tensor of self's dtype and size gives its array, a wrapped real number its value in
    that dtype; anything else (complex or bool numbers, other dtypes and sizes, lazy bits) None."""
    if not isinstance(other, TensorBase) or other._math_bits:
        return None
    dt = self._dtype
    if other._wrapped:
        odt = other._dtype
        if odt.is_complex or odt is D.BY_NAME["bool"] or other._np is None:
            return None
        return scalar_value(other._np.item(), dt, compute_dtype(dt))
    if other._dtype is not dt or other._np is None or other._size != self._size:
        return None
    _no_partial_overlap(self, (other,))
    return other._np


def _no_partial_overlap(self, others) -> None:
    """The iterator's refusal of an operand that shares only some of ``self``'s elements (a
    C-contiguous ``self`` has no internal overlap)."""
    st = self._st
    if st is not None:
        for o in others:
            if o._st is st and o is not self:
                assert_no_partial_overlap(self, o)


def written(self, x, fn, *args):
    """``fn(*args, out=x)`` (float exceptions are values: the door runs kernels in the quiet
    state); returns ``self``."""
    fn(*args, out=x)
    return self
