"""Per-channel work on a C-contiguous (N, C, ...) array as contiguous numpy passes.

numpy reduces over several axes and broadcasts a (1, C, 1, ...) vector through its generic
strided loops, several times slower than a contiguous pass at batch norm's sizes. Seen as N rows
of C * inner values, a per-channel vector becomes one repeated row (``channel_row``) that the
rows broadcast against contiguously, and the per-channel sums become a matrix-vector product
(``channel_sums64``). Elementwise results are the same values; the sums are double sums in
another order.
"""

from __future__ import annotations

import math

import numpy as np

from . import blas_threads


def rows(a: np.ndarray) -> np.ndarray:
    """``a`` (N, C, ...), C-contiguous, as N rows of C * inner values (a view)."""
    return a.reshape(a.shape[0], math.prod(a.shape[1:]))


def channel_row(v: np.ndarray, inner: int) -> np.ndarray:
    """The (C,) vector ``v`` as one row of C * inner values, each repeated ``inner`` times."""
    v = v.reshape(-1)
    return v if inner == 1 else np.repeat(v, inner)


def channel_sums64(a: np.ndarray, c: int) -> np.ndarray:
    """Each channel's sum of ``a`` (N, C, ...), a C-contiguous float64 array, as a
    matrix-vector product of its rows of one channel's values with ones."""
    lead = a.shape[0]
    inner = a.size // (lead * c)
    blas_threads.for_product(lead * c, inner, 1)
    per_row = a.reshape(lead * c, inner) @ np.ones(inner)
    return per_row.reshape(lead, c).sum(0)
