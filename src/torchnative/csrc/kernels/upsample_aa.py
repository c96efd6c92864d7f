"""Antialiased bilinear and bicubic interpolation (F.interpolate(..., antialias=True)) and their
backwards, as UpSampleKernel.cpp computes them.

Forward: separable, one dimension at a time — width first, then height, a dimension whose size
does not change is skipped — each pass rounding to the tensor's dtype. Every output position
takes a window of inputs around its centre ``scale * (i + 0.5)``, wide ``support`` (the filter's
half-size, stretched by the scale when downsampling), weighted by the filter and normalised by
the window's sum; the sum runs in window order in the dtype. The weights are computed in
scalar_t with C++'s promotions (a float times a double literal is a double, rounded back on
assignment), reproduced below step by step. uint8 takes the fixed-point path: double weights
rescaled to int16 with the largest precision that keeps them below 2^15, integer sums rounded by
half a unit and clamped to [0, 255].

Backward: each output's gradient times wx * wy added into its window, output by output in
row-major order (the order fixes the float sums); an input element's terms are added in that
order, so the k-th terms of a whole output row are added together."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..core.device import CPU
from ..core.layouts import is_channels_last_strides
from ..ops.kernel_registry import kernel
from .pointwise_math import fma
from .support.common import arr, as_compute, wrap
from .support.nn_util import not_implemented

_FLOATS = {"float32": np.float32, "float64": np.float64}
_UINT8 = D.BY_NAME["uint8"]


def check_sizes(input_size, output_size):
    """upsample_2d_common_check."""
    if len(output_size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size "
                           f"{len(output_size)}")
    if len(input_size) != 4:
        raise RuntimeError(f"It is expected input_size equals to 4, but got size "
                           f"{len(input_size)}")
    ih, iw = input_size[2], input_size[3]
    oh, ow = output_size
    if not (ih > 0 and iw > 0 and oh > 0 and ow > 0):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input (H: "
                           f"{ih}, W: {iw}) output (H: {oh}, W: {ow})")


def pixel_scale(in_size: int, out_size: int, align_corners: bool, scale, T):
    """area_pixel_compute_scale<scalar_t>."""
    if align_corners:
        return T(in_size - 1) / T(out_size - 1) if out_size > 1 else T(0)
    if scale is not None and scale > 0:
        return T(1.0 / scale)
    return T(in_size) / T(out_size)


def _linear(x, T):
    """HelperInterpLinear::aa_filter on |x|."""
    return np.where(x < 1.0, (T(1.0) - x).astype(T), T(0))


def _cubic(x, T):
    """HelperInterpCubic::aa_filter on |x| (Keys' kernel, a = -0.5, as Pillow)."""
    a = T(-0.5)
    near = ((a + T(2)) * x - (a + T(3))) * x * x + T(1)
    far = ((a * x - T(5) * a) * x + T(8) * a) * x - T(4) * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, T(0))).astype(T)


_FILTERS = {2: _linear, 4: _cubic}


def _weights(in_size: int, out_size: int, scale, interp_size: int, T):
    """(xmin, xsize, weights (out_size, K)) of _compute_indices_min_size_weights_aa, the
    antialias branch (align_corners_delta is 0 there)."""
    if scale >= 1.0:
        support = T((interp_size * 0.5) * float(scale))
        invscale = T(1.0 / float(scale))
    else:
        support = T(interp_size * 0.5)
        invscale = T(1.0)
    k = int(math.ceil(float(support))) * 2 + 1
    i = np.arange(out_size, dtype=np.float64)
    center = (float(scale) * (i + 0.5)).astype(T)
    # static_cast<int64_t> truncates toward zero; (center - support) is a scalar_t subtraction
    lo = np.trunc((center - support).astype(np.float64) + 0.5).astype(np.int64)
    hi = np.trunc((center + support).astype(np.float64) + 0.5).astype(np.int64)
    xmin = np.maximum(lo, 0)
    xsize = np.clip(np.minimum(hi, in_size) - xmin, 0, k)
    j = np.arange(k)
    pos = (xmin[:, None] + j).astype(T) - center[:, None]
    arg = ((pos.astype(np.float64) + 0.5) * float(invscale)).astype(T)
    w = _FILTERS[interp_size](np.abs(arg), T)
    inside = j[None, :] < xsize[:, None]
    w = np.where(inside, w, T(0)).astype(T)
    total = np.zeros(out_size, T)
    for c in range(k):
        total = (total + w[:, c]).astype(T)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(total[:, None] != 0, (w / total[:, None]).astype(T), w)
    return xmin, xsize, w


