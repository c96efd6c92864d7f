"""native_group_norm_backward as upstream's CPU kernel (group_norm.cpp,
cpu/group_norm_kernel.cpp), replayed in numpy in the kernel's own summation order.

Upstream first reduces each (sample, channel) plane to ds = sum(dY * X) and db = sum(dY) in
opmath (float for float16/bfloat16), then per (sample, group) folds them with gamma into
``c2 = (db * mean - ds) * rstd**3 / (D * HxW)`` and ``c3 = -c2 * mean - db * rstd / (D * HxW)``,
and writes ``dX = rstd * gamma * dY + c2 * X + c3``; dgamma and dbeta sum their per-sample
terms over N. The orders that decide the last bits:

* ``group_norm_kernel.cpp`` is a ``REGISTER_DISPATCH`` file: an AVX512 machine runs the AVX2
  build (32-byte vectors) -- measured, the two give the same bits -- and the DEFAULT build has
  the same 32-byte generic vectors without fused multiply-adds.
* contiguous float/double planes: ``map2_reduce_all`` / ``reduce_all`` (the partial vector added
  into the first lanes, the lanes folded by vec_reduce_all: the shuffle tree for float in the
  AVX2 build, left to right otherwise); float16/bfloat16 planes: float vectors accumulated from
  zero, their lanes summed left to right, then the scalar tail.
* channels-last planes: per channel, down the HxW positions (below 2,048 positions per group
  and sample), or per thread of ``parallel_for`` over N * HxW rows, the threads' partial sums
  then added in thread order (2,048 and more).
* the AVX2 build contracts ``a * b + c`` into fused multiply-adds in the scalar code and in
  most Vectorized<T> loops, not everywhere, and which product of an expression it fuses varies
  from loop to loop: each choice below was measured against upstream (AVX2 and DEFAULT builds,
  float32/float64/bfloat16/float16, own and float32 parameters) and is noted where it is made.
  NaN signs follow from writing subtractions as subtractions.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..core.device import CPU
from ..core.tensor import numel_of
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from ..platform.float_state import quiet
from ..random.fpmath import fma32, fma64
from ..core.layouts import contiguous_format
from .copy import strides_for
from .nn_norm import _check_mixed, _mixed, _suggested_format
from .nn_softmax_backward import _lanes_in_order, _lanes_tree, _row_dot
from .support.common import arr, as_compute, wrap
from .support.nn_util import not_implemented
from .support.parallel import get_num_threads

_B = D.BY_NAME
_F32 = _B["float32"]
_F16 = _B["float16"]
_FLOATS = frozenset(_B[n] for n in ("float32", "float64", "float16", "bfloat16"))
_VEC_BYTES = 32          # the AVX2 build's vectors (an AVX512 CPU runs it too) and DEFAULT's
_FEATURE_MAP_THRESHOLD = 2048


def _ctx():
    """(contracts, float tree): whether scalar a * b + c is one rounding, and whether float
    vec_reduce_all folds by the shuffle tree -- both in upstream's AVX2 build, neither in
    DEFAULT's."""
    simd = cpu_capability.CAPABILITY != cpu_capability.DEFAULT
    return cpu_capability.CONTRACTS_FMA, simd


def _fma(a, b, c, fused):
    """The compiled scalar ``a * b + c`` in a's dtype (float32/float64)."""
    if not fused:
        return a * b + c
    a = np.asarray(a)
    if a.dtype == np.float32:
        return np.asarray(fma32(a, np.asarray(b, np.float32), np.asarray(c, np.float32)))
    shape = np.broadcast_shapes(a.shape, np.shape(b), np.shape(c))
    return np.asarray(fma64(a, b, c)).reshape(shape)


def _fms(a, b, c, fused):
    """The compiled ``a * b - c`` (a subtraction keeps c's NaN as it is)."""
    return _fma(a, b, -c, True) if fused else a * b - c


def _fnma(a, b, c, fused):
    """The compiled ``c - a * b``."""
    return _fma(-a, b, c, True) if fused else c - a * b


def _zero_first(lanes):
    """std::accumulate(lanes, 0): the lanes (rows, k) added left to right onto +0."""
    acc = np.zeros(lanes.shape[0], lanes.dtype)
    for j in range(lanes.shape[1]):
        acc += lanes[:, j]
    return acc


