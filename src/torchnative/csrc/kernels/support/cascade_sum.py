"""Upstream's floating-point sum order on CPU, replayed over numpy so sums agree bit for bit.

Upstream sums floating tensors with ``cascade_sum`` (aten/src/ATen/native/cpu/SumKernel.cpp)
inside TensorIterator's reduction loops. What decides the bits:

* the iteration geometry: TensorIterator moves reduced dims first, sorts the rest by stride and
  coalesces adjacent dims; the kernel sees one 2-d block (size0, size1) at a time and adds each
  result into the output (``*out += value`` in the output's own dtype: a float16/bfloat16 output
  rounds the value, then the sum);
* per 2-d block, one of four loops: contiguous inner reduction (vectors of 32 bytes, lanes
  summed separately, then a scalar tail and the lanes left to right), contiguous outer reduction
  (columns in blocks of 4 vectors, then single vectors, then scalars), and their scalar forms;
* inside every loop, ``multi_row_sum``'s four-level cascade (chunks of ``2**level_power``
  elements) and ``row_sum``'s four interleaved partial sums;
* threads: at ``GRAIN_SIZE`` elements and more, a full reduction is split into equal linear
  ranges whose partial sums land in a buffer summed afterwards; other reductions are split along
  the largest output dim, rounded to 128-byte column groups.

float16/bfloat16 are accumulated in float32 (a contiguous vector of 16 is folded to 8 lanes as
``v[i] + v[i + 8]``). The vector width is 32 bytes whatever the CPU capability: ``sum_stub`` is
registered with ``REGISTER_DISPATCH``, which leaves the AVX512 slot to the AVX2 kernel (running
upstream under ``ATEN_CPU_CAPABILITY=avx512`` on a CPU without AVX512 sums without faulting),
and the DEFAULT build's generic ``Vectorized`` is 32 bytes too.

Each level is computed for every lane, row and output at once: a sequential sum over one axis is
``np.add.accumulate`` (strictly left to right), never numpy's pairwise ``sum``.
"""

from __future__ import annotations

import numpy as np

from .cascade_rows import ILP as _ILP, level_step, row_sums
from .iteration import ti_perm

VEC_BYTES = 32
GRAIN_SIZE = 32768


def in_order(x: np.ndarray, axis: int = 0) -> np.ndarray:
    """``acc = 0; for v in x: acc += v`` along ``axis`` (0 or 1), in x's dtype: the one strictly
    sequential sum, which the sum and norm loops share. numpy's ``sum`` would pair the terms;
    ``accumulate`` adds strictly in order and is the fastest for short rows, one in-place add
    per step for long ones. (Starting from the first term instead
    of +0 can only leave -0.0 where upstream has +0.0: ``CascadeSum.run`` adds +0 at the end.)"""
    n = x.shape[axis]
    if n == 0:
        return np.zeros(x.shape[:axis] + x.shape[axis + 1:], x.dtype)
    if axis:
        x = x.swapaxes(0, 1)
    if x.size <= _SHORT * n:  # (accumulate walks a C-contiguous array row by row)
        return np.add.accumulate(np.ascontiguousarray(x), axis=0)[-1]
    acc = x[0].copy()
    for t in range(1, n):
        np.add(acc, x[t], out=acc)
    return acc


_SHORT = 1024


def multi_row_sum(x: np.ndarray) -> np.ndarray:
    """multi_row_sum over axis 0 of ``x`` (every other axis a separate accumulator)."""
    n, lanes = x.shape[0], x.shape[1:]
    step = level_step(n)
    m = n // step                                   # complete chunks
    acc0 = in_order(x[m * step:])                       # the tail, left in level 0
    if m == 0:
        return acc0
    c0 = in_order(x[:m * step].reshape((m, step) + lanes), 1)
    g1 = m // step                                  # level 1 flushes every `step` chunks
    r1 = in_order(c0[g1 * step:])
    if g1 == 0:
        return acc0 + r1
    c1 = in_order(c0[:g1 * step].reshape((g1, step) + lanes), 1)
    g2 = g1 // step
    r2 = in_order(c1[g2 * step:])
    r3 = in_order(in_order(c1[:g2 * step].reshape((g2, step) + lanes), 1))  # level 3 never flushes
    return ((acc0 + r1) + r2) + r3


