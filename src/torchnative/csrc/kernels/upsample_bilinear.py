"""Bilinear interpolation of float32, float64, float16 and bfloat16 images without antialiasing,
and its backward, as UpSampleKernel.cpp and UpSampleMoreKernel.cpp compute them (uint8 keeps
its fixed-point path, upsample_uint8.py).

Per dimension, compute_source_index_and_lambda in the opmath type (float for the reduced
dtypes): scale by area_pixel_compute_scale, source index ``scale * (i + 0.5) - 0.5`` (clamped
at 0) or ``scale * i`` with align_corners, floored through float and capped at the last input;
lambda1 its distance clamped to [0, 1], lambda0 = 1 - lambda1; an unchanged size copies.

The forward takes one of two loops (the same choice as upstream, which changes the last bits):
* the channels-last loop, for channels-last inputs with more than 3 channels, for outputs with
  H + W <= 128, and for 3 channels when one thread runs: the four corner weights are products
  of opmath lambdas, and the channels are summed in blocks of a 32-byte vector, the remainder
  one by one, each in its own order;
* otherwise the generic N-d loop: lambdas stored in the dtype, each row interpolated along W,
  then the two rows along H.
The loops, the index rules and the checks are written for N spatial dimensions: linear1d and
trilinear3d (upsample_linear.py) and bicubic (upsample_bicubic.py) share them.
The AVX512 build registers no kernel of its own here (REGISTER_DISPATCH), so it runs AVX2's;
where upstream's compiled loops contract ``a * b + c`` into a fused multiply-add (AVX2, the
index computation included) depends on the capability, and the orders below are the ones the
compiler chose, measured against upstream.

The backward adds ``(h_lambda * w_lambda) * grad`` into the input gradient output by output in
row-major order, four corners each, in opmath (reduced dtypes accumulate in a float buffer and
round once). bfloat16 NaNs get the bits of the converter that stores them: 0xFFFF from the
vectorized one (the forward's vector channels, the backward's 16-element blocks of each slice;
not in the DEFAULT build), c10's 0x7FC0 elsewhere."""

from __future__ import annotations

import functools

import numpy as np

from ..core import dtypes as D
from ..core.cast import cast_array, scalar_nans
from ..core.construct import empty
from ..core.device import CPU
from ..core.layouts import (channels_last, channels_last_3d, channels_last_strides,
                            contiguous_format, suggest_memory_format)
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from ..random.fpmath import fma32_rounded
from .pointwise_math import fma
from .support.common import arr, as_compute, int_list
from .support.nn_util import not_implemented
from .support.parallel import get_num_threads
from .upsample_aa import check_grad_output, pixel_scale
from .upsample_nearest import _sizes_check

_F16, _BF16 = D.BY_NAME["float16"], D.BY_NAME["bfloat16"]
_OPMATH = {"float32": np.float32, "float64": np.float64, "float16": np.float32,
           "bfloat16": np.float32}
_VEC_BYTES = 32  # the AVX2 build's Vectorized (AVX512 runs it too); DEFAULT's is as wide
_CONTRACTS = cpu_capability.CONTRACTS_FMA
_ONE = np.float64(1.0)  # the products come exact: fma32_rounded(p, 1, c) rounds p + c once
_FLAT_MAX = 1 << 16  # larger float32 arrays take fma32's chunked loop
_VECTOR_NANS = cpu_capability.CAPABILITY != cpu_capability.DEFAULT


def _madd(a, b, c):
    """Upstream's compiled ``a * b + c`` on opmath arrays (broadcasting): one rounding where the
    build contracts it, two where it does not. Small float32 operands take the float64 sum of
    the exact product, rounded once (fpmath.fma32_rounded: lanes that could round twice are
    redone), without fma32's general broadcasting and chunking."""
    a = np.asarray(a)
    if a.dtype != np.float32 or not _CONTRACTS or a.size > _FLAT_MAX:
        return fma(a, b, c)
    product = a.astype(np.float64) * b
    wide = np.broadcast_to(c, product.shape).astype(np.float64).reshape(-1)
    return fma32_rounded(product.reshape(-1), _ONE, wide, None).reshape(product.shape)


