"""Floating-point helpers that make numpy round exactly as upstream's compiled kernels do.

Upstream's CPU kernels are built with FMA contraction on (the AVX2/AVX512 builds fuse
``a * b + c``), call glibc's double-precision libm (log, log1p, sincos, tan, exp), and convert
double -> Half/BFloat16 through float. numpy offers none of these directly:

* ``fma32``/``fma64`` emulate a fused multiply-add with one rounding. float32: the product is
  exact in float64, the sum is rounded to odd in float64, then to float32 (round-to-odd at
  53 >= 24 + 2 bits makes the second rounding correct). float64: Boldo & Melquiond's
  emulation (exact product by Dekker splitting, TwoSum, round-to-odd, final add).
* ``libmf``/``safe_libm`` apply glibc's float / double functions element by element (the
  samplers' double functions over arrays: ``platform.libm_arrays``, which runs numpy's loop
  where that loop is glibc's).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ..platform import cpu_capability
from ..platform import libm as glibc, libm_arrays

F32, F64 = np.float32, np.float64


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_to_odd(s, err):
    """``s`` rounded to odd given the exact residual ``err``: nudge an even ``s`` one ulp towards it."""
    bits = s.view(np.int64)
    nudge = (err != 0) & ((bits & 1) == 0)
    if not nudge.any():
        return s
    step = np.where(np.signbit(err) == np.signbit(s), 1, -1).astype(np.int64)
    return np.where(nudge, bits + step, bits).view(F64)


def _fma32_exact(a64, b64, c64) -> np.ndarray:
    """float32 ``a * b + c`` via round-to-odd (operands given as float64)."""
    p = a64 * b64  # exact: 48 bits
    s, err = _two_sum(p, c64)
    return _round_to_odd(np.atleast_1d(s), np.atleast_1d(err)).astype(F32)


# the 29 float64 mantissa bits float32 drops: exactly half an ulp (0-d arrays: a ufunc converts
# a numpy scalar operand on every call, a sizeable part of the recheck on a small array)
_MID32 = np.array(1 << 28, np.int64)
_LOW32 = np.array((1 << 29) - 1, np.int64)
_TINY32 = F64(2.0 ** -125)  # below this float32's ulp is coarser (subnormals): no shortcut


_CHUNK = 1 << 15  # lanes per step: the float64 temporaries stay in the CPU's cache
_SMALL = 1 << 13  # up to this many lanes whole-array temporaries (below the allocator's mmap size) are cheaper

_TLS = threading.local()


def _buffers():
    """This thread's chunk buffers, made once: fresh ones per call were allocated with mmap at
    this size, and their page faults cost more than the arithmetic on mid-sized tensors."""
    b = getattr(_TLS, "bufs", None)
    if b is None:
        m = _CHUNK
        b = _TLS.bufs = ([np.empty(m, F64) for _ in range(3)], np.empty(m, F64),
                         np.empty(m, np.int64), np.empty(m, np.bool_), np.empty(m, F64),
                         np.empty(m, np.bool_), np.empty(m, np.bool_))
    return b


def _lanes(v, shape) -> np.ndarray:
    """``v`` (float32) over ``shape``, flattened (a view where it has that shape already); a
    single value stays 0-d, as float64."""
    if v.size == 1:
        return v.reshape(()).astype(F64)
    return np.broadcast_to(v, shape).reshape(-1)


def _needs_recheck(s) -> np.ndarray:
    """Lanes of the float64 sums ``s`` whose rounding to float32 could differ from one rounding:
    on a float32 midpoint, or in float32's subnormal range (a zero sum is exact: float64 sums
    do not underflow to zero, and sparse gradients' optimizer updates are mostly zeros)."""
    near = (s.view(np.int64) & _LOW32) == _MID32
    mag = np.abs(s)
    near |= (mag < _TINY32) & (mag != 0)
    return near


# The same test in fewer numpy calls: a midpoint is a sum whose low 29 bits are 2**28, and a
# smallest |s| above 2**-125 (NaN-free) rules out the subnormal range; given the float32 roundings
# ``r`` (the chunked loop has them), a smallest |r| above 2**-125 does too, since rounding is
# monotone and 2**-125 is a float32.
_TINY32_F32 = F32(2.0 ** -125)


def _any_recheck(s) -> bool:
    """Whether any lane of the sums ``s`` needs the recheck (``_needs_recheck``)."""
    if np.count_nonzero((s.view(np.int64) & _LOW32) == _MID32):
        return True
    return not (np.minimum.reduce(np.abs(s), axis=None) > _TINY32) and \
        bool(_needs_recheck(s).any())


