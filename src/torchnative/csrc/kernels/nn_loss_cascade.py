"""nll_loss's reduced sum as LossNLL.cpp's ``nll_loss_out_frame`` computes it, in the input's
own float32/float64 arithmetic: item after item, ``partial[0] -= value``; after an item kept at
batch index ``b``, each level ``j`` (of eight) flushes into level ``j + 1`` while ``b`` is a
multiple of ``step ** (j + 1)`` (``step`` = 2**max(4, CeilLog2(batch) / 8): 16 for any real
batch); the result is ``0 + partial[0] + ... + partial[7]``. So item 0, when kept, lands alone
on the top level; the others go in runs of 16 (an ignored item at a multiple of 16 lengthens
its run), their sums in runs of 16 on the next level, and so on.

numpy computes each level's runs at once, each run a row reduced strictly in order:
``subtract.reduce`` from +0.0 (numpy sums pairwise only in ``add``) or ``add.accumulate``
(without the leading ``0 +``: that differs only in a zero's sign, which the next level's or the
total's ``+0.0 + x`` erases); runs of different lengths are padded with the operation's
identity (``x - +0.0`` and ``x + -0.0`` are ``x`` for every x, zeros' signs and NaN payloads
included).
"""

from __future__ import annotations

import numpy as np

LEVELS = 8


def cascade_total(values: np.ndarray, index, batch: int, subtract: bool):
    """The upstream sum of ``values`` (float32/float64, the kept items' amounts in batch order)
    kept at batch indices ``index`` (ascending; None: every item of the batch): ``0 - v0 - v1
    ...`` in the cascade's order when ``subtract`` (the loss), else ``0 + v0 + ...`` (the
    weights); a numpy scalar of their dtype. Call it in the quiet float state (overflow is inf
    here, as in C++)."""
    dt = values.dtype
    power = max(4, (batch - 1).bit_length() // LEVELS if batch > 1 else 0)
    step = 1 << power
    zero = dt.type(0)
    top = zero
    first = 0 if index is None else int(index[0]) if index.size else -1
    if first == 0 and batch <= step ** (LEVELS - 1):
        # item 0 flushes through every level at once, and no later item reaches the top level;
        # 0 - v0 (or 0 + v0) is never -0.0, so the levels' 0 + x on the way leave it as it is
        top = zero - values[0] if subtract else zero + values[0]
        values = values[1:]
        index = None if index is None else index[1:]
    # items 1, 2, ... n: every level's events are consecutive too
    regular = index is None and first == 0 and batch <= step ** (LEVELS - 1) or \
        index is not None and bool(index.size) and int(index[0]) == 1 and \
        int(index[-1]) == index.size
    if index is None and not regular:
        index = np.arange(batch)
    parts = []
    for level in range(LEVELS - 1):
        if regular:   # consecutive items (or events): runs of ``step`` exactly
            runs, rest = _regular_runs(values, step, subtract and level == 0)
        else:
            flush = (index & ((1 << (power * (level + 1))) - 1)) == 0
            runs, rest = _runs(values, flush, subtract and level == 0)
            index = index[flush]
        parts.append(rest)
        values = runs
        if not values.size:
            break
    else:
        parts.append(_in_order(values, False))   # (batches past step**7: the top level's sum)
    total = zero
    for p in parts:
        total = total + p
    return total + top


def _regular_runs(values, step, subtract):
    """(the sums of the complete runs of ``step`` values, the sum of the rest)."""
    k = values.size // step
    body = values[:k * step].reshape(k, step)
    if subtract:
        runs = np.subtract.reduce(body, axis=1, initial=values.dtype.type(0))
    else:
        runs = np.add.accumulate(body, axis=1)[:, -1]
    return runs, _in_order(values[k * step:], subtract)


def _runs(values, flush, subtract):
    """(the sums of the runs each ending at a flushed item, in order; the sum of the items after
    the last flush), for runs of any lengths."""
    n = values.size
    ends = np.flatnonzero(flush)
    if not ends.size:
        return values[:0], _in_order(values, subtract)
    starts = np.concatenate(([0], ends[:-1] + 1))
    lengths = ends - starts + 1
    longest = int(lengths.max())
    if (longest + 1) * ends.size > 4 * n + 64:
        # runs of very different lengths (ignored items at many multiples of 16): each its own
        runs = np.array([_in_order(values[s:e + 1], subtract)
                         for s, e in zip(starts.tolist(), ends.tolist())], values.dtype)
    else:
        identity = 0.0 if subtract else -0.0
        grid = np.full((ends.size, longest + 1), identity, values.dtype)
        grid[:, 0] = 0.0
        run = np.repeat(np.arange(ends.size), lengths)
        m = int(ends[-1]) + 1
        grid[run, np.arange(m) - starts[run] + 1] = values[:m]
        runs = _reduce_rows(grid, subtract)
    return runs, _in_order(values[int(ends[-1]) + 1:], subtract)


def _reduce_rows(grid, subtract):
    """Each row of ``grid`` reduced strictly left to right."""
    if subtract:
        return np.subtract.reduce(grid, axis=1)
    return np.add.accumulate(grid, axis=1)[:, -1]


def _in_order(values, subtract):
    """``0 - values[0] - values[1] ...`` (or ``0 + ...``) strictly in order, as a numpy scalar.
    An ``add`` leaves out the leading ``0 +``: it differs only in a zero's sign, which the next
    level's or the total's ``+0.0 + x`` erases."""
    if subtract:
        return np.subtract.reduce(values, initial=values.dtype.type(0))
    return np.add.accumulate(values)[-1] if values.size else values.dtype.type(0)