def _lane_sums(a, b, width, lanes, fused):
    """Rows of ``sum(a * b)`` (b None: ``sum(a)``) as the loops that keep a float vector
    accumulator do: each block of ``width`` elements read as ``width // lanes`` vectors, all of
    them added from zero into the accumulator in order (``acc + a * b`` contracted by the AVX2
    build), its lanes summed onto +0 left to right, then the scalar tail element by element."""
    rows, n = a.shape
    body = n // width * width
    acc = np.zeros((rows, lanes), a.dtype)
    va = a[:, :body].reshape(rows, -1, lanes).swapaxes(0, 1)
    if b is None:
        for v in va:
            acc += v
    else:
        vb = b[:, :body].reshape(rows, -1, lanes).swapaxes(0, 1)
        for u, v in zip(va, vb):
            acc = _fma(u, v, acc, fused)
    total = _zero_first(acc)
    for j in range(body, n):
        total = total + a[:, j] if b is None else _fma(a[:, j], b[:, j], total, fused)
    return total


def _plane_sums(dy, x, fused, tree, reduced):
    """ds and db of (rows, HxW) planes, in opmath: ComputeInternalGradients (measured: the
    products of map2_reduce_all are rounded before they are added)."""
    if reduced:
        w = _VEC_BYTES // 2
        return _lane_sums(dy, x, w, w // 2, fused), _lane_sums(dy, None, w, w // 2, fused)
    lanes = _VEC_BYTES // dy.dtype.itemsize
    fold = _lanes_tree if dy.dtype == np.float32 and tree else _lanes_in_order
    return _row_dot(dy * x, lanes, False, fold), _row_dot(dy, lanes, False, fold)


def _coefficients(ds_g, db_g, mean, rstd, s, fused, channels_last=False):
    """c2 and c3 of each (sample, group), as the compiled scalar expressions (measured: c3's
    second product is the fused one in the contiguous kernel, its first in the other)."""
    c2 = _fms(db_g, mean, ds_g, fused) * rstd * rstd * rstd * s
    if channels_last:
        return c2, _fms(-c2, mean, db_g * rstd * s, fused)
    return c2, _fnma(db_g * rstd, s, -c2 * mean, fused)


def _gamma_beta(ds, db, mean, rstd, N, C, G, want_gamma, want_beta, fused):
    """GammaBackward and BetaBackward: per channel, the samples' terms added from zero in sample
    order; ``acc += (ds - db * mean) * rstd`` is contracted twice by the AVX2 build."""
    dgamma = dbeta = None
    if want_gamma:
        rep = C // G
        m = np.repeat(mean.reshape(N, G), rep, axis=1)
        r = np.repeat(rstd.reshape(N, G), rep, axis=1)
        dgamma = np.zeros(C, ds.dtype)
        for i in range(N):
            dgamma = _fma(_fnma(db[i], m[i], ds[i], fused), r[i], dgamma, fused)
    if want_beta:
        dbeta = np.zeros(C, db.dtype)
        for t in db:
            dbeta += t
    return dgamma, dbeta


def _contiguous(dy, x, mean, rstd, gamma, N, C, HxW, G, want, reduced, reduced_param):
    """GroupNormBackwardKernelImplInternal on (N, C, HxW) opmath arrays."""
    fused, tree = _ctx()
    op = dy.dtype
    D_ = C // G
    ds, db = _plane_sums(dy.reshape(N * C, HxW), x.reshape(N * C, HxW), fused, tree,
                         reduced=reduced)
    dx = None
    if want[0]:
        g = gamma.astype(op) if gamma is not None else None
        gr = np.broadcast_to(g.reshape(1, G, D_), (N, G, D_)).reshape(N * G, D_) \
            if g is not None else None
        dsr, dbr = ds.reshape(N * G, D_), db.reshape(N * G, D_)
        # CalcDsDb: Vectorized<PT> blocks (float vectors of a reduced-float gamma in pairs)
        width = _VEC_BYTES // (2 if reduced_param else op.itemsize)
        lanes = _VEC_BYTES // op.itemsize
        if gr is None:
            ds_g = _lane_sums(dsr, None, width, lanes, fused)
            db_g = _lane_sums(dbr, None, width, lanes, fused)
        else:
            ds_g = _lane_sums(dsr, gr, width, lanes, fused)
            db_g = _lane_sums(dbr, gr, width, lanes, fused)
        s = op.type(1) / op.type(D_ * HxW)
        m, r = mean.reshape(-1).astype(op), rstd.reshape(-1).astype(op)
        c2, c3 = _coefficients(ds_g, db_g, m, r, s, fused)
        c1 = np.repeat(r.reshape(N, G), D_, axis=1)
        if g is not None:
            c1 = c1 * g.reshape(1, C)
        c2c = np.repeat(c2.reshape(N, G), D_, axis=1)[:, :, None]
        c3c = np.repeat(c3.reshape(N, G), D_, axis=1)[:, :, None]
        # the compiled c1 * dy + c2 * x + c3: measured, the first product fused into the sum
        dx = _fma(c1[:, :, None], dy, c2c * x, fused) + c3c
    dgamma, dbeta = _gamma_beta(ds.reshape(N, C), db.reshape(N, C), mean.astype(op),
                                rstd.astype(op), N, C, G, want[1], want[2], fused)
    return dx, dgamma, dbeta


def _fold(acc, tree):
    """vec_reduce_all(+) of float/double vectors (rows, lanes)."""
    return _lanes_tree(acc) if acc.dtype == np.float32 and tree else _lanes_in_order(acc)


def _columns(dy, x):
    """Sums over the HxW positions of (N, HxW, k) planes, each column from zero in position
    order: ``acc += x * dy`` (measured: not contracted here) and ``acc += dy``."""
    ds = np.zeros((dy.shape[0], dy.shape[2]), dy.dtype)
    db = np.zeros_like(ds)
    for m in range(dy.shape[1]):
        ds += x[:, m] * dy[:, m]
        db += dy[:, m]
    return ds, db


def _group_gamma_sums(ds, db, gamma, N, C, G, reduced, fused, tree):
    """CalcInternalGradientsChannelsLast's ds_gamma and db_gamma of each (sample, group), from
    the per-channel sums: per block of channels, vec_reduce_all of the products with gamma
    (float vectors in pairs for float16/bfloat16, whose leftover channels are then added one
    by one as scalar code); the partial block of float/double padded with zero lanes."""
    D_ = C // G
    op = ds.dtype
    K = _VEC_BYTES // (2 if reduced else op.itemsize)
    lanes = _VEC_BYTES // op.itemsize
    g = gamma.astype(op).reshape(G, D_) if gamma is not None else np.ones((G, D_), op)
    out = []
    for sums in (ds, db):
        v = sums.reshape(N, G, D_)
        acc = np.zeros((N, G), op)
        body = D_ // K * K
        for d in range(0, body, lanes):
            acc += _fold((v[:, :, d:d + lanes] * g[:, d:d + lanes]).reshape(-1, lanes),
                         tree).reshape(N, G)
        if body < D_ and not reduced:
            part = np.zeros((N, G, lanes), op)
            part[:, :, :D_ - body] = v[:, :, body:] * g[:, body:]
            acc += _fold(part.reshape(-1, lanes), tree).reshape(N, G)
        elif body < D_:
            for d in range(body, D_):
                acc = _fma(v[:, :, d], g[:, d], acc, fused)
        out.append(acc.reshape(-1))
    return out


def _thread_sums(dy, x, N, HxW, C, fused):
    """impl-2's step 1 and the sums of step 2: parallel_for over the N * HxW rows cut into one
    range per thread, each thread adding its rows into its own (N, C) buffers from zero; the
    buffers (threads, N, C) are returned."""
    rows = N * HxW
    nt = max(1, min(get_num_threads(), rows))
    chunk = -(-rows // nt)
    used = -(-rows // chunk)
    bs = np.zeros((get_num_threads(), N, C), dy.dtype)
    bb = np.zeros_like(bs)
    fx, fdy = x.reshape(rows, C), dy.reshape(rows, C)
    for k in range(chunk):
        t = np.arange(used)
        i = t * chunk + k
        keep = i < np.minimum(rows, (t + 1) * chunk)
        t, i = t[keep], i[keep]
        n = i // HxW
        bs[t, n] = _fma(fx[i], fdy[i], bs[t, n], fused)
        bb[t, n] += fdy[i]
    return bs, bb


def _channels_last(dy, x, mean, rstd, gamma, N, C, HxW, G, want, reduced, half):
    """GroupNormBackwardKernelImplChannelsLastInternal on (N, HxW, C) opmath arrays; dX is
    returned as (N, HxW, C)."""
    fused, tree = _ctx()
    op = dy.dtype
    D_ = C // G
    m, r = mean.reshape(-1).astype(op), rstd.reshape(-1).astype(op)
    if HxW < _FEATURE_MAP_THRESHOLD:
        ds, db = _columns(dy, x)
        ds_g, db_g = _group_gamma_sums(ds, db, gamma, N, C, G, reduced, fused, tree)
    else:
        bs, bb = _thread_sums(dy, x, N, HxW, C, fused)
        ds, db = np.zeros((N, C), op), np.zeros((N, C), op)
        for t in range(bs.shape[0]):
            ds += bs[t]
            db += bb[t]
        g = gamma.astype(op) if gamma is not None else np.ones(C, op)
        # ``acc += buffer * gamma``: measured unfused but for float16 with float16 parameters
        step2 = fused and half
        ds_g, db_g = np.zeros((N, G), op), np.zeros((N, G), op)
        for d in range(D_):
            for t in range(bs.shape[0]):
                cols = np.arange(G) * D_ + d
                ds_g = _fma(bs[t][:, cols], g[cols], ds_g, step2)
                db_g = _fma(bb[t][:, cols], g[cols], db_g, step2)
        ds_g, db_g = ds_g.reshape(-1), db_g.reshape(-1)
    dx = None
    if want[0]:
        s = op.type(1) / op.type(D_ * HxW)
        c2, c3 = _coefficients(ds_g, db_g, m, r, s, fused, channels_last=True)
        rc = np.repeat(r.reshape(N, G), D_, axis=1)
        c1 = rc * gamma.astype(op).reshape(1, C) if gamma is not None else rc
        c2c = np.repeat(c2.reshape(N, G), D_, axis=1)[:, None, :]
        c3c = np.repeat(c3.reshape(N, G), D_, axis=1)[:, None, :]
        # measured: here the second product is fused into the sum
        dx = _fma(c2c, x, c1[:, None, :] * dy, fused) + c3c
    dgamma, dbeta = _gamma_beta(ds, db, m, r, N, C, G, want[1], want[2], fused)
    return dx, dgamma, dbeta


def _as_read(t, fmt):
    """``t`` as upstream's kernel reads it: from data_ptr() on, as if laid out in X's suggested
    format (autograd hands it such tensors; a dense one in another order is read the same way)."""
    if t.is_contiguous(memory_format=fmt) or not t._non_overlapping_and_dense():
        return t
    return t.as_strided(t._size, strides_for(t, fmt))


def _numel_check(ok, what):
    if not ok:
        raise RuntimeError(f"Expected {what} to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")


@kernel("native_group_norm_backward")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group,
                               output_mask):
    if grad_out._dtype is not input._dtype:
        raise RuntimeError("Expected scalar types of X and dY are same.")
    T = input._dtype
    mixed = _mixed(input, mean, rstd)
    if mixed:
        _check_mixed(mean, rstd)
        if T not in D.REDUCED_FLOATING:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    fmt = _suggested_format(input)
    if (output_mask[1] or output_mask[2]) and weight is None:
        raise RuntimeError("tensor does not have a device")   # empty_like(undefined gamma)
    if T not in _FLOATS:
        raise not_implemented("GroupNormBackwardKernelImpl", T)
    _numel_check(numel_of(grad_out) == N * C * HxW, "dY.numel() == N * C * HxW")
    _numel_check(numel_of(input) == N * C * HxW, "X.numel() == N * C * HxW")
    _numel_check(numel_of(mean) == N * group, "mean.numel() == N * group")
    _numel_check(numel_of(rstd) == N * group, "rstd.numel() == N * group")
    _numel_check(weight is None or numel_of(weight) == C, "!gamma.defined() || gamma.numel() == C")
    PT = (_F32 if T in D.REDUCED_FLOATING else T) if mixed else T
    for t in (mean, rstd, weight):   # data_ptr<PT>()
        if t is not None and t._dtype is not PT:
            raise RuntimeError(f"expected scalar type {PT._cpp_name} but found "
                               f"{t._dtype._cpp_name}")
    reduced = T in D.REDUCED_FLOATING
    size = tuple(input._size)
    cl = fmt is not contiguous_format
    dx = dgamma = dbeta = None
    if output_mask[0]:
        dx = empty(size, T, CPU, stride=strides_for(input, fmt))
    pshape = tuple(weight._size) if weight is not None else ()
    if numel_of(input) and group:
        dy_a = as_compute(_as_read(grad_out, fmt), T).reshape(N, C, HxW)
        x_a = as_compute(_as_read(input, fmt), T).reshape(N, C, HxW)
        m_a, r_a = as_compute(mean, PT), as_compute(rstd, PT)
        g_a = as_compute(weight, PT).reshape(C) if weight is not None else None
        with quiet():
            if cl:
                gx, gw, gb = _channels_last(
                    np.ascontiguousarray(dy_a.transpose(0, 2, 1)),
                    np.ascontiguousarray(x_a.transpose(0, 2, 1)), m_a, r_a, g_a, N, C, HxW,
                    group, output_mask, reduced, T is _F16 and PT is _F16)
            else:
                gx, gw, gb = _contiguous(dy_a, x_a, m_a, r_a, g_a, N, C, HxW, group,
                                         output_mask, reduced, PT in D.REDUCED_FLOATING)
        if dx is not None:
            out = arr(dx)
            if cl:
                gx = gx.reshape((N,) + size[2:] + (C,))
                out = np.moveaxis(out, 1, -1)
            np.copyto(out, arr(wrap(np.ascontiguousarray(gx).reshape(out.shape), T)))
    else:
        gw = np.zeros(C, D.numpy_dtype(PT) if PT not in D.REDUCED_FLOATING else np.float32)
        gb = gw
        if dx is not None:
            arr(dx)[...] = 0
    if output_mask[1]:
        dgamma = wrap(np.asarray(gw).reshape(pshape), PT)
    if output_mask[2]:
        dbeta = wrap(np.asarray(gb).reshape(pshape), PT)
    return dx, dgamma, dbeta
