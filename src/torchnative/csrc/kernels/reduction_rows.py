"""Row plans: ``cascade_rows.row_sums`` with its slicing decided once per (rows, length, lanes).

A decode step reduces the same few shapes thousands of times (RMSNorm's ``mean(-1)``), and
``row_sums`` works its level arithmetic out on every call. A plan does that once and keeps
only the numpy calls, in the same order on the same values: the same bits (tests compare the
two on special values). Shapes a plan does not cover (multi_row_sum's second flush level)
keep ``row_sums`` itself.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .support.cascade_rows import ILP, level_step, row_sums

_add = np.add
_reduce = np.add.reduce
_accumulate = np.add.accumulate


def _seq(k: int):
    """cascade_rows._seq over axis 1 of k >= 1 terms: the first term itself for one, else a
    reduce along a slower axis (strictly left to right into every lane)."""
    if k == 1:
        return lambda v: v[:, 0]
    return lambda v: _reduce(v, axis=1)


def _seq_rows(k: int, axis: int = -2):
    """``_seq`` for many rows: the sum along ``axis`` (-2: of (..., k, W); -1: of (..., k)),
    strictly left to right, as k - 1 adds into one accumulator. numpy's reduce along a middle
    axis steps through every (row, term) pair with a W-wide inner loop; an add of whole slices
    steps through the rows only, so it costs about half (a prefill's 512 x 576 mean: 180 -> 100
    us). The last axis is the lanes' ``_accumulate(lanes, axis=1)[:, -1]``."""
    tail = (slice(None),) if axis == -2 else ()
    terms = [(Ellipsis, j) + tail for j in range(k)]
    if k == 1:
        return lambda v: v[terms[0]]

    def run(v):
        acc = _add(v[terms[0]], v[terms[1]])
        for j in terms[2:]:
            _add(acc, v[j], out=acc)
        return acc

    return run


MANY_ROWS = 96   # rows from which the adds of whole slices beat numpy's reduce and accumulate
                 # (their ~26 calls cost the same whatever the rows; the reduce grows with them)


def row_plan(R: int, n: int, vs: int):
    """A function of X (R, n), C-contiguous, n >= vs, returning ``row_sums(X, vs)``."""
    nv = n // vs
    q = nv // ILP
    W = ILP * vs
    body = q * W
    step = level_step(q) if q else 0
    m = q // step if q else 0
    if not q or m >= step:
        return partial(row_sums, vs=vs)
    left, tail = nv - q * ILP, n - nv * vs
    k0 = q - m * step
    lead = m * step
    many = R >= MANY_ROWS
    seq = _seq_rows if many else _seq
    seq0 = seq(k0) if k0 else None
    seq1 = seq(m) if m else None
    chunk = _seq_rows(step) if many and m else None
    lane_sum = seq(ILP + left) if many else None
    last = _seq_rows(vs + (n - nv * vs), -1) if many else None

    if R == 1 and not left and not tail:
        return _one_row(n, q, W, vs, step, m, k0, lead)

    def run(X):
        M = (X if body == n else X[:, :body]).reshape(R, q, W)
        if m:
            c0 = M[:, :lead].reshape(R, m, step, W)
            c0 = chunk(c0) if many else _reduce(c0, axis=2)
            r1 = seq1(c0)
            acc0 = seq0(M[:, lead:]) if k0 else np.zeros((R, W), X.dtype)
            parts = _add(acc0, r1)
        else:
            parts = seq0(M)
        parts = parts.reshape(R, ILP, vs)
        if left:   # the vectors left over join after the first partial sum
            rest = X[:, body:nv * vs].reshape(R, left, vs)
            parts = np.concatenate((parts[:, :1], rest, parts[:, 1:]), axis=1)
        lanes = lane_sum(parts) if many else _reduce(parts, axis=1)
        if tail:   # final_acc: the scalar tail first, then the lanes
            lanes = np.concatenate((X[:, nv * vs:], lanes), axis=1)
        if many:
            return last(lanes)
        if R == 1:
            return _accumulate(lanes[0])[-1:]
        return _accumulate(lanes, axis=1)[:, -1]

    return run


def _one_row(n, q, W, vs, step, m, k0, lead):
    """The plan of one row without leftover vectors or a scalar tail (a decode step's
    RMSNorm): the same calls on (q, W) views, without the row axis."""
    body = q * W

    def run(X):
        M = (X if body == n else X[:, :body]).reshape(q, W)
        if m:
            c0 = _reduce(M[:lead].reshape(m, step, W), axis=1) if m > 1 else \
                _reduce(M[:lead], axis=0)
            r1 = _reduce(c0, axis=0) if m > 1 else c0
            if k0 == 2:   # (the two terms added as _seq adds them, without a reduce's setup)
                acc0 = _add(M[lead], M[lead + 1])
            elif k0 > 2:
                acc0 = _reduce(M[lead:], axis=0)
            elif k0:
                acc0 = M[lead]
            else:
                acc0 = np.zeros(W, X.dtype)
            parts = _add(acc0, r1)
        else:
            parts = _reduce(M, axis=0) if k0 > 1 else M[0]
        return _accumulate(_reduce(parts.reshape(ILP, vs), axis=0))[-1:]

    return run