def source_index(in_size: int, out_size: int, align_corners: bool, scale, T, cubic: bool,
                 madd=None):
    """(real source index in T, its floor through float capped at the last input) of every
    output position: area_pixel_compute_source_index (clamped at 0 unless ``cubic``) and
    guard_index_and_lambda's index. ``madd``: how the build computes ``a * b + c``."""
    i = np.arange(out_size)
    s = pixel_scale(in_size, out_size, align_corners, scale, T)
    if align_corners:
        real = s * i.astype(T)
    else:
        real = (madd or _madd)(np.full(out_size, s, T), i.astype(T) + T(0.5), T(-0.5))
        if not cubic:
            real = np.where(real < 0, T(0), real)
    return real, np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), in_size - 1)


@functools.lru_cache(maxsize=64)  # shapes repeat from call to call (the arrays are not written)
def _lambdas(in_size: int, out_size: int, align_corners: bool, scale, T):
    """(index0, index1, lambda0, lambda1) of every output position, lambdas in T."""
    if in_size == out_size:
        i = np.arange(out_size)
        return i, i, np.ones(out_size, T), np.zeros(out_size, T)
    real, i0 = source_index(in_size, out_size, align_corners, scale, T, False)
    l1 = np.clip(real - i0.astype(T), T(0), T(1)).astype(T)
    return i0, i0 + (i0 < in_size - 1), T(1) - l1, l1


def _in_dtype(lam, dt, T):
    """The generic loop stores lambdas in the dtype: lambda1 rounded, lambda0 = 1 - it there."""
    if dt._name in ("float32", "float64"):
        return lam
    S = D.numpy_dtype(dt)
    l1 = lam[3].astype(S).astype(T)
    return lam[0], lam[1], (T(1) - l1).astype(S).astype(T), l1


def interpolate_generic(x, lams):
    """upsample_generic_Nd's linear loop on ``x`` (N, C, *spatial), one ``lams`` entry per
    spatial dimension: ``t0 * w0 + t1 * w1`` along the last dimension, then outward. Each
    output's inner results do not depend on its outer indices, so a pass per dimension over the
    whole array gives the same values."""
    for axis in range(x.ndim - 1, 1, -1):
        i0, i1, w0, w1 = lams[axis - 2]
        shape = (-1,) + (1,) * (x.ndim - 1 - axis)
        x = _madd(np.take(x, i0, axis), w0.reshape(shape),
                  np.take(x, i1, axis) * w1.reshape(shape))
    return x


def _corners(x, lams):
    """(values, weights) of every corner, the last dimension's index varying fastest; weights
    are the opmath products of the lambdas, left to right."""
    values, weights = [x], [None]
    for axis, (i0, i1, a0, a1) in enumerate(lams, 2):
        values = [np.take(v, i, axis) for v in values for i in (i0, i1)]
        weights = [a if w is None else np.multiply.outer(w, a) for w in weights for a in (a0, a1)]
    return values, weights