def int16_weights(w: np.ndarray, w_max: float | None = None):
    """Double weights as int16 fixed point and their precision (_compute_index_ranges_int16_weights),
    the precision chosen from ``w_max`` (the largest weight unless the caller tracked its own)."""
    if w_max is None:
        w_max = float(w.max()) if w.size else 0.0
    prec = 0
    while prec < 22:
        if int(0.5 + w_max * (1 << (prec + 1))) >= (1 << 15):
            break
        prec += 1
    scaled = w * float(1 << prec)
    q = np.where(w < 0, np.trunc(-0.5 + scaled), np.trunc(0.5 + scaled)).astype(np.int64)
    return q, prec


def _gather(x: np.ndarray, xmin, k: int, in_size: int):
    """(..., out, K): the window of every output position along the last axis."""
    idx = np.minimum(xmin[:, None] + np.arange(k), in_size - 1)
    return x[..., idx]


def _pass_float(x: np.ndarray, in_size, out_size, scale, align_corners, interp_size, T):
    """One separable pass along the last axis of x (in scalar_t)."""
    s = pixel_scale(in_size, out_size, align_corners, scale, T)
    xmin, xsize, w = _weights(in_size, out_size, s, interp_size, T)
    win = _gather(x, xmin, w.shape[1], in_size)
    t = (win[..., 0] * w[:, 0]).astype(T)
    for j in range(1, w.shape[1]):
        if T is np.float32:  # upstream's float loop is contracted, its double loop is not
            step = fma(win[..., j], w[:, j], t).astype(T)
        else:
            step = t + win[..., j] * w[:, j]
        t = np.where(j < xsize, step, t)
    return t


def _pass_uint8(x: np.ndarray, in_size, out_size, scale, align_corners, interp_size):
    s = pixel_scale(in_size, out_size, align_corners, scale, np.float64)
    xmin, xsize, w = _weights(in_size, out_size, s, interp_size, np.float64)
    return pass_fixed_point(x, xmin, xsize, *int16_weights(w), in_size)


def pass_fixed_point(x: np.ndarray, xmin, xsize, q, prec, in_size):
    """One uint8 pass along the last axis: int16 weights, sums from half a unit, shifted and
    clamped to [0, 255]."""
    win = _gather(x.astype(np.int64), xmin, q.shape[1], in_size)
    t = np.full(win.shape[:-1], 1 << (prec - 1) if prec > 0 else 0, np.int64)
    for j in range(q.shape[1]):
        t = np.where(j < xsize, t + win[..., j] * q[:, j], t)
    return np.clip(t >> prec, 0, 255).astype(np.uint8)


def vertical_run(x: np.ndarray) -> np.ndarray:
    """The vertical pass's loop reads its window indices once per inner run, assuming the
    inner dimension is the width. With an output width of 1 TensorIterator drops that
    dimension and the inner run is a column: upstream gives every row the first row's value
    (for tensors below its parallel grain size, one run per column)."""
    if x.shape[-1] == 1 and x.shape[-2] > 1:
        return np.ascontiguousarray(np.broadcast_to(x[..., :1, :], x.shape))
    return x


def _forward(name: str, interp_size: int, self, output_size, align_corners, scales_h, scales_w):
    check_sizes(tuple(self.shape), tuple(output_size))
    oh, ow = (int(n) for n in output_size)
    n, c, ih, iw = self.shape
    dt = self._dtype
    cl = is_channels_last_strides(tuple(self.shape), tuple(self.stride())) and self.dim() == 4
    shape = (n, c, oh, ow)
    stride = (oh * ow * c, 1, ow * c, c) if cl else None
    out = empty(shape, dt, CPU, stride=stride) if stride else empty(shape, dt, CPU)
    if self.numel() == 0:
        return out
    if dt is _UINT8:
        x = arr(self).astype(np.uint8)
        if iw != ow:
            x = _pass_uint8(x, iw, ow, scales_w, align_corners, interp_size)
        if ih != oh:
            x = vertical_run(np.swapaxes(_pass_uint8(np.swapaxes(x, -1, -2), ih, oh, scales_h,
                                                  align_corners, interp_size), -1, -2))
    else:
        T = _FLOATS.get(dt._name)
        if T is None:
            raise not_implemented("compute_index_ranges_weights", dt)
        x = as_compute(self, dt).astype(T)
        if iw != ow:
            x = _pass_float(x, iw, ow, scales_w, align_corners, interp_size, T)
        if ih != oh:
            x = vertical_run(np.swapaxes(_pass_float(np.swapaxes(x, -1, -2), ih, oh, scales_h,
                                                  align_corners, interp_size, T), -1, -2))
    np.copyto(arr(out), x)
    return out


