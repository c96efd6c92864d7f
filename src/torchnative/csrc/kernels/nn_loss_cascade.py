"""nll_loss's reduced sum as LossNLL.cpp's ``nll_loss_out_frame`` computes it, in the input's
own float32/float64 arithmetic: item after item, ``partial[0] -= value``; after an item kept at
batch index ``b``, each level ``j`` (of eight) flushes into level ``j + 1`` while ``b`` is a
multiple of ``step ** (j + 1)`` (``step`` = 2**max(4, CeilLog2(batch) / 8): 16 for any real
batch); the result is ``0 + partial[0] + ... + partial[7]``. So the first kept item lands alone
on level 7 when it is item 0, the others in runs of 16, and an ignored item at a multiple of 16
lengthens its run.

numpy computes each level's runs at once: a run is a column of a (longest run + 1, runs) array
that starts with +0.0, whose rows numpy's reduce along axis 0 applies in order into every
column (its pairwise sum runs only along the fastest axis, so there are always two columns or
more); shorter runs are padded with the operation's identity (``x - +0.0`` and ``x + -0.0`` are
``x`` for every x, zeros' signs and NaN payloads included).
"""

from __future__ import annotations

import numpy as np

LEVELS = 8


def cascade_total(values: np.ndarray, index: np.ndarray, batch: int, subtract: bool):
    """The upstream sum of ``values`` (float32/float64, the kept items' amounts in batch order)
    kept at batch indices ``index`` (ascending): ``-sum`` of them when ``subtract`` (the
    loss), else their sum (the weights); a numpy scalar of ``values``' dtype."""
    dt = values.dtype
    power = max(4, (batch - 1).bit_length() // LEVELS if batch > 1 else 0)
    parts = []
    level_values, level_index = values, index
    op = np.subtract if subtract else np.add
    for level in range(LEVELS):
        if level == LEVELS - 1:      # the last level never flushes
            flush = np.zeros(level_index.size, bool)
        else:
            flush = (level_index & ((1 << (power * (level + 1))) - 1)) == 0
        runs, rest = _runs(level_values, flush, op, dt)
        parts.append(rest)
        level_values, level_index = runs, level_index[flush]
        op = np.add
        if not level_values.size:
            break
    total = dt.type(0)
    for p in parts:
        total = dt.type(total + p)
    return total


def _runs(values: np.ndarray, flush: np.ndarray, op, dt):
    """(the sums of the runs each ending at a flushed item, in order; the sum of the items after
    the last flush), each run's sum ``op``-reduced from +0.0 strictly in order."""
    n = values.size
    if not n:
        return values, dt.type(0)
    ends = np.flatnonzero(flush)
    starts = np.concatenate(([0], ends[:-1] + 1)) if ends.size else np.zeros(0, np.int64)
    tail_start = ends[-1] + 1 if ends.size else 0
    lengths = np.append(ends - starts + 1, n - tail_start)
    firsts = np.append(starts, tail_start)
    longest = int(lengths.max())
    if (longest + 1) * lengths.size > 4 * n + 64:
        # runs of very different lengths (ignored items at many multiples of 16): each its own
        sums = np.concatenate([_in_order(values[f:f + k], op, dt)
                               for f, k in zip(firsts.tolist(), lengths.tolist())])
    else:
        run = np.repeat(np.arange(lengths.size), lengths)
        sums = _in_order(values, op, dt, (np.arange(n) - firsts[run], run),
                         (longest, lengths.size))
    return sums[:ends.size], sums[ends.size]


def _in_order(values, op, dt, at=None, shape=None):
    """Each column's ``op``-reduction from +0.0, strictly in order: ``values`` placed at rows
    ``at[0] + 1`` of columns ``at[1]`` (one column of all of them when ``at`` is None) of a grid
    padded with the identity."""
    rows, cols = shape if shape is not None else (values.size, 1)
    identity = dt.type(0.0) if op is np.subtract else dt.type(-0.0)
    grid = np.full((rows + 1, max(2, cols)), identity, dt)
    grid[0] = 0.0
    if at is None:
        grid[1:, 0] = values
    else:
        grid[at[0] + 1, at[1]] = values
    return op.reduce(grid, axis=0)[:cols]