def row_sum(x: np.ndarray) -> np.ndarray:
    """row_sum over axis 0: four interleaved cascades, the tail added into the first, then the
    four joined left to right."""
    n, lanes = x.shape[0], x.shape[1:]
    q = n // _ILP
    parts = multi_row_sum(x[:q * _ILP].reshape((q, _ILP) + lanes))   # (4, *lanes)
    return in_order(np.concatenate((parts[:1], x[q * _ILP:], parts[1:])))


def _loop2d(X, st, out_st, itemsize, pair):
    """cascade_sum's 2-d loop over a batch ``X`` (B, size1, size0) of blocks.

    Returns the values it stores, shaped (B, size1) (one per row, in row order) or (B, size1,
    size0) when nothing is reduced, and the output stride of each of their trailing axes."""
    (s0, s1), (o0, o1) = st, out_st
    if o0 != 0 and o1 == 0:                          # move the reduction to dim 0
        X, s0, s1, o0, o1 = X.swapaxes(1, 2), s1, s0, o1, o0
    if o0 != 0 and o1 != 0:                          # not a true reduction: out = out + in
        return X, (o1, o0)
    size1, size0 = X.shape[1], X.shape[2]
    vs = VEC_BYTES // itemsize                       # Vectorized<scalar_t>::size()
    va = vs // 2 if pair else vs                     # Vectorized<acc_t>::size()
    if s0 == itemsize and size0 >= vs:               # contiguous inner reduction
        nv = size0 // vs
        V = X[:, :, :nv * vs].reshape(X.shape[:2] + (nv, vs))
        if pair:
            V = V[..., :va] + V[..., va:]
        lanes = row_sum(_vectors_first(V))          # (B, size1, va)
        # final_acc = 0, then the scalar tail, then the lanes, left to right
        return in_order(np.concatenate((X[:, :, nv * vs:], lanes), axis=2).transpose(2, 0, 1)), (o1,)
    cols = X.transpose(2, 0, 1)                      # (size0, B, size1)
    if s1 == itemsize and size1 >= vs:               # contiguous outer reduction
        nb = size1 // (4 * va) * 4 * va
    elif s0 < s1:
        nb = 0
    else:
        nb = size1 // 4 * 4
    out = np.empty(X.shape[:2], X.dtype)
    out[:, :nb] = multi_row_sum(cols[:, :, :nb])
    out[:, nb:] = row_sum(cols[:, :, nb:])
    return out, (o1,)


def geometry(shape, strides, axes) -> "Geometry":
    """The Geometry of a reduction, remembered per (shape, strides, axes)."""
    key = (tuple(shape), tuple(strides), tuple(axes))
    g = _GEOMETRIES.get(key)
    if g is None:
        if len(_GEOMETRIES) > 512:
            _GEOMETRIES.clear()
        g = _GEOMETRIES[key] = Geometry(shape, strides, axes)
    return g


_GEOMETRIES: dict = {}


def _vectors_first(V: np.ndarray) -> np.ndarray:
    """(B, size1, nv, lanes) -> (nv, B, size1, lanes), contiguous when there are several rows so
    that each step of the cascade is one long loop; each vector moves as one opaque item."""
    W = V.transpose(2, 0, 1, 3)
    if V.shape[0] * V.shape[1] == 1 or V.strides[-1] != V.itemsize:
        return W
    whole = V.view(np.dtype(f"V{V.shape[3] * V.itemsize}"))[..., 0]
    return np.ascontiguousarray(whole.transpose(2, 0, 1)).view(V.dtype).reshape(W.shape)


