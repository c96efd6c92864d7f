"""Upstream's vector-norm loops on CPU (``norm_kernel_tensor_iterator_impl`` in
aten/src/ATen/native/cpu/ReduceOpsKernel.cpp), replayed over numpy so norms agree bit for bit.

Two loops decide the bits:

* **The last-dim loop** (ord 2, float32/float64/bfloat16 in and out, the reduced dims coalescing
  into one contiguous innermost dim): per output, 32-byte vectors are squared and added into
  ``Vectorized<acc_t>`` lanes (8 floats, 4 doubles; a bfloat16 vector of 16 is two float
  vectors, low half first) with a rounded product and a rounded add (the vector ``*`` and
  ``+=`` stay two instructions), the lanes are folded left to right into lane 0, then the scalar
  tail adds ``x * x``. The compiler vectorises that tail in SSE-width groups (4 floats, 2
  doubles) whose squares are rounded, and contracts the rest into a fused multiply-add in the
  AVX2 build; the DEFAULT build has no FMA instruction. ``norm_stub`` is a ``REGISTER_DISPATCH``
  stub, so an AVX512 machine runs the AVX2 kernel and vectors are 32 bytes everywhere.
* **The generic loop** (``binary_kernel_reduce`` with NormOps, NormOneOps, NormTwoOps,
  AbsMaxOps, AbsMinOps, NormZeroOps) for everything else: each output accumulates its reduced
  elements one by one in TensorIterator's order (``acc + pow(|x|, p)``, NormTwo's
  ``acc + |x| * |x|`` with a rounded square in every build) in float for
  float16/bfloat16/float32/complex64 and double for float64/complex128. A single output of at least ``GRAIN_SIZE`` elements is cut into one
  linear range per thread, each accumulated from the identity, and the per-thread results are
  combined left to right.

Sums are of precomputed terms, so ``np.add.accumulate`` (strictly left to right) replays them;
only the scalar tail (at most 15 elements) steps in Python, over all outputs at once.
"""

from __future__ import annotations

import math

import numpy as np

from ...platform import cpu_capability, libm
from ...random.fpmath import fma32, fma64
from .cascade_sum import GRAIN_SIZE, VEC_BYTES, geometry, in_order

_SSE_BYTES = 16                 # the width the compiler vectorises the scalar tail with


def _fused(a, b, c):
    """``a * b + c`` rounded once, in a's dtype (float32 or float64)."""
    return (fma32 if a.dtype == np.float32 else fma64)(a, b, c).reshape(np.shape(c))


def rows_in_order(a: np.ndarray, strides, axes):
    """``a`` as (outputs, reduced): outputs in C order of the kept dims, each output's reduced
    elements in the order TensorIterator visits them; and whether the reduction is upstream's
    ``is_reduce_lastdim`` (the reduced dims coalesce into one contiguous innermost dim)."""
    g = geometry(a.shape, strides, axes)
    reduced = [d for d in range(g.ndim) if g.outs[d] == 0]
    lastdim = len(reduced) == 1 and reduced[0] == 0 and g.ins[0] == 1
    red = [d for d in g.perm if d in axes]
    kept = [d for d in range(a.ndim) if d not in axes]
    n_red = math.prod(a.shape[d] for d in axes)
    X = a.transpose(kept + red[::-1]).reshape(-1, n_red)
    return X, lastdim


def _tail(b: np.ndarray, T: np.ndarray) -> np.ndarray:
    """The scalar tail ``b += x * x``: SSE-width groups with rounded squares, the rest fused
    (both rounded in the DEFAULT build)."""
    n = T.shape[1]
    fuse = cpu_capability.CONTRACTS_FMA
    grouped = n // (_SSE_BYTES // T.itemsize) * (_SSE_BYTES // T.itemsize) if fuse else n
    for k in range(n):
        x = T[:, k]
        b = b + x * x if k < grouped else _fused(x, x, b)
    return b


