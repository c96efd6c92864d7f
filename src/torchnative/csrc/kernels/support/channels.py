"""Per-channel work on a C-contiguous (N, C, ...) array as contiguous numpy passes.

numpy broadcasts a (1, C, 1, ...) vector through its generic strided loops, several times slower
than a contiguous pass at batch norm's sizes. Seen as N rows of C * inner values (``rows``), a
per-channel vector becomes one repeated row (``channel_row``) that the rows broadcast against
contiguously: the same elementwise results.
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


def channel_sums(a: np.ndarray, c: int, inner: int) -> np.ndarray:
    """Each channel's sum of a C-contiguous float64 (N, C, ...) array with ``inner`` values per
    (sample, channel) block: a matrix-vector product over the blocks, then the samples' sum."""
    per = a.reshape(-1, inner)
    blas_threads.for_product(per.shape[0], inner, 1)
    return (per @ np.ones(inner)).reshape(-1, c).sum(0)