class Geometry:
    """A reduction's TensorIterator after reorder and coalesce: sizes and element strides of
    input and output per dim, fastest first, and how to lay the input's values out that way."""

    def __init__(self, shape, strides, axes):
        shape, axes = tuple(shape), frozenset(axes)
        keep = [1 if i in axes else s for i, s in enumerate(shape)]
        ost, acc = [0] * len(shape), 1
        for i in range(len(shape) - 1, -1, -1):       # the contiguous keepdim output
            ost[i] = 0 if (i in axes and shape[i] != 1) else acc
            acc *= keep[i]
        self.out_shape = tuple(keep)
        perm = ti_perm(shape, [ost, list(strides)], reduction=True)
        sizes, ins, outs, groups = [], [], [], []
        for d in perm:                                 # coalesce_dimensions
            if sizes and (sizes[-1] == 1 or shape[d] == 1 or
                          (sizes[-1] * ins[-1] == strides[d] and sizes[-1] * outs[-1] == ost[d])):
                if sizes[-1] == 1:
                    ins[-1], outs[-1] = strides[d], ost[d]
                sizes[-1] *= shape[d]
                groups[-1].append(d)
            else:
                sizes.append(shape[d])
                ins.append(strides[d])
                outs.append(ost[d])
                groups.append([d])
        self.ndim = len(sizes)
        # contiguous rows reduced along their length, one output each (cascade_rows' case)
        self.rows = (0 < len(sizes) <= 2 and ins[0] == 1 and outs[0] == 0 and sizes[0] > 1 and
                     (len(sizes) == 1 or outs[1] == 1 or sizes[1] == 1))
        while len(sizes) < 2:                          # the 2-d loop's padding
            sizes.append(1)
            ins.append(0)
            outs.append(0)
        self.perm, self.sizes, self.ins, self.outs = perm, sizes, ins, outs

    def arrange(self, a: np.ndarray) -> np.ndarray:
        """``a`` (the input's logical values) with axes slowest first in iteration order."""
        return a.transpose(self.perm[::-1]).reshape(self.sizes[::-1])

    def acc_buffer(self) -> bool:
        """ReduceOps.cpp should_use_acc_buffer: a float16/bfloat16 sum whose two innermost
        dims are both reduced is computed on a float32 copy instead."""
        return self.ndim >= 2 and self.outs[0] == 0 and self.outs[1] == 0


def _accumulate(store_values: np.ndarray, offsets, n_out: int, rnd) -> np.ndarray:
    """``out[o] += v`` for every store in order, ``out`` starting at 0 in the output's dtype
    (``offsets`` None: every store goes to the one output)."""
    v = store_values.reshape(-1)
    if v.size == n_out:
        out = np.empty(n_out, v.dtype)
        out[offsets.reshape(-1) if offsets is not None else slice(None)] = rnd(v)
        return out
    per = v.reshape(1, -1) if offsets is None else \
        v[np.argsort(offsets.reshape(-1), kind="stable")].reshape(n_out, -1)
    if rnd is exact:
        return in_order(per, 1)
    # c10::Half and BFloat16 have only `x += same type`: the float value is rounded into the
    # output's dtype first, then the sum is rounded again
    per = rnd(per)
    out = np.zeros(n_out, v.dtype)
    for t in range(per.shape[1]):
        out = rnd(out + per[:, t])
    return out


def exact(v):
    return v


