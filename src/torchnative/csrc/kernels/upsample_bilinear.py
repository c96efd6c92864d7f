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
from ..core.layouts import channels_last, channels_last_strides, suggest_memory_format
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from ..random.fpmath import fma32_rounded
from .pointwise_math import fma
from .support.common import arr, as_compute
from .support.nn_util import not_implemented
from .support.parallel import get_num_threads
from .upsample_aa import check_grad_output, check_sizes, pixel_scale

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


@functools.lru_cache(maxsize=64)  # shapes repeat from call to call (the arrays are not written)
def _lambdas(in_size: int, out_size: int, align_corners: bool, scale, T):
    """(index0, index1, lambda0, lambda1) of every output position, lambdas in T."""
    i = np.arange(out_size)
    if in_size == out_size:
        return i, i, np.ones(out_size, T), np.zeros(out_size, T)
    s = pixel_scale(in_size, out_size, align_corners, scale, T)
    if align_corners:
        real = s * i.astype(T)
    else:
        real = _madd(np.full(out_size, s, T), i.astype(T) + T(0.5), T(-0.5))
        real = np.where(real < 0, T(0), real)
    i0 = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), in_size - 1)
    l1 = np.clip(real - i0.astype(T), T(0), T(1)).astype(T)
    return i0, i0 + (i0 < in_size - 1), T(1) - l1, l1


def _in_dtype(lam, dt, T):
    """The generic loop stores lambdas in the dtype: lambda1 rounded, lambda0 = 1 - it there."""
    if dt._name in ("float32", "float64"):
        return lam
    S = D.numpy_dtype(dt)
    l1 = lam[3].astype(S).astype(T)
    return lam[0], lam[1], (T(1) - l1).astype(S).astype(T), l1


def _generic(x, lh, lw):
    h0, h1, a0, a1 = lh
    w0, w1, b0, b1 = lw
    r0, r1 = x[:, :, h0], x[:, :, h1]
    t0 = _madd(r0[..., w0], b0, r0[..., w1] * b1)
    t1 = _madd(r1[..., w0], b0, r1[..., w1] * b1)
    return _madd(t0, a0[:, None], t1 * a1[:, None])


