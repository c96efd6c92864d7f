"""The matrix-vector product of a decode step: one row of activations times a weight.

BLAS gemv over a matrix whose rows are contiguous (a ``nn.Linear`` weight, ``y = W @ x``) is a
dot of each row with the vector. Once the matrix is not in cache -- a model's weights never are
while decoding: each is read once per token, 540 MB for SmolLM2-135M -- OpenBLAS's kernel for it
(gemv_t) is slower than one BLAS dot per row (numpy's ``vecdot``): SmolLM2's 211 products per
token 47 against 33 CPU ms, while in cache the dots are ~15% slower (8.1 against 9.3 ms;
``bench/decode_products.py``, docs/performance.md "The decode's products"). Each output is then
one dot of one row, so its bits do not depend on how many threads run, and no thread is added
(a memory-bound product gains little from a second core that other work may hold).

A matrix whose columns are contiguous (``x @ W`` for a row-major ``W``) keeps BLAS gemv: its
kernel (gemv_n, an update per column) streams at full bandwidth already.
"""

from __future__ import annotations

import numpy as np

from . import blas_threads

_VECDOT = getattr(np, "vecdot", None)  # numpy >= 2.0
_FLOATS = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def by_rows(m: np.ndarray, v: np.ndarray) -> bool:
    """Is ``m @ v`` taken as one dot per row (``m``'s rows contiguous, a real float dtype)?"""
    return (_VECDOT is not None and m.dtype in _FLOATS and m.strides[1] == m.itemsize
            and m.shape[1] > 0 and v.dtype == m.dtype)


def matrix_vector(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``m @ v`` for a 2-d ``m`` and a 1-d ``v`` of one dtype, as a 1-d array."""
    if by_rows(m, v):
        blas_threads.single()
        return _VECDOT(m, v)
    blas_threads.for_product(m.shape[0], m.shape[1], 1)
    return np.dot(m, v)


def vector_matrix(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``v @ m`` for a 1-d ``v`` and a 2-d ``m`` of one dtype, as a 1-d array."""
    if by_rows(m.T, v):
        blas_threads.single()
        return _VECDOT(m.T, v)
    blas_threads.for_product(1, m.shape[0], m.shape[1])
    return np.dot(v, m)