def interpolate_channels_last(x, lams, dt):
    """cpu_upsample_linear_channels_last; returns (values, number of leading channels the vector
    loop computed)."""
    p, w = _corners(x, lams)
    c = x.shape[1]
    vector = c - c % (_VEC_BYTES // dt._itemsize)
    out = np.empty(p[0].shape, x.dtype)
    k = len(p)
    if vector:
        # Vectorized: x0 w0 + (x1 w1 + (... + x[k-1] w[k-1])); the compiler fuses the last
        # pair one way for float/double, the other way for bfloat16/half's float pairs.
        v = [q[:, :vector] for q in p]
        last, first = (k - 1, k - 2) if dt._name in ("float32", "float64") else (k - 2, k - 1)
        s = _madd(v[last], w[last], v[first] * w[first])
        for j in range(k - 3, -1, -1):
            s = _madd(v[j], w[j], s)
        out[:, :vector] = s
    if vector < c:
        # The scalar remainder sums left to right; half's first pair fuses the other way.
        t = [q[:, vector:] for q in p]
        one, two = (1, 0) if dt is _F16 else (0, 1)
        s = _madd(t[one], w[one], t[two] * w[two])
        for j in range(2, k):
            s = _madd(t[j], w[j], s)
        out[:, vector:] = s
    return out, vector


def _use_channels_last(self, oh: int, ow: int) -> bool:
    """_use_channels_last_kernel_2d, and 3 channels on one thread."""
    c = self.shape[1]
    return (self.is_contiguous(memory_format=channels_last) and c > 3) or oh + ow <= 128 or \
        (get_num_threads() == 1 and c == 3)


def _empty_like_format(shape, dt, like):
    """A result laid out as ``like.suggest_memory_format()``."""
    if suggest_memory_format(tuple(like.shape), tuple(like.stride())) is not contiguous_format:
        return empty(shape, dt, CPU, stride=channels_last_strides(shape))
    return empty(shape, dt, CPU)


def _store(out, values, dt, vector_lanes):
    """Values (opmath) into ``out``, rounded to its dtype; bfloat16 NaNs take the vectorized
    converter's bits (0xFFFF) in ``vector_lanes`` (a mask, or None for none), c10's elsewhere."""
    if dt is _BF16:
        values = cast_array(values, D.BY_NAME["float32"], dt)
        if vector_lanes is None or not _VECTOR_NANS:
            scalar_nans(values)
        elif np.isnan(values).any():
            values.view(np.uint16)[...] = np.where(vector_lanes, values.view(np.uint16),
                                                   scalar_nans(values.copy()).view(np.uint16))
    np.copyto(arr(out), values, casting="unsafe")


def check_forward(k: int, self, output_size) -> None:
    """upsample_{k}d's checks: the sizes, and an input empty only along its batch."""
    _sizes_check(k, tuple(self.shape), tuple(output_size))
    if self.numel() == 0 and int(np.prod(self.shape[1:])) == 0:
        raise RuntimeError(f"Non-empty {k + 2}D data tensor expected but got a tensor with "
                           f"sizes {int_list(self.shape)}")


def bilinear2d(self, output_size, align_corners, scales_h, scales_w):
    """upsample_bilinear2d for every dtype but uint8."""
    check_forward(2, self, output_size)
    oh, ow = (int(s) for s in output_size)
    dt = self._dtype
    cl = _use_channels_last(self, oh, ow)
    if dt._name not in _OPMATH:
        raise not_implemented("upsample_bilinear2d_channels_last" if cl else
                              "compute_indices_weights_linear", dt)
    return linear_forward(self, (oh, ow), align_corners, (scales_h, scales_w), cl)


def linear_forward(self, output_size, align_corners, scales, cl: bool):
    """The linear interpolation of ``self`` (N, C, *spatial) to the spatial ``output_size``,
    checked, by the channels-last loop (``cl``) or the generic one."""
    dt = self._dtype
    T = _OPMATH[dt._name]
    out = _empty_like_format(tuple(self.shape[:2]) + tuple(output_size), dt, self)
    if out.numel() == 0:
        return out
    x = as_compute(self, dt)
    lams = [_lambdas(i, o, align_corners, s, T)
            for i, o, s in zip(self.shape[2:], output_size, scales)]
    with np.errstate(all="ignore"):  # infinities and NaNs are values here
        if cl:
            values, vector = interpolate_channels_last(x, lams, dt)
            lanes = (np.arange(x.shape[1]) < vector).reshape((-1,) + (1,) * len(lams))
        else:
            values = interpolate_generic(x, [_in_dtype(lam, dt, T) for lam in lams])
            lanes = None
        _store(out, values, dt, lanes)
    return out


@functools.lru_cache(maxsize=32)
def _terms(in_sizes, out_sizes, align_corners: bool, scales, T):
    """The backward's terms (target element, source output, weight) in the order they are added:
    every output adds its corners in turn (the last dimension's index varying fastest), outputs
    in row-major order, so each input element receives its terms in that order; all elements'
    k-th terms come k-th, ``counts[k]`` of them. A corner's weight is the product of its
    lambdas, left to right."""
    lams = [_lambdas(i, o, align_corners, s, T) for i, o, s in zip(in_sizes, out_sizes, scales)]
    targets, weights = [np.zeros((), np.int64)], [None]
    for size, (i0, i1, a0, a1) in zip(in_sizes, lams):
        targets = [np.add.outer(t * size, i) for t in targets for i in (i0, i1)]
        weights = [a if w is None else np.multiply.outer(w, a) for w in weights for a in (a0, a1)]
    k = len(targets)
    target = np.stack([t.ravel() for t in targets], 1).ravel()
    weight = np.stack([w.astype(T).ravel() for w in weights], 1).ravel()
    seq, counts = in_order(target)
    return target[seq], seq // k, weight[seq][:, None], counts


def in_order(target):
    """Terms (each adding into element ``target[j]``, in the order j) rearranged so that every
    element's k-th term comes in the k-th group: (the terms' order, each group's size). Within
    a group no element repeats, so a group adds at once."""
    order = np.argsort(target, kind="stable")
    sorted_target = target[order]
    rank = np.arange(len(order)) - np.searchsorted(sorted_target, sorted_target)
    return order[np.argsort(rank, kind="stable")], np.bincount(rank)


def _accumulate(g, terms, in_size: int, T):
    """The input gradient (in_size, rows) of ``g`` (outputs, rows), term by term."""
    target, source, weight, counts = terms
    fused32 = T is np.float32 and _CONTRACTS
    if fused32:  # float32 values held in float64: the products are exact there
        g, weight = np.ascontiguousarray(g, np.float64), weight.astype(np.float64)
    else:
        g = np.ascontiguousarray(g)
    gi = np.zeros((in_size, g.shape[1]), g.dtype)
    lo = 0
    for n in counts:
        tgt, part = target[lo:lo + n], slice(lo, lo + n)
        lo += n
        if fused32:
            product = g[source[part]] * weight[part]
            gi[tgt] = fma32_rounded(product.reshape(-1), _ONE, gi[tgt].reshape(-1),
                                    None).reshape(product.shape)
        else:
            gi[tgt] = fma(g[source[part]], weight[part], gi[tgt])
    return gi.astype(T, copy=False)


def linear_backward(name: str, grad_output, output_size, input_size, align_corners, scales):
    """upsample_{linear1d,bilinear2d,trilinear3d}_backward: the checks, then
    cpu_upsample_linear_backward (channels-first or channels-last: each input element adds its
    terms in the same order either way)."""
    k = len(scales)
    check_backward(k, grad_output, output_size, input_size)
    cl = k > 1 and grad_output.is_contiguous(memory_format=(channels_last, channels_last_3d)[k - 2])
    if grad_output._dtype._name not in _OPMATH:
        raise not_implemented(f"{name}_channels_last" if cl else name, grad_output._dtype)
    dt = grad_output._dtype
    T = _OPMATH[dt._name]
    n, c, *spatial_in = (int(s) for s in input_size)
    spatial_out = tuple(int(s) for s in output_size)
    out = _empty_like_format((n, c, *spatial_in), dt, grad_output)
    if out.numel() == 0:
        return out
    size_in, size_out = int(np.prod(spatial_in)), int(np.prod(spatial_out))
    g = as_compute(grad_output, dt).reshape(n * c, size_out).T
    terms = _terms(tuple(spatial_in), spatial_out, align_corners, tuple(scales), T)
    with np.errstate(all="ignore"):
        gi = _accumulate(g, terms, size_in, T)
    gi = gi.T.reshape(n, c, *spatial_in)
    lanes = None
    if dt is _BF16:  # apply_grad_input converts each slice in 16-element vectors, then the rest
        if cl:
            flat = np.moveaxis(np.arange(size_in * c).reshape(*spatial_in, c), -1, 0)
            size = size_in * c
        else:
            flat, size = np.arange(size_in).reshape(spatial_in), size_in
        lanes = flat < size - size % 16
    _store(out, gi, dt, lanes)
    return out


def check_backward(k: int, grad_output, output_size, input_size) -> None:
    """upsample_{k}d_backward's checks of the sizes and of grad_output against them."""
    full = _sizes_check(k, input_size, output_size)
    if k == 1:
        for i in range(3):  # check_dim_size
            if grad_output.dim() != 3 or grad_output.shape[i] != full[i]:
                raise RuntimeError(f"Expected a tensor of dimension 3 and tensor.size[{i}] == "
                                   f"{full[i]} but got: dimension {grad_output.dim()} and "
                                   f"tensor.size[{i}] = {grad_output.shape[i]}")
        return
    if grad_output.dim() != k + 2:
        raise RuntimeError(f"Expected grad_output to be a tensor of dimension {k + 2} but got: "
                           f"dimension {grad_output.dim()}")
    check_grad_output(grad_output, full)


@kernel("upsample_bilinear2d_backward")
def upsample_bilinear2d_backward(grad_output, output_size, input_size, align_corners,
                                 scales_h=None, scales_w=None):
    return linear_backward("upsample_bilinear2d_backward", grad_output, output_size, input_size,
                           align_corners, (scales_h, scales_w))
