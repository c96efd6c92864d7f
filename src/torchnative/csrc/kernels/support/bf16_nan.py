"""Which bit pattern a NaN gets when upstream's copy kernel converts float32/float64 to bfloat16.

c10's scalar constructor (``BFloat16(float)``) stores every NaN as 0x7FC0; the AVX2/AVX512
builds' vectorized converter stores 0xFFFF. Which one an element meets is decided by the loop it
runs through (measured on torch 2.13.0, identical under ATEN_CPU_CAPABILITY avx2 and avx512;
``tests/differential/test_bf16_nan_bits.py`` compares them with upstream's under each one):

* the DEFAULT build converts element by element: 0x7FC0 everywhere;
* a 0-d tensor, and any copy whose inner loop is not contiguous in both the destination and the
  source (a strided destination, a source strided or broadcast along that loop): 0x7FC0;
* otherwise, from float32: 0xFFFF everywhere (the vector loop converts its own tail); from
  float64: 0xFFFF on the first multiple of 16 elements of each run, 0x7FC0 on the rest, a run
  being one inner row of TensorIterator's coalesced iteration, cut where at::parallel_for cuts
  the elements into its threads' chunks.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.cast import BF16_SCALAR_NAN, bf16_nans
from ...platform import cpu_capability
from .cascade_sum import GRAIN_SIZE
from .iteration import ti_perm
from .parallel import get_num_threads

_F64_BLOCK = 16  # elements a float64 -> bfloat16 vector step converts (AVX2 and AVX512 alike)


def vector_converted(shape, dst_strides, src_strides, src_is_f64: bool):
    """A bool array of ``shape``: True where the copy's vectorized converter writes the element
    (0xFFFF for a NaN), False where c10's scalar one does (0x7FC0). Strides in elements,
    ``src_strides`` broadcast to ``shape`` (0 along a broadcast dimension)."""
    nd = len(shape)
    if cpu_capability.CAPABILITY == cpu_capability.DEFAULT or nd == 0:
        return np.zeros(shape, bool)
    n = math.prod(shape)
    dst = [0 if shape[d] == 1 else dst_strides[d] for d in range(nd)]
    src = [0 if shape[d] == 1 else src_strides[d] for d in range(nd)]
    perm = [d for d in ti_perm(shape, [dst, src]) if shape[d] != 1]  # fastest first
    if not perm:  # one element (of a tensor with dimensions): a contiguous run of one
        return np.full(shape, not src_is_f64)
    # the inner loop: the fastest dimension, coalesced with the next ones while both operands
    # step through them as one run
    inner, run = perm[0], shape[perm[0]]
    if dst[inner] != 1 or src[inner] != 1:
        return np.zeros(shape, bool)
    if not src_is_f64:
        return np.ones(shape, bool)
    for d in perm[1:]:
        if dst[d] != run or src[d] != run:
            break
        run *= shape[d]
    # each element's place in the iteration (the fastest dimension first)
    pos = np.zeros(shape, np.int64)
    step = 1
    for d in perm:
        idx = np.arange(shape[d], dtype=np.int64).reshape([-1 if i == d else 1 for i in range(nd)])
        pos = pos + idx * step
        step *= shape[d]
    threads = get_num_threads()
    chunk = n
    if n >= GRAIN_SIZE and threads > 1:
        tasks = min(threads, -(-n // GRAIN_SIZE))
        chunk = -(-n // tasks)
    row0 = pos - pos % run
    chunk0 = pos - pos % chunk
    start = np.maximum(row0, chunk0)
    end = np.minimum(np.minimum(row0 + run, chunk0 + chunk), n)
    return (pos - start) < (end - start) // _F64_BLOCK * _F64_BLOCK


def settle_copy(values: np.ndarray, shape, dst_strides, src_strides, src_is_f64: bool):
    """``values`` (bfloat16 storage, its NaNs stored as 0xFFFF) broadcast to ``shape``, with
    each NaN stored as upstream's copy kernel stores it there."""
    out = np.array(np.broadcast_to(values, shape))
    scalar = bf16_nans(out) & ~vector_converted(shape, dst_strides, src_strides, src_is_f64)
    out.view(np.uint16)[scalar] = BF16_SCALAR_NAN
    return out
