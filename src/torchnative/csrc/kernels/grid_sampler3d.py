"""grid_sampler_3d's CPU kernel as GridSampler.cpp's scalar loop computes it.

Every step runs in the tensor's dtype as the C++ does (c10::Half and BFloat16 round after each
operation, as numpy's float16 and ml_dtypes' bfloat16 do), vectorised over output points: the
coordinate unnormalised and padded (GridSampler.h), the eight corner weights as products of
three differences taken left to right, and each output the sum of the in-bounds corners in the
order tnw, tne, tsw, tse, bnw, bne, bsw, bse starting from zero (an out-of-bounds corner adds
+0, which leaves the sum as the skipped term would). Nearest rounds half to even (nearbyint).
A NaN coordinate floors to INT64_MIN on x86, out of bounds everywhere, so it reads nothing;
a bfloat16 NaN converts to index 0 instead (measured on upstream: nearest reads the first
element, bilinear's NaN weights make the output NaN).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..ops.kernel_registry import kernel
from .support.common import arr, int_list, wrap
from .support.nn_util import not_implemented

_FLOATS = tuple(D.BY_NAME[n] for n in ("float32", "float64", "float16", "bfloat16"))
_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2


def check_common(input, grid):
    if input.device != grid.device:
        raise RuntimeError("grid_sampler(): expected input and grid to be on same device, but "
                           f"input is on {input.device} and grid is on {grid.device}")
    if input._size[0] != grid._size[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {int_list(input._size)} and grid with sizes "
                           f"{int_list(grid._size)}")
    if grid._size[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in "
                           f"last dimension, but got grid with sizes {int_list(grid._size)}")
    for i in range(2, input.dim()):
        if input._size[i] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {int_list(input._size)} with "
                               f"dimension {i} being empty")


def _clip(x, limit, st):
    # std::min(limit - 1, std::max(x, 0)): NaN survives max and loses to min, so it clips high
    x = np.where(x < st(0), st(0), x)
    top = st(limit - 1)
    return np.where(top < x, top, np.where(np.isnan(x), top, x))


def _reflect(x, twice_low, twice_high, st):
    if twice_low == twice_high:
        return np.zeros_like(x)
    lo = st(twice_low) / st(2)
    span = st(twice_high - twice_low) / st(2)
    x = np.abs(x - lo)
    extra = np.fmod(x, span)
    flips = np.floor(x / span)
    # static_cast<int>: past int's range x86 gives INT_MIN, an even count
    odd = np.where(np.abs(flips) < 2.0 ** 31, np.fmod(flips, 2) != 0, False)
    return np.where(odd, span - extra + lo, extra + lo)


def source_index(coord, size, padding, align_corners, st):
    """grid_sampler_compute_source_index in the dtype ``st``."""
    if align_corners:
        coord = ((coord + st(1)) / st(2)) * st(size - 1)
    else:
        coord = ((coord + st(1)) * st(size) - st(1)) / st(2)
    if padding == _BORDER:
        coord = _clip(coord, size, st)
    elif padding == _REFLECTION:
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1), st)
        else:
            coord = _reflect(coord, -1, 2 * size - 1, st)
        coord = _clip(coord, size, st)
    return coord


def _to_index(x, bf16):
    """static_cast<int64_t> of a floored or rounded coordinate; NaN and overflow (x86's
    INT64_MIN) land far outside any tensor, a bfloat16 NaN at 0."""
    big = np.abs(x) < 2.0 ** 62
    idx = np.where(big, np.where(big, x, 0).astype(np.int64), np.iinfo(np.int64).min // 2)
    return np.where(np.isnan(x), 0, idx) if bf16 else idx


@kernel("grid_sampler_3d")
def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    with np.errstate(all="ignore"):  # NaN and inf coordinates compute as the C++ does, silently
        return _grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners)


def _grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    check_common(input, grid)
    if input.dim() != 5 or grid.dim() != 5:
        raise RuntimeError("grid_sampler(): expected 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {int_list(input._size)} and grid "
                           f"with sizes {int_list(grid._size)}")
    if interpolation_mode == _BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input._dtype not in _FLOATS:
        raise not_implemented("grid_sampler3d_cpu", input._dtype)
    x = arr(input)
    g = arr(grid)
    if g.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {input._dtype._cpp_name} but found "
                           f"{grid._dtype._cpp_name}")
    st = x.dtype.type
    n, c, idd, ih, iw = x.shape
    od, oh, ow = g.shape[1:4]
    ix = source_index(g[..., 0], iw, padding_mode, align_corners, st)
    iy = source_index(g[..., 1], ih, padding_mode, align_corners, st)
    iz = source_index(g[..., 2], idd, padding_mode, align_corners, st)
    batch = np.arange(n).reshape(n, 1, 1, 1)
    out = np.zeros((n, od, oh, ow, c), x.dtype)  # channels last while summing
    xl = np.moveaxis(x, 1, -1)  # (n, D, H, W, c)

    def gather(zi, yi, xi):
        inside = (zi >= 0) & (zi < idd) & (yi >= 0) & (yi < ih) & (xi >= 0) & (xi < iw)
        vals = xl[batch, np.clip(zi, 0, idd - 1), np.clip(yi, 0, ih - 1), np.clip(xi, 0, iw - 1)]
        return inside, vals

    bf16 = input._dtype is D.BY_NAME["bfloat16"]
    if interpolation_mode == _NEAREST:
        inside, vals = gather(_to_index(np.rint(iz), bf16), _to_index(np.rint(iy), bf16),
                              _to_index(np.rint(ix), bf16))
        out = np.where(inside[..., None], vals, st(0)).astype(x.dtype)
    elif interpolation_mode == _BILINEAR:
        x0, y0, z0 = (_to_index(np.floor(c), bf16) for c in (ix, iy, iz))
        fx0, fy0, fz0 = x0.astype(x.dtype), y0.astype(x.dtype), z0.astype(x.dtype)
        fx1, fy1, fz1 = fx0 + st(1), fy0 + st(1), fz0 + st(1)
        # (dz, dy, dx, weight) in upstream's order; each weight's three factors left to right
        corners = (
            (0, 0, 0, (fx1 - ix) * (fy1 - iy) * (fz1 - iz)),
            (0, 0, 1, (ix - fx0) * (fy1 - iy) * (fz1 - iz)),
            (0, 1, 0, (fx1 - ix) * (iy - fy0) * (fz1 - iz)),
            (0, 1, 1, (ix - fx0) * (iy - fy0) * (fz1 - iz)),
            (1, 0, 0, (fx1 - ix) * (fy1 - iy) * (iz - fz0)),
            (1, 0, 1, (ix - fx0) * (fy1 - iy) * (iz - fz0)),
            (1, 1, 0, (fx1 - ix) * (iy - fy0) * (iz - fz0)),
            (1, 1, 1, (ix - fx0) * (iy - fy0) * (iz - fz0)),
        )
        for dz, dy, dx, w in corners:
            inside, vals = gather(z0 + dz, y0 + dy, x0 + dx)
            out = out + np.where(inside[..., None], vals * w[..., None], st(0))
    else:
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {interpolation_mode}")
    return wrap(np.ascontiguousarray(np.moveaxis(out, -1, 1)), input._dtype)
