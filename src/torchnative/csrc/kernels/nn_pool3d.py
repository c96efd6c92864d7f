"""max_pool3d (Pooling.cpp): the CompositeImplicitAutograd operator is max_pool3d_with_indices'
values, as upstream writes it (so autograd sees max_pool3d_with_indices and its backward);
max_pool3d_with_indices and its out= form (DilatedMaxPool3d.cpp, MaxPoolKernel.cpp's
cpu_max_pool / cpu_max_pool_channels_last); and the backward (DilatedMaxPool3d.cpp's CPU kernel).

Upstream scans each window in row-major order (depth, rows, columns), taking a value when it is
greater than the running maximum (which starts at -inf, an integer type's lowest) or NaN: the
first maximum and the last NaN win, padding never competes. That scan is separable: the result
of scanning a sequence is the result of scanning its parts in order, each part's result taken
when greater or NaN. So the columns are scanned first (over every row of the input), the rows
over those results, then the depth: kT + kH + kW numpy passes instead of kT * kH * kW, each over
the real positions only, taking values by a bitwise select (exact, and without the branch a
masked copy mispredicts on unordered data). A window nothing beat keeps its first real position,
which upstream's channels-last loop writes without the depth term in the channels past its last
full SIMD vector.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.cast import cast_array, scalar_nans
from ..core.construct import empty
from ..core.device import CPU
from ..core.layouts import (channels_last_3d, channels_last_strides, contiguous_format,
                            is_channels_last_strides)
from ..core.tensor import _is_contiguous
from ..dispatch.call import call
from ..dispatch.structured import write_into
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .nn_pool import (_FLOATS, _INT64, _MAXPOOL_TYPES, _check_dim_size, _check_same_dtype,
                      _check_scalar_type, _output_shape, _rounder, _triple, _values)
from .simd_lanes import build_bytes
from .support.common import arr, as_compute, int_list, wrap
from .support.nn_util import not_implemented

_INT_MAX = 2 ** 31 - 1
BF16 = D.BY_NAME["bfloat16"]


@kernel("max_pool3d", composite=True)
def max_pool3d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return call("max_pool3d_with_indices", self, kernel_size, stride, padding, dilation,
                ceil_mode)[0]


def _arg3(v, what, allow_empty=False):
    """One (T, H, W) argument, its length checked, then its values read as C ints."""
    t = _triple(v, "max_pool3d", what, allow_empty)
    if t is not None and any(not -_INT_MAX - 1 <= a <= _INT_MAX for a in t):
        raise RuntimeError("value cannot be converted to type int without overflow")
    return t


def _shape_check(t, k, st, p, dil, ins, outs, fn):
    """Pool.h's pool3d_shape_check, as DilatedMaxPool3d.cpp calls it from ``fn``."""
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} "
                           f"kH: {k[1]} kW: {k[2]}")
    if min(st) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {st[0]} "
                           f"dH: {st[1]} dW: {st[2]}")
    if min(dil) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {dil[0]} "
                           f"dilationH: {dil[1]} dilationW: {dil[2]}")
    s = t._size
    for i in range(len(s) - 4, len(s)):  # a 5-D input's batch may be empty
        if s[i] <= 0:
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive "
                               f"length, but input has a shape of {int_list(s)} and non-batch "
                               f"dimension {s[i]} has length zero!")
    if any(k[i] // 2 < p[i] for i in range(3)):
        raise RuntimeError("pad should be smaller than or equal to half of kernel size, but got "
                           f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} "
                           f"padH: {p[1]}")
    if min(outs) < 1:
        n = s[-4]
        raise RuntimeError(f"Given input size: ({n}x{ins[0]}x{ins[1]}x{ins[2]}). Calculated "
                           f"output size: ({n}x{outs[0]}x{outs[1]}x{outs[2]}). Output size is "
                           "too small")


def _unsqueezed_cl(t) -> bool:
    """A 4-D t unsqueezed to 5-D is channels-last-3d contiguous and not contiguous (upstream's
    work-around of suggest_memory_format for such inputs)."""
    s, st = t._size, t._stride
    s5, st5 = (1,) + tuple(s), (s[0] * st[0],) + tuple(st)
    order = (0, 2, 3, 4, 1)
    return not _is_contiguous(s5, st5) and _is_contiguous(tuple(s5[i] for i in order),
                                                          tuple(st5[i] for i in order))