def check_grad_output(grad_output, full) -> None:
    """The upsampling backward's check of grad_output against the output's ``full`` shape."""
    for i, n in enumerate(full):
        if grad_output.shape[i] != n:
            raise RuntimeError(f"Expected grad_output to have the same shape as output; output."
                               f"size({i}) = {n} but got grad_output.size({i}) = "
                               f"{grad_output.shape[i]}")


def _backward(interp_size: int, grad_output, output_size, input_size, align_corners,
              scales_h, scales_w):
    check_sizes(tuple(input_size), tuple(output_size))
    check_grad_output(grad_output, (input_size[0], input_size[1], output_size[0],
                                    output_size[1]))
    dt = grad_output._dtype
    T = _FLOATS.get(dt._name)
    if T is None:
        raise not_implemented("upsample_bilinear2d_aa_backward_cpu" if interp_size == 2
                              else "upsample_bicubic2d_aa_backward_cpu", dt)
    n, c, ih, iw = (int(s) for s in input_size)
    oh, ow = (int(s) for s in output_size)
    go = as_compute(grad_output, dt).astype(T).reshape(n * c, oh, ow)
    gi = np.zeros((n * c, ih, iw), T)
    sh = pixel_scale(ih, oh, align_corners, scales_h, T)
    sw = pixel_scale(iw, ow, align_corners, scales_w, T)
    ymin, ysize, wy = _weights(ih, oh, sh, interp_size, T)
    xmin, xsize, wx = _weights(iw, ow, sw, interp_size, T)
    # Every input column x is covered by a run of output columns; upstream adds their terms in
    # increasing order, so the k-th term of every column can be added at once (orders[k, x]:
    # the k-th output column covering x), output row by output row.
    cols = np.arange(iw)
    cover = (cols[None, :] >= xmin[:, None]) & (cols[None, :] < (xmin + xsize)[:, None])
    rank = np.clip(cols[None, :] - xmin[:, None], 0, wx.shape[1] - 1)
    dense = np.where(cover, np.take_along_axis(wx, rank, 1), T(0)).astype(T)  # (ow, iw)
    count = cover.sum(0)
    orders = np.argsort(~cover, axis=0, kind="stable")[:max(int(count.max()), 1)]
    for a in range(oh):
        y0, ny = int(ymin[a]), int(ysize[a])
        part = gi[:, y0:y0 + ny, :]
        for k, b in enumerate(orders):
            w = (dense[b, cols][None, :] * wy[a, :ny, None]).astype(T)  # wx * wy, (ny, iw)
            step = fma(np.broadcast_to(w[None], part.shape), go[:, a, b][:, None, :], part)
            part[...] = np.where(k < count, step, part)
    return wrap(gi.reshape(n, c, ih, iw), dt)


@kernel("_upsample_bilinear2d_aa")
def upsample_bilinear2d_aa(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _forward("_upsample_bilinear2d_aa", 2, self, output_size, align_corners, scales_h,
                    scales_w)


@kernel("_upsample_bicubic2d_aa")
def upsample_bicubic2d_aa(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _forward("_upsample_bicubic2d_aa", 4, self, output_size, align_corners, scales_h,
                    scales_w)


@kernel("_upsample_bilinear2d_aa_backward")
def upsample_bilinear2d_aa_backward(grad_output, output_size, input_size, align_corners,
                                    scales_h=None, scales_w=None):
    return _backward(2, grad_output, output_size, input_size, align_corners, scales_h, scales_w)


@kernel("_upsample_bicubic2d_aa_backward")
def upsample_bicubic2d_aa_backward(grad_output, output_size, input_size, align_corners,
                                   scales_h=None, scales_w=None):
    return _backward(4, grad_output, output_size, input_size, align_corners, scales_h, scales_w)