def _channels_last(x, lh, lw, dt):
    """Returns (values, number of leading channels the vector loop computed)."""
    h0, h1, a0, a1 = lh
    w0, w1, b0, b1 = lw
    r0, r1 = x[:, :, h0], x[:, :, h1]
    p = (r0[..., w0], r0[..., w1], r1[..., w0], r1[..., w1])
    w = (np.outer(a0, b0), np.outer(a0, b1), np.outer(a1, b0), np.outer(a1, b1))
    c = x.shape[1]
    vector = c - c % (_VEC_BYTES // dt._itemsize)
    out = np.empty(p[0].shape, x.dtype)
    if vector:
        # Vectorized: x00 w00 + (x01 w01 + (x10 w10 + x11 w11)); the compiler fuses the last
        # pair one way for float/double, the other way for bfloat16/half's float pairs.
        v = [q[:, :vector] for q in p]
        last, first = (3, 2) if dt._name in ("float32", "float64") else (2, 3)
        s = _madd(v[last], w[last], v[first] * w[first])
        out[:, :vector] = _madd(v[0], w[0], _madd(v[1], w[1], s))
    if vector < c:
        # The scalar remainder sums left to right; half's first pair fuses the other way.
        t = [q[:, vector:] for q in p]
        one, two = (1, 0) if dt is _F16 else (0, 1)
        s = _madd(t[one], w[one], t[two] * w[two])
        out[:, vector:] = _madd(t[3], w[3], _madd(t[2], w[2], s))
    return out, vector


def _use_channels_last(self, oh: int, ow: int) -> bool:
    """_use_channels_last_kernel_2d, and 3 channels on one thread."""
    c = self.shape[1]
    return (self.is_contiguous(memory_format=channels_last) and c > 3) or oh + ow <= 128 or \
        (get_num_threads() == 1 and c == 3)


def _empty_like_format(shape, dt, like):
    """A result laid out as ``like.suggest_memory_format()``."""
    if suggest_memory_format(tuple(like.shape), tuple(like.stride())) is channels_last:
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


def bilinear2d(self, output_size, align_corners, scales_h, scales_w):
    """upsample_bilinear2d for every dtype but uint8."""
    check_sizes(tuple(self.shape), tuple(output_size))
    n, c, ih, iw = self.shape
    if self.numel() == 0 and c * ih * iw == 0:
        raise RuntimeError(f"Non-empty 4D data tensor expected but got a tensor with sizes "
                           f"[{', '.join(str(int(s)) for s in self.shape)}]")
    oh, ow = (int(s) for s in output_size)
    dt = self._dtype
    cl = _use_channels_last(self, oh, ow)
    T = _OPMATH.get(dt._name)
    if T is None:
        raise not_implemented("upsample_bilinear2d_channels_last" if cl else
                              "compute_indices_weights_linear", dt)
    out = _empty_like_format((n, c, oh, ow), dt, self)
    if out.numel() == 0:
        return out
    x = as_compute(self, dt)
    lh = _lambdas(ih, oh, align_corners, scales_h, T)
    lw = _lambdas(iw, ow, align_corners, scales_w, T)
    with np.errstate(all="ignore"):  # infinities and NaNs are values here
        if cl:
            values, vector = _channels_last(x, lh, lw, dt)
            lanes = (np.arange(c) < vector)[:, None, None]
        else:
            values, lanes = _generic(x, _in_dtype(lh, dt, T), _in_dtype(lw, dt, T)), None
        _store(out, values, dt, lanes)
    return out


@functools.lru_cache(maxsize=32)
def _terms(sizes, align_corners: bool, scales_h, scales_w, T):
    """The backward's terms (target element, source output, weight) in the order they are added:
    every output adds its four corners in turn, outputs in row-major order, so each input
    element receives its terms in that order; all elements' k-th terms come k-th, ``counts[k]``
    of them."""
    in_h, in_w, out_h, out_w = sizes
    h0, h1, a0, a1 = _lambdas(in_h, out_h, align_corners, scales_h, T)
    w0, w1, b0, b1 = _lambdas(in_w, out_w, align_corners, scales_w, T)
    corners = [(h0, a0, w0, b0), (h0, a0, w1, b1), (h1, a1, w0, b0), (h1, a1, w1, b1)]
    target = np.stack([(hi[:, None] * in_w + wi[None, :]).ravel()
                       for hi, _, wi, _ in corners], 1).ravel()
    weight = np.stack([np.outer(ah, bw).astype(T).ravel() for _, ah, _, bw in corners],
                      1).ravel()
    order = np.argsort(target, kind="stable")
    sorted_target = target[order]
    rank = np.arange(len(order)) - np.searchsorted(sorted_target, sorted_target)
    seq = order[np.argsort(rank, kind="stable")]
    return target[seq], seq // 4, weight[seq][:, None], np.bincount(rank)


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


@kernel("upsample_bilinear2d_backward")
def upsample_bilinear2d_backward(grad_output, output_size, input_size, align_corners,
                                 scales_h=None, scales_w=None):
    check_sizes(tuple(input_size), tuple(output_size))
    if grad_output.dim() != 4:
        raise RuntimeError(f"Expected grad_output to be a tensor of dimension 4 but got: "
                           f"dimension {grad_output.dim()}")
    check_grad_output(grad_output, (input_size[0], input_size[1], output_size[0],
                                    output_size[1]))
    dt = grad_output._dtype
    cl = grad_output.is_contiguous(memory_format=channels_last)
    T = _OPMATH.get(dt._name)
    if T is None:
        raise not_implemented("upsample_bilinear2d_backward_channels_last" if cl else
                              "upsample_bilinear2d_backward", dt)
    n, c, ih, iw = (int(s) for s in input_size)
    oh, ow = (int(s) for s in output_size)
    out = _empty_like_format((n, c, ih, iw), dt, grad_output)
    if out.numel() == 0:
        return out
    g = as_compute(grad_output, dt).reshape(n * c, oh * ow).T
    terms = _terms((ih, iw, oh, ow), align_corners, scales_h, scales_w, T)
    with np.errstate(all="ignore"):
        gi = _accumulate(g, terms, ih * iw, T)
    gi = gi.T.reshape(n, c, ih, iw)
    lanes = None
    if dt is _BF16:  # apply_grad_input converts each slice in 16-element vectors, then the rest
        if cl:
            flat = np.arange(ih * iw * c).reshape(ih, iw, c).transpose(2, 0, 1)
            size = ih * iw * c
        else:
            flat, size = np.arange(ih * iw).reshape(ih, iw), ih * iw
        lanes = flat < size - size % 16
    _store(out, gi, dt, lanes)
    return out