def column_ranges(cols: int, threads: int, per) -> list:
    """The column ranges parallel_dim_reduction's threads take: at::parallel_for's equal chunks
    of ``cols``, each end rounded down to a multiple of ``per`` columns (128 bytes, when adjacent
    columns are adjacent in memory; None: no rounding) except the last; empty ranges dropped."""
    nt = min(threads, cols)
    chunk = -(-cols // nt)
    ranges = []
    for t in range(nt):
        begin, end = t * chunk, min(cols, (t + 1) * chunk)
        if begin >= cols:
            continue
        if per:
            begin -= begin % per
            if end != cols:
                end -= end % per
        if begin != end:
            ranges.append((begin, end))
    return ranges


class CascadeSum:
    """One sum: the values (in the accumulation dtype), the geometry, the element size of the
    iterated dtype, whether vectors fold pairs (float16/bfloat16) and how a stored value is
    rounded into the output's dtype."""

    def __init__(self, geom: Geometry, itemsize: int, pair: bool, rnd, threads: int):
        self.g, self.itemsize, self.pair, self.rnd, self.threads = geom, itemsize, pair, rnd, threads

    # -- the serial loop over a (sub-)iteration --------------------------------------------------

    def _serial(self, A, sizes, outs, base=0):
        """The values stored by every 2-d call of a serial pass, in order, and their output
        offsets (None when everything lands in one output)."""
        g = self.g
        B = 1
        for s in sizes[2:]:
            B *= s
        X = A.reshape(B, sizes[1], sizes[0])
        vals, vst = _loop2d(X, (g.ins[0] * self.itemsize, g.ins[1] * self.itemsize),
                            (outs[0], outs[1]), self.itemsize, self.pair)
        if not any(vst) and not any(outs[2:]):
            return vals, None
        ob = np.array([base], np.int64)
        for d in range(len(sizes) - 1, 1, -1):
            ob = (ob[:, None] + np.arange(sizes[d]) * outs[d]).reshape(-1)
        offs = ob.reshape((B,) + (1,) * len(vst))
        for ax, s in enumerate(vst):
            shape = [1] * (len(vst) + 1)
            shape[ax + 1] = vals.shape[ax + 1]
            offs = offs + (np.arange(vals.shape[ax + 1]) * s).reshape(shape)
        return vals, offs + np.zeros(vals.shape, np.int64)

    def run(self, a: np.ndarray) -> np.ndarray:
        """The sums, shaped as the keepdim output."""
        g = self.g
        numel = a.size
        if (g.rows and not self.pair and self.rnd is exact and
                g.sizes[0] >= VEC_BYTES // self.itemsize and
                (g.sizes[1] > 1 or numel < GRAIN_SIZE or self.threads == 1)):
            # every split across threads keeps a row whole, so the serial bits are the bits
            out = row_sums(g.arrange(a), VEC_BYTES // self.itemsize)
            return (out + out.dtype.type(0)).reshape(g.out_shape)
        n_out = 1
        for s in g.out_shape:
            n_out *= s
        A = g.arrange(a)
        if numel < GRAIN_SIZE or self.threads == 1:
            vals, offs = self._serial(A, g.sizes, g.outs)
            out = _accumulate(vals, offs, n_out, self.rnd)
        elif n_out == 1:
            out = self._two_pass(A, numel)
        else:
            out = self._split_dim(A, n_out)
        return (out + out.dtype.type(0)).reshape(g.out_shape)

    # -- threads ---------------------------------------------------------------------------------

    def _two_pass(self, A, numel):
        """Each thread sums a linear range of the iteration into its own buffer slot; the
        buffer (in the output's dtype) is then summed as a contiguous row."""
        nt = min(self.threads, -(-numel // GRAIN_SIZE)) if numel > GRAIN_SIZE else 1
        chunk = -(-numel // nt)
        buf = np.zeros(self.threads, A.dtype)
        for t in range(nt):
            begin, end = t * chunk, min(numel, (t + 1) * chunk)
            if begin < end:
                stores = np.concatenate([v.reshape(-1) for v in self._range_stores(A, begin, end)])
                buf[t] = _accumulate(stores, None, 1, self.rnd)[0]
        final = CascadeSum(Geometry((self.threads,), (1,), (0,)), self.itemsize, False,
                           self.rnd, 1)
        return final.run(buf).reshape(1)

    def _range_stores(self, A, begin, end):
        """serial_for_each over the linear range [begin, end): the stores of each 2-d call."""
        g = self.g
        sizes = g.sizes
        flat = A.reshape(-1, sizes[1], sizes[0])  # (higher, size1, size0)
        block = sizes[0] * sizes[1]
        pos = begin
        while pos < end:
            h, r = divmod(pos, block)
            v1, v0 = divmod(r, sizes[0])
            if v0 == 0 and v1 == 0 and end - pos >= block:   # whole blocks, batched
                nblk = (end - pos) // block
                X = flat[h:h + nblk]
                pos += nblk * block
            else:
                step0 = min(sizes[0] - v0, end - pos)
                step1 = 1
                if step0 == sizes[0]:
                    step1 = min(sizes[1] - v1, (end - pos) // sizes[0])
                X = flat[h:h + 1, v1:v1 + step1, v0:v0 + step0]
                pos += step0 * step1
            vals, _ = _loop2d(X, (g.ins[0] * self.itemsize, g.ins[1] * self.itemsize),
                              (g.outs[0], g.outs[1]), self.itemsize, self.pair)
            yield vals

    def _split_dim(self, A, n_out):
        """parallel_dim_reduction: threads take column ranges of one output dim (find_split_dim:
        the outermost with at least as many columns as threads, else the largest of the
        unreduced outer dims)."""
        g = self.g
        dim = max(g.ndim, 1) - 1                          # the real outermost dim, not padding
        for d in range(dim, -1, -1):
            if g.outs[d] == 0 and g.sizes[d] > 1:        # is_dim_reduced
                break
            if g.sizes[d] >= self.threads:
                dim = d
                break
            if g.sizes[d] > g.sizes[dim]:
                dim = d
        out = np.zeros(n_out, A.dtype)
        axis = len(g.sizes) - 1 - dim                 # A's axes are slowest first
        per = 128 // self.itemsize if g.ins[dim] == 1 else None
        for begin, end in column_ranges(g.sizes[dim], self.threads, per):
            sub = A[(slice(None),) * axis + (slice(begin, end),)]
            sizes = list(g.sizes)
            sizes[dim] = end - begin
            vals, offs = self._serial(sub, sizes, g.outs, base=begin * g.outs[dim])
            idx, inv = np.unique(offs.reshape(-1), return_inverse=True)
            out[idx] = _accumulate(vals, inv, idx.size, self.rnd)
        return out
