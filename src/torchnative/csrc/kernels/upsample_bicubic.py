"""Bicubic interpolation (float32, float64, float16, bfloat16; no antialiasing) and its backward,
as upstream's CPU kernels compute them (uint8 keeps its fixed-point path, upsample_uint8.py).

Per dimension, the source index comes from area_pixel_compute_source_index without clamping,
floored through float and capped at the last input (guard_index_and_lambda); lambda is its
clamped distance; the four taps index - 1 .. index + 2 are clamped into the input and weighed by
get_cubic_upsample_coefficients (Keys' cubic, A = -0.75, in opmath; ``t + 1.0`` and
``1.0 - t`` are double sums rounded back; the polynomials' inner multiply-adds fused where the
build contracts, the last never).

Forward (UpSampleKernel.cpp's generic N-d loop, compiled per CPU capability): weights stored in
the dtype; along the width, then along the height, ``t0 * w0`` and then each further tap
added as ``t * w + acc`` in opmath (fused where the build contracts, the weights' polynomials
too). Backward (UpSampleBicubic2d.cpp, compiled once for baseline x86-64, so never fused
there): each output, in row-major order, adds ``(grad * y_coeff) * x_coeff`` into its sixteen
clamped taps, x tap outer, y tap inner, in opmath (reduced dtypes in a float buffer, rounded
once); same sizes copy."""

from __future__ import annotations

import functools

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..core.device import CPU
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .support.common import arr, as_compute
from .support.nn_util import not_implemented
from .upsample_bilinear import (_OPMATH, _empty_like_format, _madd, _store, check_backward,
                                check_forward, in_order, source_index)


def _separate(a, b, c):
    return a * b + c


# The backward's file is built once, for baseline x86-64 (no FMA); arm64 builds contract.
_BACKWARD_MADD = _madd if cpu_capability.CONTRACTS_FMA and cpu_capability.CAPABILITY not in (
    cpu_capability.AVX2, cpu_capability.AVX512) else _separate


def _coefficients(in_size: int, out_size: int, align_corners: bool, scale, T, madd):
    """(taps' indices (out, 4), coefficients (out, 4) in T) of every output position."""
    real, index = source_index(in_size, out_size, align_corners, scale, T, True, madd)
    t = np.clip(real - index.astype(T), T(0), T(1)).astype(T)
    a = T(-0.75)

    # The compiler fuses the inner steps of each polynomial, not its last one (measured).
    def near(x):  # cubic_convolution1
        return _separate(madd(T(a + 2), x, -T(a + 3)) * x, x, T(1))

    def far(x):  # cubic_convolution2
        return _separate(madd(madd(a, x, -T(5) * a), x, T(8) * a), x, -T(4) * a)

    wide = t.astype(np.float64)
    x2 = (1.0 - wide).astype(T)
    coeffs = np.stack([far((wide + 1.0).astype(T)), near(t), near(x2),
                       far((x2.astype(np.float64) + 1.0).astype(T))], 1).astype(T)
    taps = np.clip(index[:, None] + np.arange(-1, 3), 0, in_size - 1)
    return taps, coeffs


def _pass(x, axis: int, taps, weights):
    """One dimension of the generic loop, unrolled: t0 w0 + t1 w1 (the first product fused
    where the build contracts), then t w + acc for each further tap."""
    shape = (-1,) + (1,) * (x.ndim - 1 - axis)
    t = [np.take(x, taps[:, j], axis) for j in range(4)]
    w = [weights[:, j].reshape(shape) for j in range(4)]
    acc = _madd(t[0], w[0], t[1] * w[1])
    for j in (2, 3):
        acc = _madd(t[j], w[j], acc)
    return acc


def bicubic2d(self, output_size, align_corners, scales_h, scales_w):
    """upsample_bicubic2d for every dtype but uint8."""
    check_forward(2, self, output_size)
    n, c, ih, iw = (int(s) for s in self.shape)
    dt = self._dtype
    T = _OPMATH.get(dt._name)
    if T is None:
        raise not_implemented("compute_indices_weights_cubic", dt)
    oh, ow = (int(s) for s in output_size)
    out = _empty_like_format((n, c, oh, ow), dt, self)
    if out.numel() == 0:
        return out
    x = as_compute(self, dt)
    S = D.numpy_dtype(dt)  # the weights are stored in the dtype
    with np.errstate(all="ignore"):  # infinities and NaNs are values here
        for axis, (i, o, s) in ((3, (iw, ow, scales_w)), (2, (ih, oh, scales_h))):
            taps, coeffs = _coefficients(i, o, align_corners, s, T, _madd)
            x = _pass(x, axis, taps, coeffs.astype(S).astype(T))
        _store(out, x, dt, None)
    return out


@functools.lru_cache(maxsize=16)  # shapes repeat from call to call (the arrays are not written)
def _backward_terms(sizes, align_corners: bool, scales_h, scales_w, T):
    """The backward's terms in the order they are added (in_order's groups): (target element,
    source output, y coefficient, x coefficient, group sizes). Term (oy, ox, ii, jj) of the
    outputs' row-major order: x tap ii outer, y tap jj inner."""
    ih, iw, oh, ow = sizes
    tx, cx = _coefficients(iw, ow, align_corners, scales_w, T, _BACKWARD_MADD)
    ty, cy = _coefficients(ih, oh, align_corners, scales_h, T, _BACKWARD_MADD)
    grid = (oh, ow, 4, 4)
    target = (ty[:, None, None, :] * iw + tx[None, :, :, None]).ravel()
    source = np.broadcast_to(np.arange(oh * ow).reshape(oh, ow, 1, 1), grid).ravel()
    wy = np.broadcast_to(cy[:, None, None, :], grid).ravel()
    wx = np.broadcast_to(cx[None, :, :, None], grid).ravel()
    seq, counts = in_order(target)
    return target[seq], source[seq], wy[seq, None], wx[seq, None], counts


@kernel("upsample_bicubic2d_backward")
def upsample_bicubic2d_backward(grad_output, output_size, input_size, align_corners,
                                scales_h=None, scales_w=None):
    check_backward(2, grad_output, output_size, input_size)
    dt = grad_output._dtype
    n, c, ih, iw = (int(s) for s in input_size)
    oh, ow = (int(s) for s in output_size)
    out = empty((n, c, ih, iw), dt, CPU)
    if (ih, iw) == (oh, ow):  # copied before the dtype dispatch
        np.copyto(arr(out), arr(grad_output))
        return out
    T = _OPMATH.get(dt._name)
    if T is None:
        raise not_implemented("upsample_bicubic2d_backward", dt)
    if out.numel() == 0:
        return out
    madd = _BACKWARD_MADD
    target, source, wy, wx, counts = _backward_terms((ih, iw, oh, ow), align_corners, scales_h,
                                                     scales_w, T)
    g = np.ascontiguousarray(as_compute(grad_output, dt).reshape(n * c, oh * ow).T)
    gi = np.zeros((ih * iw, n * c), T)
    lo = 0
    with np.errstate(all="ignore"):
        terms = g[source] * wy  # every term at once, in the order added
        if madd is _separate:
            terms *= wx
        for k in counts:
            part = slice(lo, lo + k)
            lo += k
            tgt = target[part]
            gi[tgt] = gi[tgt] + terms[part] if madd is _separate else \
                madd(terms[part], wx[part], gi[tgt])
    # apply_grad_input's vectors are the baseline build's scalar loops: c10's bfloat16 NaNs
    _store(out, gi.T.reshape(n, c, ih, iw), dt, None)
    return out
