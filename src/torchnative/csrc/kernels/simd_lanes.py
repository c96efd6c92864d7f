"""Which elements upstream's compiled loop computes with ``Vectorized<T>`` and which with its
scalar op (Loops.h: ``cpu_kernel_vec``'s ``VectorizedLoop2d`` and ``vectorized_loop``), one rule
for every kernel that reproduces a difference between the two (a NaN's bits, SLEEF's exp against
libm's, a fused multiply-add).

TensorIterator orders the dimensions (fastest first) and coalesces the innermost ones while every
operand steps through them as one run. The inner loop is vectorized when the output and every
input advance by one element along it, or when exactly one input stands still (stride 0, the
``S`` variants: a broadcast scalar) and the others advance by one. Along each run the first
``len // step * step`` elements go through the SIMD op, ``step`` being two vectors (the loop
unrolls twice); the rest is the scalar tail. At ``GRAIN_SIZE`` elements and more with more than
one thread, at::parallel_for first cuts the elements, in iteration order, into equal chunks, and
each chunk's part of a run is a loop of its own.

A vector is 32 bytes in the AVX2 build and in the DEFAULT one (its generic Vectorized is an array
of 32 bytes, computed element by element with c10's scalar functions), 64 in the AVX512 build --
which an AVX512 process runs only for kernels registered with ALSO_REGISTER_AVX512_DISPATCH:
REGISTER_DISPATCH leaves AVX512 to the AVX2 build (``build_bytes``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..core import dtypes as D
from ..core.cast import BF16_SCALAR_NAN, bf16_nans, nan_stamp, scalar_nans
from ..core.tensor import TensorBase
from ..platform import cpu_capability
from .support.cascade_sum import GRAIN_SIZE
from .support.iteration import ti_perm
from .support.parallel import get_num_threads

VEC_BYTES = cpu_capability.VEC_BYTES   # the AVX512 build's width when this process runs it
AVX2_BYTES = 32
_DEFAULT = cpu_capability.CAPABILITY == cpu_capability.DEFAULT
F16, BF16 = D.BY_NAME["float16"], D.BY_NAME["bfloat16"]


def build_bytes(avx512: bool) -> int:
    """The vector width of a kernel's build in this process: ``avx512``, whether upstream
    registers the kernel with ALSO_REGISTER_AVX512_DISPATCH."""
    return VEC_BYTES if avx512 else AVX2_BYTES


class Run(NamedTuple):
    """Per element of the result: ``pos``, its place in its loop (the run's part one call of
    the inner loop covers); ``cut``, that loop's SIMD part's length; ``mask``, ``pos < cut``."""
    pos: np.ndarray
    cut: np.ndarray
    mask: np.ndarray


def lanes(shape, inputs, itemsize: int, output=None, vec_bytes: int = VEC_BYTES, step=None,
          scalar_input: bool = True):
    """The ``Run`` of a loop over ``shape`` (None where no element is vectorized). ``inputs``:
    each input's strides in elements, broadcast to ``shape`` (0 along a broadcast dimension);
    ``output``: a given output's strides (it then takes part in the dimension order), None for
    one TensorIterator allocates. ``itemsize``: the bytes of the type the vectors hold;
    ``step``: the elements one iteration takes (two vectors' unless given); ``scalar_input``:
    whether an input standing still along the inner loop is vectorized (the ``S`` variants).
    Kept per geometry (read-only arrays)."""
    step = 2 * vec_bytes // itemsize if step is None else step
    threads = get_num_threads()
    key = (tuple(shape), None if output is None else tuple(output), *map(tuple, inputs), step,
           threads, scalar_input)
    hit = _RUNS.get(key, _RUNS)
    if hit is _RUNS:
        if len(_RUNS) >= 512:
            _RUNS.clear()
        hit = _RUNS[key] = _lanes(tuple(shape), inputs, output, step, threads, scalar_input)
    return hit


_RUNS: dict = {}


def _lanes(shape, inputs, output, step, threads, scalar_input=True):
    n = math.prod(shape)
    if n < step:
        return None
    nd = len(shape)
    ins = [[0 if sz == 1 else s for sz, s in zip(shape, st)] for st in inputs]
    outs = [] if output is None else [[0 if sz == 1 else s for sz, s in zip(shape, output)]]
    perm = [d for d in ti_perm(shape, outs + ins) if shape[d] != 1]   # n > 1: not empty
    firsts = [st[perm[0]] for st in ins]
    if any(st[perm[0]] != 1 for st in outs) or not (
            all(s == 1 for s in firsts) or
            (scalar_input and firsts.count(0) == 1 and all(s in (0, 1) for s in firsts))):
        return None
    # the run: the fastest dimension, coalesced with the next while every operand continues
    run = 1
    for i, d in enumerate(perm):
        if i and any(st[d] != st[perm[0]] * run for st in outs + ins):
            break
        run *= shape[d]
    # each element's place in the iteration, fastest dimension first
    pos = np.zeros([1] * nd, np.int64)
    acc = 1
    for d in perm:
        pos = pos + np.arange(shape[d], dtype=np.int64).reshape(
            [-1 if i == d else 1 for i in range(nd)]) * acc
        acc *= shape[d]
    chunk = n
    if n >= GRAIN_SIZE and threads > 1:
        chunk = -(-n // min(threads, -(-n // GRAIN_SIZE)))
    row0 = pos - pos % run
    chunk0 = pos - pos % chunk
    start = np.maximum(row0, chunk0)
    end = np.minimum(np.minimum(row0 + run, chunk0 + chunk), n)
    at, cut = pos - start, (end - start) // step * step
    if not cut.any():
        return None
    at, cut = np.broadcast_to(at, shape), np.broadcast_to(cut, shape)
    return Run(at, cut, at < cut)


# elements the copy kernel's float64 -> bfloat16 vector step converts (AVX2 and AVX512 alike)
_F64_BLOCK = 16


def copy_nans(values: np.ndarray, shape, dst_strides, src_strides, src_is_f64: bool):
    """``values`` (bfloat16 storage, its NaNs stored as 0xFFFF) broadcast to ``shape``, each NaN
    stored as upstream's copy kernel from float32/float64 stores it there (measured on 2.13.0
    under avx2 and avx512: ``tests/differential/test_bf16_nan_bits.py``): the DEFAULT build, a
    0-d tensor and a copy whose inner loop is not contiguous in both tensors (a broadcast source
    included: no ``S`` variant here) store c10's 0x7FC0; otherwise the vector converter's 0xFFFF,
    from float32 on every element (it converts its own tail), from float64 on the first multiple
    of 16 elements of each run, 0x7FC0 past it. Strides in elements, ``src_strides`` broadcast
    to ``shape``."""
    out = np.array(np.broadcast_to(values, shape))
    nans = bf16_nans(out)
    if nans.any():
        nans &= ~_copy_vectorized(shape, dst_strides, src_strides, src_is_f64)
        out.view(np.uint16)[nans] = BF16_SCALAR_NAN
    return out


def _copy_vectorized(shape, dst_strides, src_strides, src_is_f64: bool) -> np.ndarray:
    if _DEFAULT or not shape:
        return np.zeros(shape, bool)
    if math.prod(shape) == 1:     # a contiguous run of one element
        return np.full(shape, not src_is_f64)
    run = lanes(shape, [src_strides], 2, dst_strides, step=_F64_BLOCK if src_is_f64 else 1,
                scalar_input=False)
    return np.zeros(shape, bool) if run is None else run.mask


def broadcast_strides(t, shape) -> list:
    """``t``'s strides broadcast to ``shape`` (0 where it is broadcast)."""
    lead = len(shape) - len(t._size)
    return [0] * lead + [0 if n == 1 else st for n, st in zip(t._size, t._stride)]


