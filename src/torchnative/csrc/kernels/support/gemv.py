"""The matrix-vector product of a decode step: one row of activations times a weight.

BLAS gemv over a matrix whose rows are contiguous (a ``nn.Linear`` weight, ``y = W @ x``) is a
dot of each row with the vector. Which numpy call reads an uncached weight fastest -- a model's
weights never are cached while decoding: each is read once per token, 540 MB for SmolLM2-135M --
depends on the CPU, not on the BLAS kernels it runs (``bench/decode_products.py``, SmolLM2's 211
products of one token, CPU ms streamed / in cache; docs/performance.md):

* an AMD EPYC with AVX-512 (Zen 4): one BLAS dot per row (numpy's ``vecdot``) 26.8 / 9.3,
  OpenBLAS's gemv (gemv_t) 45.7 / 8.1; under OpenBLAS's Haswell kernels and numpy without
  AVX-512 the dots still won, 23.8 against 44.3;
* an Intel Xeon with AVX-512: gemv 52.0 / 14.3, the dots 53.3 / 15.5;
* an AMD EPYC with AVX2 only (Zen): gemv 42.9 / 13.4, the dots 47.1 / 16.7 (each dot's call
  costs ~16-20 ns a row, the cached difference).

So the dots are taken on AMD CPUs with AVX-512, where they stream 1.7x faster, and BLAS's own
gemv everywhere else. Either way the product runs on one thread, so an output's bits do not
depend on the thread budget (a memory-bound product gains little from a second core that other
work may hold); they do depend on the CPU, as every BLAS kernel's do.

A matrix whose columns are contiguous (``x @ W`` for a row-major ``W``) keeps BLAS gemv under the
budget: its kernel (gemv_n, an update per column) streams at full bandwidth already.
"""

from __future__ import annotations

import numpy as np

from ...platform.cpu_capability import FLAGS, cpuinfo
from . import blas_threads

_VECDOT = getattr(np, "vecdot", None)  # numpy >= 2.0
_FLOATS = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def dots_stream_faster(vendor: str, flags: frozenset) -> bool:
    """Whether a CPU reads a row-major weight faster as one dot per row than through gemv (the
    measurements above: AMD's CPUs with AVX-512)."""
    return vendor == "AuthenticAMD" and "avx512f" in flags


ROWS_AS_DOTS = _VECDOT is not None and dots_stream_faster(cpuinfo("vendor_id") or "", FLAGS)


def by_rows(m: np.ndarray, v: np.ndarray) -> bool:
    """Is ``m @ v`` a product over contiguous rows (a real float dtype), run on one thread?"""
    return (m.dtype in _FLOATS and m.strides[1] == m.itemsize and m.shape[1] > 0
            and v.dtype == m.dtype)


def matrix_vector(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``m @ v`` for a 2-d ``m`` and a 1-d ``v`` of one dtype, as a 1-d array."""
    if by_rows(m, v):
        blas_threads.single()
        return _VECDOT(m, v) if ROWS_AS_DOTS else np.dot(m, v)
    blas_threads.for_product(m.shape[0], m.shape[1], 1)
    return np.dot(m, v)


def vector_matrix(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``v @ m`` for a 1-d ``v`` and a 2-d ``m`` of one dtype, as a 1-d array."""
    if by_rows(m.T, v):
        blas_threads.single()
        return _VECDOT(m.T, v) if ROWS_AS_DOTS else np.dot(v, m)
    blas_threads.for_product(1, m.shape[0], m.shape[1])
    return np.dot(v, m)
