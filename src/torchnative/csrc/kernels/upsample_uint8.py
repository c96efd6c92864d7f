"""Bilinear and bicubic interpolation of uint8 images without antialiasing, as UpSampleKernel.cpp
computes them: the separable fixed-point path (the AVX2 kernel for up to 4 channels, the generic
separable loop otherwise, with the same integer arithmetic), not the float formula.

Per dimension, each output's source index comes from area_pixel_compute_source_index in double
(unclamped for cubic), floored through float (``floorf``) and capped at the last input; lambda
is the clamped distance. Its ``interp_size`` taps (2 or 4) weigh filter(j + 1 - support -
lambda) (1 - |x| or Keys' cubic with a = -0.75, in double), and taps that fall before the first
or past the last input are added into the border tap, as the float path's clamped indices
would read them. The largest weight seen while adding (a partial sum counts) sets the int16
precision; the passes themselves are upsample_aa's (width, then height, a dimension of
unchanged size skipped). The other dtypes have their own kernels (upsample_bilinear.py,
upsample_bicubic.py)."""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..core.device import CPU
from ..core.layouts import is_channels_last_strides
from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from .support.common import arr
from .upsample_aa import check_sizes, int16_weights, pass_fixed_point, pixel_scale, vertical_run
from .upsample_bicubic import bicubic2d
from .upsample_bilinear import bilinear2d
from .upsample_vec import _output_size

_UINT8 = D.BY_NAME["uint8"]
_DECOMPOSED: dict = {}


def _linear(x):
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _cubic(x):
    a = -0.75
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def _weights(in_size: int, out_size: int, scale: float, align_corners: bool, taps: int):
    """(index_min, index_size, double weights (out, taps), largest weight seen)."""
    i = np.arange(out_size, dtype=np.float64)
    cubic = taps > 2
    if align_corners:
        real = scale * i
    else:
        real = scale * (i + 0.5) - 0.5
        if not cubic:
            real = np.where(real < 0, 0.0, real)
    index = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), in_size - 1)
    lam = np.minimum(np.maximum(real - index, 0.0), 1.0)
    support = taps // 2
    lo = index - support + 1
    imin = np.maximum(lo, 0)
    isize = np.clip(np.minimum(index + support + 1, in_size) - imin, 0, taps)
    w = np.zeros((out_size, taps))
    rows = np.arange(out_size)
    slot = np.zeros(out_size, np.int64)
    w_max = 0.0
    filt = _cubic if cubic else _linear
    for j in range(taps):
        val = filt(float(j + 1 - support) - lam)
        slot = np.where(lo + j <= 0, 0, np.where(lo + j >= in_size - 1, isize - 1, slot))
        w[rows, slot] += val
        w_max = max(w_max, float(w[rows, slot].max(initial=0.0)))
        slot = slot + 1
    return imin, isize, w, w_max


def _pass(x, in_size, out_size, scale, align_corners, taps):
    s = float(pixel_scale(in_size, out_size, align_corners, scale, np.float64))
    imin, isize, w, w_max = _weights(in_size, out_size, s, align_corners, taps)
    q, prec = int16_weights(w, w_max)
    return pass_fixed_point(x, imin, isize, q, prec, in_size)


def _uint8(self, output_size, align_corners, scales_h, scales_w, taps):
    check_sizes(tuple(self.shape), tuple(output_size))
    oh, ow = (int(n) for n in output_size)
    n, c, ih, iw = self.shape
    cl = is_channels_last_strides(tuple(self.shape), tuple(self.stride()))
    shape = (n, c, oh, ow)
    out = empty(shape, _UINT8, CPU, stride=(oh * ow * c, 1, ow * c, c)) if cl else \
        empty(shape, _UINT8, CPU)
    if self.numel() == 0:
        return out
    x = arr(self)
    if iw != ow:
        x = _pass(x, iw, ow, scales_w, align_corners, taps)
    if ih != oh:
        x = vertical_run(np.swapaxes(_pass(np.swapaxes(x, -1, -2), ih, oh, scales_h,
                                           align_corners, taps), -1, -2))
    np.copyto(arr(out), x)
    return out


def _decomposition(name: str):
    """upstream's registered decomposition of ``aten::name`` (for the other dtypes)."""
    fn = _DECOMPOSED.get(name)
    if fn is None:
        from ..dispatch.door import _decomposition as find, _guarded_decomposition
        from ..ops.dispatcher import REGISTRY

        base, _, overload = name.partition(".")
        op = REGISTRY.find(f"aten::{base}", overload)
        fn = _DECOMPOSED[name] = _guarded_decomposition(op, find(op))
    return fn


def _register(base: str, taps: int, floating=None):
    """The direct and ``.vec`` kernels: uint8 here, other dtypes ``floating`` (its own kernel)
    or, without one, upstream's decompositions."""
    @kernel(base)
    def direct(self, output_size, align_corners, scales_h=None, scales_w=None):
        if self._dtype is _UINT8:
            return _uint8(self, output_size, align_corners, scales_h, scales_w, taps)
        if floating is not None:
            return floating(self, output_size, align_corners, scales_h, scales_w)
        return _decomposition(base)(self, output_size, align_corners, scales_h, scales_w)

    @kernel(f"{base}.vec", composite=True)
    def vec(input, output_size, align_corners, scale_factors):
        if input._dtype is not _UINT8 and floating is None:
            return _decomposition(f"{base}.vec")(input, output_size, align_corners, scale_factors)
        osize = _output_size(tuple(input.shape), output_size, scale_factors)
        sh, sw = scale_factors if scale_factors is not None else (None, None)
        return call(base, input, osize, align_corners, sh, sw)

    direct.__name__, vec.__name__ = base, f"{base}_vec"


_register("upsample_bilinear2d", 2, bilinear2d)
_register("upsample_bicubic2d", 4, bicubic2d)
