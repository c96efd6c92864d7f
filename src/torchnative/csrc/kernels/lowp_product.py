"""Products over a bfloat16/float16 weight widened a block of rows at a time.

numpy has no 16-bit float matrix product, so ``x @ w.T`` widens ``w`` to float32 and runs the
float32 product (upstream's CPU gemm accumulates in float32 too and rounds once). Widening a
whole weight per product writes, then reads back, a float32 copy twice its size that no cache
holds; keeping such copies between products costs 4 bytes per weight element. Here the weight
is widened ``_BLOCK`` elements at a time into a float32 block that stays in the CPU cache while
BLAS reads it, so memory traffic is the 16-bit weight itself and nothing is kept.

Only a one-row ``x`` (decode's matrix-vector product) is blocked, and its result is bit for bit
the whole-matrix product's: OpenBLAS's gemv sums each output element in the same order whatever
rows sit beside it, except a block's last 1-3 rows unless its row count is a multiple of 4
(measured, 1 and 2 threads: blocks of a multiple of 8 rows agree everywhere; 1, 2, 3 or 227 rows
do not). Its gemm picks kernels by the shapes, so blocking a many-row product changes bits (for
2 or 8 rows, measured): those widen the whole weight, per product.
"""

from __future__ import annotations

import numpy as np

from .support import blas_threads

_BLOCK = 1 << 18  # float32 elements per widened block (1 MB, a core's L2 here: 1<<17 measured slower)
_ROWS = 64        # a block's rows are a multiple of this (see above)
_F32 = np.dtype(np.float32)


def _widen(w: np.ndarray) -> np.ndarray:
    return w.astype(_F32)  # exact: bfloat16 (ml_dtypes) and float16 values are float32 values


def _rows(k: int) -> int:
    return max(_ROWS, _BLOCK // max(k, 1) // _ROWS * _ROWS)


def times_transposed(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x @ w.T`` in float32 for ``x`` a float32 (m, k) array and ``w`` a 16-bit float (n, k)
    array, ``w`` read one block of rows at a time."""
    m, k = x.shape
    n = w.shape[0]
    blas_threads.for_product(m, k, n)
    rows = _rows(k)
    if m != 1:
        return np.matmul(x, _widen(w).T)
    if n <= rows:
        return np.dot(_widen(w), x[0])[None, :]
    out = np.empty((1, n), _F32)
    x0, o = x[0], out[0]
    for r in range(0, n, rows):
        np.dot(_widen(w[r:r + rows]), x0, out=o[r:r + rows])
    return out