def _shape3(a, b, c) -> tuple:
    """The broadcast shape of three arrays; the common cases without numpy's general walk."""
    shape = a.shape
    for v in (b, c):
        if v.shape != shape:
            if not v.ndim:
                continue
            if not shape:
                shape = v.shape
                continue
            if len(v.shape) == len(shape) and all(
                    m == 1 or m == k for m, k in zip(v.shape, shape)):
                continue  # a (1, C, 1, 1) vector against an (N, C, H, W) array
            return np.broadcast_shapes(a.shape, b.shape, c.shape)
    return shape


def fma32(a, b, c, out=None, wide=None) -> np.ndarray:
    """float32 ``a * b + c`` rounded once (like vfmadd*ps), into ``out`` when given (a float32
    array of the broadcast shape; it may be one of the operands themselves). ``wide``: ``a``
    already widened to float64 (C-contiguous, of the broadcast shape), which the sums may
    overwrite: a caller that has it saves the widening copy (batch norm's statistics make it).

    The product is exact in float64, so ``s = p + c`` in float64 is the exact result rounded
    once; rounding ``s`` to float32 then gives the single-rounding answer unless ``s`` is
    inexact and sits exactly on a float32 midpoint (the only way a second rounding can go wrong)
    or in float32's subnormal range. Those few lanes are redone with round-to-odd. Large
    operands are widened chunk by chunk into reused float64 buffers (widening whole arrays first
    made the optimizers' multiply-adds memory-bound), and their roundings written straight into
    the destination.
    """
    a, b, c = np.asarray(a, F32), np.asarray(b, F32), np.asarray(c, F32)
    # a factor of +-1 makes the product exact in float32: one rounding of the float32 sum (an
    # optimizer's alpha=1.0)
    unit = b.item() if not b.ndim else a.item() if not a.ndim else 0.0
    if unit == 1.0 or unit == -1.0:
        other = a if not b.ndim else b
        sum_ = np.add if unit > 0 else np.subtract
        return sum_(c, other, out=out) if out is not None else np.asarray(sum_(c, other), F32)
    shape = _shape3(a, b, c)
    n = math.prod(shape)
    if wide is not None and out is None and len(shape) > 1 and shape[0] > 1 and \
            n // shape[0] <= _CHUNK and a.shape == shape == wide.shape and \
            wide.dtype == F64 and wide.flags.c_contiguous:
        return _fma32_rows(a, b, c, shape, n, wide)
    if n <= _SMALL:  # whole-array temporaries: every operand is read before ``out`` is written
        s = np.multiply(a, b, dtype=F64)
        if type(s) is np.ndarray and s.shape == shape:  # (0-d operands give a numpy scalar)
            np.add(s, c, out=s)
        else:
            s = np.add(s, c, dtype=F64)
        flat = s.reshape(-1)
        if not (n and _any_recheck(flat)):  # the common case: one rounding of the sums
            if out is None:
                return flat.astype(F32).reshape(shape)
            np.copyto(out, s, casting="unsafe")
            return out
        r = flat.astype(F32)
        _redo_lanes(r, flat, (a, b, c), shape, np.flatnonzero(_needs_recheck(flat)))
        if out is None:
            return r.reshape(shape)
        np.copyto(out, r.reshape(shape))
        return out
    if out is not None and not _chunks_into(out, shape, (a, b, c)):
        np.copyto(out, fma32(a, b, c))
        return out
    if out is None and len(shape) > 1 and shape[0] > 1 and n // shape[0] <= _CHUNK and \
            any(v.ndim and v.shape != shape for v in (a, b, c)):
        return _fma32_rows(a, b, c, shape, n)
    ops = [_lanes(v, shape) for v in (a, b, c)]
    dest = np.empty(n, F32) if out is None else out.reshape(-1)
    wide_all, s_buf, low_buf, near_buf, abs_buf, tiny_buf, nz_buf = _buffers()
    wide = [w if v.ndim else None for v, w in zip(ops, wide_all)]
    for lo in range(0, n, _CHUNK):
        hi = min(lo + _CHUNK, n)
        k = hi - lo
        part = []
        for v, w in zip(ops, wide):
            if w is None:
                part.append(v)
            else:
                w = w[:k]
                w[...] = v[lo:hi]
                part.append(w)
        s = s_buf[:k]
        np.multiply(part[0], part[1], out=s)
        np.add(s, part[2], out=s)
        r = dest[lo:hi]
        r[...] = s  # every operand lane of the chunk is read (widened) before it is written
        near = _near_buffered(s, r)
        if near is not None:  # only an inexact sum can round twice: check those lanes exactly
            _redo_inexact(r, s, part, np.flatnonzero(near))
    return dest.reshape(shape) if out is None else out


