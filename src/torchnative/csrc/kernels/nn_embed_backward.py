"""embedding_dense_backward (Embedding.cpp's embedding_dense_backward_cpu): nn.Embedding's weight
gradient.

grad_weight starts at zeros in grad's dtype; each index i, in order, adds its row of grad into
row indices[i] with add_stub and alpha = 1 / count (scale_grad_by_freq) or 1, so rows sharing an
index are summed one after another in the grad's dtype (float16/bfloat16 rounded at every add).
Indices equal to padding_idx or outside [0, num_weights) add nothing. alpha reaches the add as
``Scalar.to<scalar_t>()``; where it is not 1 the add is upstream's ``self + alpha * other``: one
fused multiply-add in the AVX2/AVX512 builds (the vectorized float16/bfloat16 one fused in float,
their scalar tail rounding the product first), two roundings in the DEFAULT build.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .nn_embed import tensor_type_name
from .nn_glu import to_bf16, vector_lanes
from .pointwise_base import BF16, BOOL, COMPLEX, INTEGRAL, REDUCED, compute_dtype
from .pointwise_math import fma
from .support.common import arr, as_compute, wrap

_INDEX = (D.BY_NAME["int64"], D.BY_NAME["int32"])


def _ranks(k: np.ndarray) -> np.ndarray:
    """Each entry's occurrence number among the equal entries before it."""
    order = np.argsort(k, kind="stable")
    ks = k[order]
    first = np.r_[True, ks[1:] != ks[:-1]] if ks.size else np.zeros(0, bool)
    start = np.maximum.accumulate(np.where(first, np.arange(ks.size), 0))
    rank = np.empty(k.size, np.int64)
    rank[order] = np.arange(ks.size) - start
    return rank


def _scaled_add(acc, g, alpha, dt, lanes):
    """acc + alpha * g as add_stub computes it (alpha already in the dtype, per row)."""
    if dt is BOOL:
        return acc | (alpha & g)
    if dt in INTEGRAL or dt in COMPLEX:
        return acc + alpha * g
    if dt not in REDUCED:
        return fma(g, alpha, acc)
    npdt = D.numpy_dtype(dt)
    twice = ((g * alpha).astype(npdt).astype(np.float32) + acc)
    if lanes is None or not cpu_capability.CONTRACTS_FMA:
        return twice
    return np.where(lanes, fma(g, alpha, acc), twice)   # (rounded to the dtype by the caller)


@kernel("embedding_dense_backward")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    if indices._dtype not in _INDEX:
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {tensor_type_name(indices)} instead "
                           "(while checking arguments for embedding_backward)")
    dt = grad_output._dtype
    width = grad_output._size[-1] if grad_output._size else 1
    n = indices.numel()
    if grad_output.numel() != n * width:
        raise RuntimeError(f"shape '[{n}, {width}]' is invalid for input of size "
                           f"{grad_output.numel()}")
    cdt = compute_dtype(dt)
    out = np.zeros((int(num_weights), width), cdt)
    idx = arr(indices).reshape(-1).astype(np.int64)
    keep = (idx != padding_idx) & (idx >= 0) & (idx < num_weights)
    pos = np.flatnonzero(keep)
    if pos.size and width:
        g = as_compute(grad_output, dt).reshape(n, width)[pos]
        k = idx[pos]
        scaled = scale_grad_by_freq and np.bincount(k).max() > 1
        # (complex adds alpha * g in full even for alpha = 1: inf * (1 + 0j) has a NaN part)
        if not scaled and dt not in REDUCED and dt not in COMPLEX:
            if dt is BOOL:
                np.logical_or.at(out, k, g)
            else:
                np.add.at(out, k, g)   # in index order
        else:
            _accumulate(out, g, k, idx, dt, scaled)
    if dt is BF16:
        return wrap(_bf16_rows(out, width), dt)
    return wrap(out, dt)


def _accumulate(out, g, k, idx, dt, scaled):
    """The adds one occurrence rank at a time: within a rank every row is distinct."""
    npdt = D.numpy_dtype(dt)
    alpha = np.ones((out.shape[0], 1), out.dtype)
    if scaled:
        counts = np.bincount(idx[(idx >= 0) & (idx < out.shape[0])], minlength=out.shape[0])
        inv = 1.0 / np.maximum(counts, 1)
        # Scalar.to<scalar_t>(): through the dtype (an integer truncates, bool is nonzero)
        alpha = (inv != 0) if dt is BOOL else inv.astype(npdt).astype(out.dtype)
        alpha = alpha.reshape(-1, 1)
    lanes = _row_lanes(out.shape[1], 2) if dt in REDUCED else None
    rank = _ranks(k)
    for r in range(int(rank.max()) + 1):
        sel = rank == r
        rows = k[sel]
        step = _scaled_add(out[rows], g[sel], alpha[rows], dt, lanes)
        out[rows] = step.astype(npdt).astype(out.dtype) if dt in REDUCED else step


_ADD_VEC_BYTES = 32   # add_stub is registered for AVX2 only: AVX512 runs its AVX2 build


def _row_lanes(width, itemsize):
    """The SIMD lanes of one row's add (each row is its own loop), None for none."""
    return vector_lanes((width,), [(1,)], itemsize, vec_bytes=_ADD_VEC_BYTES)


def _bf16_rows(acc, width):
    """bfloat16 storage of the float sums, a NaN stored as the add loop's lane stores it."""
    lanes = _row_lanes(width, 2)
    return to_bf16(acc, None if lanes is None else np.broadcast_to(lanes, acc.shape))