def _layout(t) -> str:
    """Which loop upstream runs: "cl" (channels-last: a 5-D input whose strides look like it, or
    a 4-D one only channels-last-3d contiguous once unsqueezed) or "contiguous"; a 4-D input
    that looks channels-last (2-d) is refused."""
    s, st = t._size, t._stride
    if len(s) == 5:
        return "cl" if is_channels_last_strides(s, st) else "contiguous"
    if _unsqueezed_cl(t):
        return "cl"
    if is_channels_last_strides(s, st):
        raise RuntimeError("Unsupported memory format. Supports only ChannelsLast3d, Contiguous")
    return "contiguous"


def _scan_axis(v, carried, axis, k, s, dil, pad, n_out, low, nan):
    """v's windows along ``axis`` (negative) scanned in order, only over real positions: (the
    maxima, the offsets taken). ``carried``: the offsets v's entries took along the axes already
    scanned, returned as each window's taken entry has them, with this axis' offsets last."""
    size = v.shape[axis]
    shape = list(v.shape)
    shape[axis] = n_out
    best = np.full(shape, low, v.dtype)
    mine = np.zeros(shape, np.uint8 if k < 256 else np.int64)
    kept = [np.zeros(shape, c.dtype) for c in carried]
    take = np.empty(shape, bool)
    after = (slice(None),) * (-axis - 1)
    for j in range(k):
        first = j * dil - pad  # window o reads first + o * s
        lo = -(first // s) if first < 0 else 0
        hi = min(n_out, (size - 1 - first) // s + 1) if first < size else 0
        if hi <= lo:
            continue
        src = (Ellipsis, slice(first + lo * s, first + (hi - 1) * s + 1, s)) + after
        dst = (Ellipsis, slice(lo, hi)) + after
        cand, b, t = v[src], best[dst], take[dst]
        if j == 0:  # over the initial -inf / lowest, a value is taken unless it equals it
            b[...] = cand
            for c, kc in zip(carried, kept):
                kc[dst] = c[src]
            continue
        np.greater(cand, b, out=t)
        if nan:
            t |= np.isnan(cand)
        ones = np.negative(t.view(np.int8))  # -1 (all bits) where taken
        _select(b, cand, ones)
        _select(mine[dst], np.full((), j, mine.dtype), ones)
        for c, kc in zip(carried, kept):
            _select(kc[dst], c[src], ones)
    return best, kept + [mine]


def _select(dst, src, ones):
    """dst = src where ``ones`` (int8: -1 or 0), on the bits: exact for any value (NaN payloads,
    signed zeros) and without the branch a masked copy mispredicts on unordered data."""
    kind = f"i{dst.itemsize}"
    d = dst.view(kind)
    diff = np.bitwise_xor(d, np.asarray(src).view(kind))
    diff &= ones if dst.itemsize == 1 else ones.astype(kind)
    d ^= diff


def _first_real(n_out, s, pad, dil):
    """Each window's first position at or past 0 (upstream's ``while (i0 < 0) i0 += dil``)."""
    a = np.arange(n_out, dtype=np.int64) * s - pad
    return np.where(a < 0, a + (-a + dil - 1) // dil * dil, a)


def _grid(vectors, spatial):
    """Per-dimension vectors (D, H, W) broadcast over the output grid at ``spatial``."""
    out = []
    for i, v in enumerate(vectors):
        shape = [1] * (len(spatial) + (spatial[0] != -3))
        shape[spatial[i]] = -1
        out.append(v.reshape(shape))
    return out


def _max_pool3d(x, k, st, p, dil, outs, tail):
    """Values and flat indices of x's (..., C, D, H, W) windows, computed in x's type; ``tail``:
    the first channel of the channels-last loop's scalar tail (None: the contiguous loop), which
    scans with the channels innermost."""
    ins = x.shape[-3:]
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    nan = x.dtype.kind == "f" and bool(np.isnan(x).any())
    spatial = (-3, -2, -1) if tail is None else (-4, -3, -2)
    best, picks = (x if tail is None else np.moveaxis(x, -4, -1)), []
    for i in (2, 1, 0):
        best, picks = _scan_axis(best, picks, spatial[i], k[i], st[i], dil[i], p[i], outs[i],
                                 low, nan)
    starts = [np.arange(outs[i], dtype=np.int64) * st[i] - p[i] for i in range(3)]
    d, h, w = _grid(starts, spatial)
    pw, ph, pd = (q.astype(np.int64) for q in picks)  # offsets times dilation outgrow uint8
    hw = ins[1] * ins[2]
    at = (d + pd * dil[0]) * hw
    at += (h + ph * dil[1]) * ins[2]
    at += w + pw * dil[2]
    never = best == low  # nothing beat the initial -inf / lowest
    if never.any():
        d0, h0, w0 = _grid([_first_real(outs[i], st[i], p[i], dil[i]) for i in range(3)], spatial)
        plane = h0 * ins[2] + w0
        first = d0 * hw + plane
        if tail is not None:
            scalar = np.arange(x.shape[-4]) >= tail
            first = np.where(scalar, plane, first)
        np.copyto(at, first, where=never)
    if tail is not None:
        return np.moveaxis(best, -1, -4), np.moveaxis(at, -1, -4)
    return best, at


def _args(kernel_size, stride, padding, dilation):
    """The (T, H, W) triples, read and checked in upstream's order."""
    k = _arg3(kernel_size, "kernel_size must either be a single int, or a tuple of three ints")
    st = _arg3(stride, "stride must either be omitted, a single int, or a tuple of three ints",
               allow_empty=True) or k
    p = _arg3(padding, "padding must either be a single int, or a tuple of three ints")
    dil = _arg3(dilation, "dilation must be either a single int, or a tuple of three ints")
    return k, st, p, dil


def _check_dims(t):
    if t.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")


def _pool_plan(self, kernel_size, stride, padding, dilation, ceil_mode):
    """Upstream's checks in its order; (k, st, p, dil, outs, layout)."""
    k, st, p, dil = _args(kernel_size, stride, padding, dilation)
    _check_dims(self)
    ins = tuple(self._size[-3:])
    outs = tuple(_output_shape(ins[i], k[i], p[i], st[i], dil[i], ceil_mode) for i in range(3))
    _shape_check(self, k, st, p, dil, ins, outs, "max_pool3d_with_indices_out_cpu_template()")
    return k, st, p, dil, outs, _layout(self)


def _result(values, dt, layout, vector=None):
    """A tensor of dt holding values (..., C, D, H, W), with upstream's output strides:
    channels innermost for the channels-last loop (a 4-D one squeezed from 5-D). bfloat16 NaNs
    are stored as c10's scalar conversion stores them, except where ``vector`` (a mask over
    values) marks the SIMD converter's lanes."""
    values = np.ascontiguousarray(values)
    if dt is BF16:
        values = scalar_nans(cast_array(values, D.dtype_from_numpy(values.dtype), dt), vector)
    t = wrap(values, dt)
    if layout != "cl":
        return t
    shape = values.shape
    lead = 5 - len(shape)
    out = empty(shape, dt, CPU, stride=channels_last_strides((1,) * lead + shape)[lead:])
    np.copyto(arr(out), arr(t))
    return out


@kernel("max_pool3d_with_indices")
def max_pool3d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,),
                            ceil_mode=False):
    k, st, p, dil, outs, layout = _pool_plan(self, kernel_size, stride, padding, dilation,
                                             ceil_mode)
    dt = self._dtype
    if dt not in _MAXPOOL_TYPES:
        raise not_implemented("max_pool3d_channels_last" if layout == "cl" else "max_pool3d", dt)
    x = _values(self)
    tail = vector = None
    if layout == "cl":
        item = arr(self).dtype.itemsize
        index_bytes = 4 if x.dtype != arr(self).dtype else item  # float32 opmath: int32 lanes
        if self._size[-3] * self._size[-2] * self._size[-1] > 2 ** (8 * index_bytes - 1) - 1:
            raise RuntimeError("Expected input_depth * input_height * input_width <= "
                               "std::numeric_limits<integer_t>::max() to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report an "
                               "enhancement request to PyTorch.)")
        c = self._size[-4]
        tail = c - c % (build_bytes(False) // item)  # REGISTER_DISPATCH: AVX2's under AVX512
    if x.size == 0:
        values = np.empty(tuple(self._size[:-3]) + outs, x.dtype)
        index = np.empty(values.shape, np.int64)
    else:
        values, index = _max_pool3d(x, k, st, p, dil, outs, tail)
        if tail is not None and dt is BF16 and cpu_capability.CAPABILITY != cpu_capability.DEFAULT:
            # the loop converts its float maxima back through vectors up to ``tail``
            vec = np.arange(self._size[-4]) < tail
            vector = np.broadcast_to(vec[:, None, None, None], values.shape)
    return _result(values, dt, layout, vector), _result(index, _INT64, layout)


@kernel("max_pool3d_with_indices.out")
def max_pool3d_with_indices_out(self, kernel_size, stride=(), padding=(0,), dilation=(1,),
                                ceil_mode=False, *, out, indices):
    """DilatedMaxPool3d.cpp's out= kernel: each output resized as the functional's result is
    laid out (a 5-D one restrided even when its shape is right; a 4-D one keeps its strides
    unless the channels-last loop runs), then its dtype checked as reading it checks."""
    res = max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)
    for dest, r in zip((out, indices), res):
        if self.dim() == 5:
            fmt = channels_last_3d if _layout(self) == "cl" else contiguous_format
            call("resize_", dest, list(r._size), memory_format=fmt)
        else:
            call("resize_", dest, list(r._size))
            if _layout(self) == "cl":
                call("as_strided_", dest, list(r._size), list(r._stride), dest._offset)
    for dest, r in zip((out, indices), res):
        _check_scalar_type(dest, r._dtype)
        write_into(dest, r)
    return out, indices


@kernel("max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    """Each output's gradient added, in the input's type, at the input position its index names
    (-1: none), output by output in order per plane, as upstream's CPU kernel; positions no
    window chose get zero. The output sizes are the gradient's, checked against the indices.
    The result is laid out as the input suggests (a 4-D one as the gradient's unsqueezed layout
    does). An index outside the plane, which upstream writes out of bounds, is refused."""
    k, st, p, dil = _args(kernel_size, stride, padding, dilation)
    _check_same_dtype(self, grad_output, "gradOutput")
    _check_dims(self)
    nd, ins, outs = self.dim(), tuple(self._size[-3:]), tuple(grad_output._size[-3:])
    _shape_check(self, k, st, p, dil, ins, outs,
                 "max_pool3d_with_indices_backward_out_cpu_template()")
    for t in (grad_output, indices):
        _check_dim_size(t, nd, nd - 4, self._size[-4])
        for i in range(3):
            _check_dim_size(t, nd, nd - 3 + i, outs[i])
    layout = _layout(grad_output)
    dt = self._dtype
    if dt not in _FLOATS:
        raise not_implemented("max_pool3d_backward_channels_last" if layout == "cl" else
                              "max_pool3d_backward", dt)
    _check_scalar_type(indices, _INT64)
    planes = int(np.prod(self._size[:-3]))
    plane = ins[0] * ins[1] * ins[2]
    go = as_compute(grad_output, dt).reshape(-1)
    idx = arr(indices).reshape(planes, outs[0] * outs[1] * outs[2])
    bad = (idx < -1) | (idx >= plane)
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {int(idx[bad][0])} (output volumes are "
                           f"of size {ins[0]}x{ins[1]}x{ins[2]}")
    grad = np.zeros(planes * plane, go.dtype)
    target = (idx + (np.arange(planes) * plane)[:, None]).reshape(-1)
    if (idx == -1).any():
        keep = idx.reshape(-1) != -1
        target, go = target[keep], go[keep]
    np.add.at(grad, target, go)
    rnd = _rounder(dt)
    if rnd is not None:
        # each sum rounded to dt: two terms round once in either order (float32 holds their sum
        # as upstream's float arithmetic does); from three on, rank by rank in output order
        many = np.bincount(target, minlength=grad.size)[target] >= 3
        if many.any():
            order = np.argsort(target[many], kind="stable")
            at, g = target[many][order], go[many][order]
            grad[at] = 0
            starts = np.flatnonzero(np.r_[True, at[1:] != at[:-1]])
            rank = np.arange(at.size) - np.repeat(starts, np.diff(np.r_[starts, at.size]))
            for r in range(int(rank.max()) + 1):
                sel = rank == r
                grad[at[sel]] = rnd(grad[at[sel]] + g[sel])
        grad = rnd(grad)
    if nd == 5:
        layout = "cl" if is_channels_last_strides(self._size, self._stride) else "contiguous"
    return _result(grad.reshape(tuple(self._size)), dt, layout)
