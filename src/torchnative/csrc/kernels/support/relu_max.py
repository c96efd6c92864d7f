"""``max(x, +0.0)`` as upstream's clamp_min(0) computes it -- ``x`` itself unless ``x < 0``, so
-0.0 and every NaN keep their bits -- on a C-contiguous float32/float64 array.

numpy's ``maximum(0, x)`` is one pass against the bit select's three (support/zero_select.py), but
which of two equal zeros or of a number and a NaN it returns is its inner loop's choice: the x86
vector loops return the second operand (``x``), a NEON ``fmax`` returns +0.0 for ``max(+0.0,
-0.0)``. The zeros are an array, not a scalar: numpy's vector loops take two contiguous operands,
and a scalar one sends ``maximum`` through a loop about three times slower (docs/performance.md, "On
the Zen 3 EPYC (2026-12-07, night)"). So the first call of each dtype compares that ``maximum`` with
the bit select, bit for bit: every length up to three vectors of the widest register (two
alignments), and lengths around four vectors and long ones at every alignment, over signed zeros,
NaNs with payloads and signs, infinities and subnormals (every one of them at every lane of a short
window); the lane that agrees everywhere is kept, else the bit select is.
"""

from __future__ import annotations

import numpy as np

from .zero_select import zero_where

_maximum, _less = np.maximum, np.less
_FAST: dict = {}   # numpy dtype -> whether maximum(0, x) is the bit select on this machine
_BLOCK = 1 << 15   # elements per maximum call: the zeros (128/256 KiB) stay in the CPU's cache
_ZEROS: dict = {}  # numpy dtype -> _BLOCK zeros


def relu_array(x: np.ndarray) -> np.ndarray:
    """A fresh C-contiguous array: ``x`` where not ``x < 0``, else +0.0 (``x`` C-contiguous,
    float32 or float64, at least one dimension)."""
    fast = _FAST.get(x.dtype)
    if fast is None:
        fast = _FAST[x.dtype] = maximum_is_select(x.dtype)
    return max_zero(x) if fast else zero_where(_less(x, x.dtype.type(0)), x)


def max_zero(x: np.ndarray) -> np.ndarray:
    """``maximum(zeros, x)`` into a fresh array of ``x``'s shape (``x`` C-contiguous), a block
    of _BLOCK elements at a time against one array of zeros."""
    zeros = _ZEROS.get(x.dtype)
    if zeros is None:
        zeros = _ZEROS[x.dtype] = np.zeros(_BLOCK, x.dtype)
    n = x.size
    if n <= _BLOCK:
        return _maximum(zeros[:n].reshape(x.shape), x)
    out = np.empty(x.shape, x.dtype)
    flat, dest = x.reshape(-1), out.reshape(-1)
    for lo in range(0, n, _BLOCK):
        hi = min(lo + _BLOCK, n)
        _maximum(zeros[:hi - lo], flat[lo:hi], out=dest[lo:hi])
    return out


def maximum_is_select(dtype) -> bool:
    """Whether ``maximum(0, x)`` gives the bit select's bits on every probe."""
    dtype = np.dtype(dtype)
    bits = np.dtype(f"u{dtype.itemsize}")
    one = dtype.type(1)
    quiet = np.array([np.nan], dtype).view(bits)[0]
    payloads = np.array([quiet, quiet | 1, quiet | (quiet >> 3)], bits)
    sign = bits.type(1) << bits.type(8 * dtype.itemsize - 1)
    nans = np.concatenate((payloads, payloads | sign))
    tiny = np.finfo(dtype).smallest_subnormal
    specials = np.concatenate((np.array([0.0, -0.0, np.inf, -np.inf, tiny, -tiny, one, -one],
                                        dtype), nans.view(dtype)))
    rng = np.random.default_rng(0)
    # the specials, then normal values, repeated: a window shorter than that period is tried at
    # every start in it, a longer one holds them all (at lanes that move with its length)
    period = np.concatenate((specials, rng.standard_normal(17).astype(dtype)))
    pattern = np.resize(period, 4200 + period.size)
    buf = np.empty(4200 + 64, dtype)
    long = np.resize(period, _BLOCK + 4099)  # blocks, and a partial one after them
    zero = dtype.type(0)
    lanes = 64 // dtype.itemsize          # the widest register's, so every alignment is tried
    p = period.size
    probes = [(n, k, s) for n in range(1, 3 * lanes + 8) for k in (0, 1)
              for s in (range(p) if n < p else (n % p,))] + \
        [(n, k, n % p) for n in (4 * lanes - 1, 4 * lanes, 4 * lanes + 1, 1025, 4099)
         for k in range(lanes)]
    with np.errstate(all="ignore"):
        for n, offset, start in probes:
            x = buf[offset:offset + n]
            x[...] = pattern[start:start + n]
            if not _agrees(x, bits, zero):
                return False
        return _agrees(long, bits, zero)


def _agrees(x, bits, zero) -> bool:
    got = max_zero(x)
    want = zero_where(_less(x, zero), x)
    return got.dtype == x.dtype and np.array_equal(got.view(bits), want.view(bits))