def tensor_lanes(ops, itemsize: int, vec_bytes: int = VEC_BYTES, step=None):
    """``lanes`` of a loop over the tensors among ``ops`` (numbers take no part: the loop reads
    them as constants), broadcast together, writing a new output."""
    ts = [t for t in ops if isinstance(t, TensorBase)]
    shape = np.broadcast_shapes(*[t._size for t in ts]) if ts else ()
    return lanes(shape, [broadcast_strides(t, shape) for t in ts], itemsize, None, vec_bytes,
                 step)


# ``vec_bytes`` of a loop that is not cpu_kernel_vec's: at::vml's map (the exp/log/trig family)
# converts every element through vectors, its tail in a partial one, a non-contiguous input
# through a contiguous buffer; cpu_kernel has no SIMD op at all.
VML, SCALAR = "vml", 0


def loop_nans(out, ops, vec_bytes=VEC_BYTES, since=None) -> None:
    """A new float16/bfloat16 result's NaNs, in place, as the loop over ``ops`` that converted
    them from float stores them. bfloat16: 0xFFFF where the vector converter wrote the element,
    c10's scalar 0x7FC0 in the scalar tail, in loops without a SIMD op and everywhere in the
    DEFAULT build. float16: F16C in both loops of the AVX2/AVX512 builds (the quieted payload:
    ``cast_array``'s), c10's software conversion in the DEFAULT build (the sign only).
    ``vec_bytes``: the loop's vector width (``build_bytes``), ``VML`` or ``SCALAR``; ``since``:
    ``cast.nan_stamp()`` before the result was converted (unchanged: no NaN to look for)."""
    if since is not None and since == nan_stamp():
        return
    a = out._np
    if a is None or not a.size or (vec_bytes == VML and not _DEFAULT):
        return
    if out._dtype is F16:
        if _DEFAULT:
            bits = a.view(np.uint16)
            nans = (bits & np.uint16(0x7FFF)) > np.uint16(0x7C00)
            if nans.any():
                bits[nans] = (bits[nans] & np.uint16(0x8000)) | np.uint16(0x7E00)
        return
    if out._dtype is not BF16 or not bf16_nans(a).any():
        return
    if _DEFAULT or vec_bytes == SCALAR:
        scalar_nans(a)
    else:
        run = tensor_lanes(ops, 2, vec_bytes)
        scalar_nans(a, None if run is None else run.mask)


def sign_bit_nans(out, src, flip: bool, since=None, vec_bytes=AVX2_BYTES) -> None:
    """neg (``flip``) and abs of float16/bfloat16 ``src`` into ``out``: the vector op flips or
    clears the sign bit of the input's bits, a NaN's payload and all; the scalar op converts
    -x or |x| from float (``loop_nans``; ``since`` as there)."""
    a = out._np
    if a is None or not a.size or (since is not None and since == nan_stamp()):
        return
    bits = a.view(np.uint16)
    nans = (bits & np.uint16(0x7FFF)) > np.uint16(0x7F80 if out._dtype is BF16 else 0x7C00)
    if not nans.any():
        return
    loop_nans(out, (src,), SCALAR)
    run = None if _DEFAULT else tensor_lanes((src,), 2, vec_bytes)
    if run is None:
        return
    mine = src._np.view(np.uint16)
    mine = mine ^ np.uint16(0x8000) if flip else mine & np.uint16(0x7FFF)
    np.copyto(bits, mine, where=nans & run.mask)