def _chunks_into(out, shape, ops) -> bool:
    """Whether the chunked loop can write into ``out``: a C-contiguous float32 array of
    ``shape``, and every operand either ``out``'s own lanes or memory apart from it (a partly
    overlapping operand would be read after its lanes were written)."""
    if out.shape != shape or out.dtype != F32 or not out.flags.c_contiguous or \
            not out.flags.writeable:
        return False
    for v in ops:
        if v.ndim and v is not out and np.may_share_memory(v, out) and not (
                v.shape == shape and v.strides == out.strides and
                v.ctypes.data == out.ctypes.data):
            return False
    return True


def _near_buffered(s, r=None):
    """The lanes of a chunk ``s`` (1-d, at most _CHUNK lanes) that ``_needs_recheck`` flags, as
    a view of this thread's near buffer (no allocation), or None when there are none. Given the
    chunk's float32 roundings ``r``, a smallest ``|r|`` above 2**-125 rules out the subnormal
    range without its four passes (see ``_any_recheck``)."""
    k = s.size
    _, _, low_buf, near_buf, abs_buf, tiny_buf, nz_buf = _buffers()
    near = near_buf[:k]
    np.equal(np.bitwise_and(s.view(np.int64), _LOW32, out=low_buf[:k]), _MID32, out=near)
    if r is not None and np.abs(r, out=abs_buf[:k].view(F32)[:k]).min() > _TINY32_F32:
        return near if near.any() else None
    mag = np.abs(s, out=abs_buf[:k])
    tiny = np.less(mag, _TINY32, out=tiny_buf[:k])
    nonzero = np.not_equal(mag, 0, out=nz_buf[:k])
    near |= np.bitwise_and(tiny, nonzero, out=tiny)  # a zero sum is exact (above)
    return near if near.any() else None


