"""The cascade sum of contiguous rows, one output per row, in a handful of numpy calls.

This is the common reduction (``x.mean(-1)``, ``x.sum(-1)`` of a dense tensor: RMSNorm, layer
statistics): SumKernel.cpp's contiguous inner loop on every row. It computes exactly what
``cascade_sum._loop2d`` computes for that loop -- vectors of ``vs`` lanes, ``row_sum``'s four
interleaved partial sums over ``multi_row_sum``'s cascade, the rows' three vectors left over,
then the scalar tail and the lanes left to right -- but batched over rows along axis 0 with the
row's own axis kept in place, so no vector is moved and no general machinery runs. Every
sequential sum is ``np.add.accumulate`` (strictly left to right), never numpy's pairwise sum.
"""

from __future__ import annotations

import functools

import numpy as np

ILP = 4          # row_sum's interleaved partial sums
NUM_LEVELS = 4   # multi_row_sum's cascade depth (both loops unroll its four levels)


def level_step(n: int) -> int:
    """multi_row_sum's chunk of ``2**level_power`` rows for ``n`` rows (level_power from
    CeilLog2(n), at least 4)."""
    return 1 << max(4, (1 if n <= 2 else (n - 1).bit_length()) // NUM_LEVELS)


def _seq(x: np.ndarray, axis: int = 1) -> np.ndarray:
    """``acc = x[0]; acc += x[1]; ...`` along ``axis`` (zeros when there is nothing to add).

    ``x``'s last axis (the lanes, at least 2 wide) is its fastest, so numpy's reduce adds along
    ``axis`` one term at a time into every lane (its pairwise sum runs only along the fastest
    axis); the tests compare this with ``np.add.accumulate`` and with upstream."""
    k = x.shape[axis]
    if k == 0:
        return np.zeros(x.shape[:axis] + x.shape[axis + 1:], x.dtype)
    if k == 1:
        return x.take(0, axis)
    if k == 2:
        return x.take(0, axis) + x.take(1, axis)
    return np.add.reduce(x, axis=axis)


def _final(lanes: np.ndarray) -> np.ndarray:
    """The sequential sum of each row of ``lanes`` (R, k): along the fastest axis, so through
    ``accumulate`` (one row, a decode step's, as a 1-d array: numpy's cheapest call)."""
    if lanes.shape[0] == 1:
        return np.add.accumulate(lanes[0])[-1:]
    return np.add.accumulate(lanes, axis=1)[:, -1]


def _multi_row_sum(x: np.ndarray) -> np.ndarray:
    """multi_row_sum over axis 1 of ``x`` (R, n, L): R*L independent cascades."""
    return multi_row_plan(x.shape[1])(x)


@functools.lru_cache(maxsize=None)
def multi_row_plan(n: int, zero_levels: bool = True):
    """multi_row_sum over the ``n`` rows (axis 1) of an (R, n, L) array, its cascade geometry
    worked out once: the rows left over at each level, the chunks of ``level_step(n)`` rows, the
    levels' sums joined left to right. Without ``zero_levels`` a level with no rows of its own
    (its sum +0) is left out rather than added: only a zero's sign can differ then, for a caller
    that adds +0 to the result last, as the column loop does."""
    step = level_step(n)
    m = n // step
    g1 = m // step
    g2 = g1 // step
    keep = zero_levels

    def chunks(x, groups):
        return _seq(x[:, :groups * step].reshape(x.shape[0], groups, step, x.shape[2]), 2)

    def run(x):
        terms = [_seq(x[:, m * step:])] if keep or n > m * step else []   # the tail: level 0
        if m:
            c0 = chunks(x, m)
            if keep or m > g1 * step:
                terms.append(_seq(c0[:, g1 * step:]))
            if g1:
                c1 = chunks(c0, g1)
                if keep or g1 > g2 * step:
                    terms.append(_seq(c1[:, g2 * step:]))
                if keep or g2:
                    terms.append(_seq(chunks(c1, g2)))  # level 3 never flushes
        acc = terms[0]  # never empty: n >= 1 rows land in some level
        for v in terms[1:]:
            acc = acc + v
        return acc

    return run


def row_sums(X: np.ndarray, vs: int) -> np.ndarray:
    """Each row of ``X`` (R, n), n >= vs, summed as the contiguous inner loop sums it, with
    vectors of ``vs`` lanes; returns (R,)."""
    R, n = X.shape
    nv = n // vs
    q = nv // ILP
    V = X[:, :nv * vs]
    if q:
        parts = _multi_row_sum(V[:, :q * ILP * vs].reshape(R, q, ILP * vs)).reshape(R, ILP, vs)
    else:
        parts = np.zeros((R, ILP, vs), X.dtype)
    if nv > q * ILP:   # the vectors left over join after the first partial sum
        rest = V[:, q * ILP * vs:].reshape(R, nv - q * ILP, vs)
        parts = np.concatenate((parts[:, :1], rest, parts[:, 1:]), axis=1)
    lanes = _seq(parts)
    if n > nv * vs:     # final_acc: the scalar tail first, then the lanes
        lanes = np.concatenate((X[:, nv * vs:], lanes), axis=1)
    return _final(lanes)
