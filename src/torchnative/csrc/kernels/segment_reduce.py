"""segment_reduce and its backward (SegmentReduce.cpp): reductions over consecutive segments of
one axis, given by ``lengths`` or ``offsets`` whose last dimension is that axis. Each segment is
reduced in order in the data's own dtype (sum, mean's sum and prod accumulate one element at a
time, rounded at each step, as upstream's scalar loop); max/min propagate NaN."""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .support.common import arr, wrap
from .support.nn_util import not_implemented
from ..ops.kernel_registry import kernel

_REDUCTIONS = {"max": "max", "amax": "max", "min": "min", "amin": "min", "mean": "mean",
               "sum": "sum", "prod": "prod"}
_FLOATING = frozenset(D.BY_NAME[n] for n in ("float16", "bfloat16", "float32", "float64"))


def _reduction(reduce: str) -> str:
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _REDUCTIONS[reduce]


def _offsets(data, lengths, offsets, axis: int, unsafe: bool) -> np.ndarray:
    """(outer, segments + 1) int64 offsets along ``axis`` for each index before it."""
    given, name = (offsets, "offsets") if offsets is not None else (lengths, "lengths")
    if data.dim() < given.dim():
        raise RuntimeError(f"Expected data.dim() >= {name}.dim() to be true, but got false.")
    if axis != given.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} "
                           f"but got {axis}.")
    g = arr(given).astype(np.int64).reshape(-1, given.shape[-1] if given.dim() else 1)
    if offsets is not None:
        return g
    if not unsafe:
        if g.size and g.min() < 0:
            raise RuntimeError("lengths contains negative value!")
        if not np.all(g.sum(-1) == data.shape[axis]):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
    return np.concatenate([np.zeros((g.shape[0], 1), np.int64), np.cumsum(g, -1)], -1)


def _blocks(data, axis: int, off: np.ndarray):
    """(data as (outer, axis, inner) in its dtype, outer, segment count); floating types only."""
    if data.dtype not in _FLOATING:
        raise not_implemented("_segment_reduce_cpu", data.dtype)
    outer = int(np.prod(data.shape[:axis], dtype=np.int64))
    x = np.ascontiguousarray(arr(data)).reshape(outer, data.shape[axis], -1)
    return x, outer, off.shape[-1] - 1


def _start(reduce: str, initial, np_dt):
    if initial is not None:
        return np.asarray(initial).astype(np_dt)
    return np.asarray({"max": -np.inf, "min": np.inf, "prod": 1}.get(reduce, 0)).astype(np_dt)


@kernel("segment_reduce")
def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False,
                   initial=None):
    axis = axis + data.dim() if axis < 0 else axis
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    reduce = _reduction(reduce)
    off = _offsets(data, lengths, offsets, axis, unsafe)
    x, outer, count = _blocks(data, axis, off)
    np_dt = x.dtype
    out = np.empty((outer, count, x.shape[-1]), np_dt)
    with np.errstate(all="ignore"):
        for o in range(outer):
            for s in range(count):
                lo, hi = off[o, s], off[o, s + 1]
                out[o, s] = _reduce_segment(x[o, lo:hi], reduce, initial, np_dt)
    shape = list(data.shape)
    shape[axis] = count
    return wrap(out.reshape(shape), data.dtype)


def _reduce_segment(seg: np.ndarray, reduce: str, initial, np_dt) -> np.ndarray:
    start = _start(reduce, initial, np_dt)
    n = seg.shape[0]
    if reduce in ("max", "min"):
        pick = np.maximum if reduce == "max" else np.minimum
        return pick.reduce(np.concatenate([np.broadcast_to(start, (1, seg.shape[1])), seg]), axis=0)
    if reduce == "mean" and n == 0 and initial is None:
        return np.full(seg.shape[1], np.nan, np_dt)
    ufunc = np.multiply if reduce == "prod" else np.add
    acc = ufunc.accumulate(np.concatenate([np.broadcast_to(start, (1, seg.shape[1])), seg]),
                           axis=0)[-1]  # one element at a time, rounded at each step
    if reduce == "mean" and n > 0:
        acc = np.where(np.isnan(acc), acc, acc / np.asarray(n).astype(np_dt))
    return acc


@kernel("_segment_reduce_backward")
def segment_reduce_backward(grad, output, data, reduce, *, lengths=None, offsets=None, axis=0,
                            initial=None):
    axis = axis + data.dim() if axis < 0 else axis
    reduce = _reduction(reduce)
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    off = _offsets(data, lengths, offsets, axis, True)
    x, outer, count = _blocks(data, axis, off)
    np_dt = x.dtype
    g = np.ascontiguousarray(arr(grad)).astype(np_dt).reshape(outer, count, -1)
    y = np.ascontiguousarray(arr(output)).astype(np_dt).reshape(outer, count, -1)
    gi = np.zeros_like(x)
    with np.errstate(all="ignore"):
        for o in range(outer):
            for s in range(count):
                lo, hi = off[o, s], off[o, s + 1]
                if hi > lo:
                    gi[o, lo:hi] = _segment_grad(x[o, lo:hi], g[o, s], y[o, s], reduce, initial, np_dt)
    return wrap(gi.reshape(data.shape), data.dtype)


def _segment_grad(seg, g, y, reduce: str, initial, np_dt) -> np.ndarray:
    n = seg.shape[0]
    if reduce in ("max", "min"):
        # every element equal to the result (or NaN) gets the gradient; where several do, the
        # positive ones are averaged (upstream's check is on the gradient's sign)
        hit = np.isnan(seg) | (seg == y)
        gi = np.where(hit, g, np.zeros((), np_dt)).astype(np_dt)
        counter = hit.sum(0)
        share = (gi > 0) & (counter >= 2)
        return np.where(share, gi / counter.astype(np_dt), gi).astype(np_dt)
    if reduce == "mean":
        return np.broadcast_to((g / np.asarray(n).astype(np_dt)).astype(np_dt), seg.shape)
    if reduce == "sum":
        return np.broadcast_to(g, seg.shape)
    # prod: grad * output / x, or the product of the others where x is zero or NaN
    gi = ((g * y).astype(np_dt) / seg).astype(np_dt)
    special = np.isnan(seg) | (seg == 0)
    for j in zip(*np.nonzero(special)):
        r, c = j
        others = np.concatenate([seg[:r, c], seg[r + 1:, c]])
        exclusive = np.multiply.accumulate(np.concatenate([[_start("prod", initial, np_dt)],
                                                           others]).astype(np_dt))[-1]
        gi[r, c] = g[c] * exclusive
    return gi