def _fma32_rows(a, b, c, shape, n, wide=None) -> np.ndarray:
    """fma32's large path over a broadcast ``shape`` (batch norm's ``x * alpha + beta``), in
    chunks of whole leading rows: the operands broadcast inside numpy's loops (widened there)
    instead of being materialized and copied; the same float64 sums, roundings and rechecks.
    ``wide``: ``a`` widened (see fma32), the chunks' sums computed in its place."""
    rows = shape[0]
    per = n // rows
    step = max(1, _CHUNK // per)
    out = np.empty(shape, F32)
    s_buf = _buffers()[1]
    nd = len(shape)
    # numpy runs a float32 operand of a float64 ufunc through its buffered casting loop, and a
    # broadcast one (stride 0 in the inner loop) through its generic strided loop, each several
    # times a contiguous same-dtype pass. So an operand the rows share (batch norm's per-channel
    # vectors) is widened once into one whole row, and a row-varying first factor is widened by
    # a plain copy into the sums' buffer: the same exact products and one rounding of each sum
    varies = [v.ndim == nd and v.shape[0] != 1 for v in (a, b, c)]
    ops = [v if vary else _widened_row(v, shape) for v, vary in zip((a, b, c), varies)]
    for lo in range(0, rows, step):
        hi = min(lo + step, rows)
        part = [v[lo:hi] if vary else v for v, vary in zip(ops, varies)]
        if wide is None:
            s = s_buf[:(hi - lo) * per].reshape((hi - lo,) + shape[1:])
            np.copyto(s, part[0])
        else:
            s = wide[lo:hi]
        np.multiply(s, part[1], out=s)
        np.add(s, part[2], out=s)
        out[lo:hi] = s
        flat = s.reshape(-1)
        rounded = out[lo:hi].reshape(-1)
        near = _near_buffered(flat, rounded)
        if near is not None:
            _redo_lanes(rounded, flat, part, s.shape, np.flatnonzero(near))
    return out


def _widened_row(v, shape) -> np.ndarray:
    """``v`` (broadcasting to one row of ``shape``) as a float64 array of one whole row: its
    own few values widened, then copied out by a same-dtype broadcast (a widening cast of the
    broadcast view runs numpy's generic strided loop)."""
    row = np.empty((1,) + shape[1:], F64)
    row[...] = v.astype(F64)
    return row


def _redo_lanes(r, s, ops, shape, i) -> None:
    """``_redo_inexact`` of the flat lanes ``i`` of ``r``/``s``, with the float32 operands
    (broadcasting to ``shape``) read at those lanes only: the few lanes a recheck flags no
    longer widen whole broadcast operands."""
    at = np.unravel_index(i, shape) if shape else ()
    nd = len(shape)
    lanes = []
    for v in ops:  # v's dims are shape's last ones; a broadcast dim reads index 0
        off = nd - v.ndim
        lanes.append(np.asarray(v[tuple(at[off + k] if n != 1 else 0
                                        for k, n in enumerate(v.shape))], F64))
    ri = r[i]
    _redo_inexact(ri, s[i], lanes, np.arange(i.size))
    r[i] = ri


def _inexact(s, ops, i) -> np.ndarray:
    """Those of lanes ``i`` whose float64 sum ``s`` of ``ops[0] * ops[1] + ops[2]`` was
    inexact (the product is exact; TwoSum's residual tells)."""
    ai, bi, ci = (v[i] if v.ndim else v for v in ops)
    si = s[i]
    p = ai * bi
    back = si - p
    return i[((p - (si - back)) + (ci - back)) != 0]


def _redo_inexact(r, s, ops, i) -> None:
    """Lanes ``i`` of ``r`` (``s`` rounded to float32) whose sum was inexact, recomputed with
    round-to-odd."""
    inexact = _inexact(s, ops, i)
    if inexact.size:
        r[inexact] = _fma32_exact(*[v[inexact] if v.ndim else v for v in ops])


def fma32_rounded(a64, b64, c64, risky) -> np.ndarray:
    """``fma32`` of float64 operands that hold float32 values (arrays of one length or 0-d).

    With ``risky`` (a bool array) the lanes that could round twice are marked there and left
    as the plain rounding, for a caller that recomputes them; without, they are fixed here.
    """
    s = np.multiply(a64, b64, dtype=F64)
    s = np.add(s, c64, out=s if s.ndim else None)
    s = np.atleast_1d(s)
    r = s.astype(F32)
    near = _needs_recheck(s)
    if near.any():  # only an inexact sum can round twice: check those lanes exactly
        i = np.flatnonzero(near)
        if risky is not None:
            risky[_inexact(s, (a64, b64, c64), i)] = True
        else:
            _redo_inexact(r, s, (a64, b64, c64), i)
    return r


def _split(x):
    t = 134217729.0 * x  # 2**27 + 1
    hi = t - (t - x)
    return hi, x - hi


def fma64(a, b, c) -> np.ndarray:
    """float64 ``a * b + c`` rounded once (like vfmadd*sd), for finite, non-extreme operands."""
    if (type(c) is float or np.ndim(c) == 0) and c == 0:  # one rounding of the product
        p = np.asarray(a, F64) * np.asarray(b, F64)  # itself; adding the zero gives an exact
        return np.atleast_1d(p + np.asarray(c, F64))  # zero product the sign fma gives it
    a, b, c = np.broadcast_arrays(np.asarray(a, F64), np.asarray(b, F64), np.asarray(c, F64))
    a, b, c = np.atleast_1d(a), np.atleast_1d(b), np.atleast_1d(c)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # a*b == p + e exactly
    th, tl = _two_sum(c, p)
    v, verr = _two_sum(tl, e)
    out = th + _round_to_odd(v, verr)
    naive = p + c
    return np.where(np.isfinite(out), out, naive)


def contracted32(a, b, c, out=None, wide=None) -> np.ndarray:
    """float32 ``a * b + c`` as upstream's build compiles it: one rounding where the compiler
    contracts it (AVX2/AVX512 builds), two in the DEFAULT build (no FMA instruction); into
    ``out`` when given, ``wide`` as ``fma32`` takes it."""
    if cpu_capability.CONTRACTS_FMA:
        return fma32(a, b, c, out, wide)
    r = np.asarray(np.asarray(a, F32) * np.asarray(b, F32) + np.asarray(c, F32), F32)
    if out is None:
        return r
    np.copyto(out, r)
    return out


def contracted64(a, b, c) -> np.ndarray:
    """float64 ``a * b + c`` as upstream's build compiles it (see ``contracted32``)."""
    if cpu_capability.CONTRACTS_FMA:
        return fma64(a, b, c)
    return np.asarray(np.asarray(a, F64) * np.asarray(b, F64) + np.asarray(c, F64), F64)


def libmf(name: str, x: np.ndarray) -> np.ndarray:
    """Apply glibc's float function ``name`` (``logf``, ``cosf``, ...) to every element of a
    float32 array, through ctypes: the scalar kernels of upstream's DEFAULT build call these, and
    neither numpy nor ``math`` (double precision) reproduces their last bit."""
    return libm_arrays.each(glibc.function(name, single=True), [x], F32)


def safe_libm(fn, x: np.ndarray) -> np.ndarray:
    """``libm`` that returns C's answers where Python's ``math`` raises (log(0) = -inf, ...)."""
    return libm_arrays.each(libm_arrays.c_like(fn, getattr(np, fn.__name__)), [x], F64)


def f32_from_bits(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(F32)[0]