def lastdim_sumsq(X: np.ndarray, vec: int) -> np.ndarray:
    """The last-dim loop's sum of squares per row of X (float32 or float64); ``vec`` is the
    input's elements per 32-byte vector (16 for bfloat16, else the lane count)."""
    rows, n = X.shape
    lanes = VEC_BYTES // X.itemsize
    nv = n // vec * vec
    main = X[:, :nv]
    acc = in_order((main * main).reshape(rows, nv // lanes, lanes).transpose(1, 0, 2))
    b = acc[:, 0]
    for j in range(1, lanes):
        b = b + acc[:, j]
    return _tail(b, X[:, nv:])


def magnitudes(X: np.ndarray) -> np.ndarray:
    """``std::abs`` of every element: for complex64 glibc's ``hypotf`` (the square root of the
    double sum of the double squares, rounded to float; numpy's own complex ``abs`` differs in
    the last bit), for complex128 ``hypot``."""
    if X.dtype == np.complex64:
        re, im = X.real.astype(np.float64), X.imag.astype(np.float64)
        r = np.sqrt(re * re + im * im).astype(np.float32)
        return np.where(np.isinf(re) | np.isinf(im), np.float32(np.inf), r)  # hypot(inf, nan)
    if X.dtype.kind == "c":
        return np.hypot(X.real, X.imag)
    return np.abs(X)


def _pow(x: np.ndarray, e) -> np.ndarray:
    """``std::pow`` in x's dtype: glibc's ``powf`` for float, ``pow`` for double (through
    ctypes: numpy's own power differs in the last bit on some inputs, and ``math.pow`` raises
    where C returns inf)."""
    f = _libm_pow(x.dtype == np.float32)
    e = float(x.dtype.type(e))
    return np.fromiter((f(v, e) for v in x.ravel().tolist()), x.dtype, x.size).reshape(x.shape)


def _libm_pow(single: bool):
    return libm.function("powf", single=True, nargs=2) if single else \
        libm.function("pow", nargs=2)


def _generic(X: np.ndarray, p: float, powsum: bool) -> np.ndarray:
    """One pass of binary_kernel_reduce over rows of |x| (acc dtype): the accumulated value
    before ``project``. ``powsum`` (linalg._powsum) takes NormOps for every ord but 2."""
    if powsum and p != 2:
        return in_order(_pow(X, X.dtype.type(p)), 1)
    if p == 0:
        return in_order((X != 0).astype(X.dtype), 1)
    if p == math.inf:
        return np.maximum.reduce(X, axis=1, initial=0)
    if p == -math.inf:
        return np.minimum.reduce(X, axis=1, initial=np.inf)
    if p == 1:
        return in_order(X, 1)
    if p == 2:
        return in_order(X * X, 1)
    return in_order(_pow(X, X.dtype.type(p)), 1)


def _combine(parts: list, p) -> np.ndarray:
    if p == math.inf:
        return np.maximum.reduce(parts, axis=0, initial=0)
    if p == -math.inf:
        return np.minimum.reduce(parts, axis=0, initial=np.inf)
    acc = np.zeros_like(parts[0])
    for v in parts:
        acc = acc + v
    return acc


def generic_accumulate(X: np.ndarray, p: float, threads: int,
                       powsum: bool = False) -> np.ndarray:
    """binary_kernel_reduce's accumulated values per row of |x|, with its split of a single
    large output across threads."""
    rows, n = X.shape
    if rows != 1 or n < GRAIN_SIZE or threads == 1:
        return _generic(X, p, powsum)
    nt = min(threads, -(-n // GRAIN_SIZE)) if n > GRAIN_SIZE else 1
    chunk = -(-n // nt)
    parts = [_generic(X[:, t * chunk:min(n, (t + 1) * chunk)], p, powsum)
             for t in range(nt) if t * chunk < n]
    return _combine(parts, None if powsum else p)


def project(acc: np.ndarray, p: float) -> np.ndarray:
    """NormOps' ``project``: the root in the accumulation dtype."""
    if p == 2:
        return np.sqrt(acc)
    if p in (0, 1, math.inf, -math.inf):
        return acc
    one = acc.dtype.type(1)
    return _pow(acc, one / acc.dtype.type(p))
