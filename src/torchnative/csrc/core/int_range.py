"""The range c10::overflows<T> checks a value against for an integer type, in one place for the
per-value check (kernels' scalar arguments) and the vectorized one (``torch.tensor``'s store)."""

from __future__ import annotations

import functools

import numpy as np

from . import dtypes as D


@functools.lru_cache(maxsize=None)
def int_bounds(dt) -> tuple:
    """(the lowest int ``dt`` takes, its lowest value, its highest): a negative int wraps into an
    unsigned type down to -max (two's complement, as upstream allows); a float must lie within
    [lowest value, highest]."""
    info = np.iinfo(D.numpy_dtype(dt))
    return (-info.max if info.min == 0 else info.min), info.min, info.max
