"""grid_sampler_2d and grid_sampler_2d_backward as GridSamplerKernel.cpp's vectorized CPU kernel
(ApplyGridSample) computes them for float32/float64, bilinear and nearest.

Every step runs in the dtype, in upstream's order: ``(g + 1) * scale`` (minus 0.5 without
align_corners, one fused multiply-add where the build contracts, i.e. not under DEFAULT); the
forward's clip sends NaN to 0 (``clamp_min(Vec(0), x)``) while the backward's keeps it; the
coordinates convert to int32 (float32) or int64 (float64), NaN and overflow giving INT_MIN,
which is out of bounds; the bilinear sum ``nw*v + ne*v + sw*v + se*v`` contracts as
``fma(se, fma(sw, fma(ne, nw * v)))`` (measured under AVX2/AVX512, plain under DEFAULT).
The backward scatter-adds into grad_input lane by lane in upstream's order: per vector of
grid points (8 float32 / 4 float64 under every capability: AVX512's results are AVX2's;
vectors do not cross rows unless the grid slice is contiguous), per channel, per corner, per lane.

Bicubic and float16/bfloat16 (and the gather-offset overflow, where upstream takes its scalar
fallback) stay on upstream's Python decomposition: the forward runs it, the backward takes the
gradient of that same decomposition, so their numbers are what they were before this kernel.
The backward of border/reflection padding on a grid holding NaN (or inf, with reflection) is
undefined upstream (the unclamped NaN index is gathered); the decomposition serves it.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..platform import cpu_capability
from ..random.fpmath import contracted32, contracted64
from ..ops.kernel_registry import kernel
from .grid_sampler3d import check_common
from .support.common import arr, int_list, wrap
from .support.nn_util import not_implemented

_SERVED = (D.BY_NAME["float32"], D.BY_NAME["float64"])
_HALVES = (D.BY_NAME["float16"], D.BY_NAME["bfloat16"])
_BILINEAR, _NEAREST = 0, 1
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2
_INT32_MAX = 2 ** 31 - 1
_DECOMPOSED: dict = {}


def _decomposition():
    if not _DECOMPOSED:
        from ..dispatch.door import _decomposition as find, _guarded_decomposition
        from ..ops.dispatcher import REGISTRY

        op = REGISTRY.find("aten::grid_sampler_2d", "")
        _DECOMPOSED["fn"] = _guarded_decomposition(op, find(op))
    return _DECOMPOSED["fn"]


def _mul_add(a, b, c):
    """Upstream's compiled ``a * b + c`` (fused where its build contracts); lanes whose plain
    result is not finite keep it (the emulation assumes finite operands; a fused result differs
    from the plain one there only past overflow)."""
    a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
    plain = a * b + c
    if not cpu_capability.CONTRACTS_FMA:
        return plain
    fn = contracted32 if a.dtype == np.float32 else contracted64
    fused = np.asarray(fn(a, b, c)).reshape(plain.shape).astype(a.dtype, copy=False)
    return np.where(np.isfinite(plain), fused, plain)


def _check_2d(input, grid):
    check_common(input, grid)
    if input.dim() != 4 or grid.dim() != 4:
        raise RuntimeError("grid_sampler(): expected 4D input and grid with same number of "
                           f"dimensions, but got input with sizes {int_list(input._size)} and grid "
                           f"with sizes {int_list(grid._size)}")


def _same_dtype(t, input):
    if t._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {input._dtype._cpp_name} but found "
                           f"{t._dtype._cpp_name}")


def _gather_overflows(*tensors, grid) -> bool:
    """Whether upstream's float32 gather offsets pass int32 (it then runs its scalar loop)."""
    step = 8  # Vectorized<float>::size() outside the per-capability builds
    spans = [(t._size[2] - 1) * t._stride[2] + (t._size[3] - 1) * t._stride[3] for t in tensors]
    return max(spans + [grid._stride[2] * (step - 1)]) > _INT32_MAX


def _serves(input, grid, interpolation_mode, *others) -> bool:
    if input._dtype not in _SERVED or interpolation_mode not in (_BILINEAR, _NEAREST):
        return False
    return input._dtype is not _SERVED[0] or not _gather_overflows(input, *others, grid=grid)


# ---- coordinates (ComputeLocation) -------------------------------------------------------------

def _unnormalize(g, size, align_corners, st):
    if align_corners:
        return (g + st(1)) * (st(size - 1) / st(2))
    return _mul_add(g + st(1), st(size) / st(2), st(-0.5))


def _reflect_parts(x, size, align_corners, st):
    """(reflected coordinate, its derivative's sign), or None for an empty span."""
    if align_corners:
        if size <= 1:
            return None
        span2, low = st(size - 1) * st(2), st(0)
    else:
        span2, low = st(size) * st(2), st(-0.5)
    shifted = x - low
    mag = np.abs(shifted)
    extra = mag - np.trunc(mag / span2) * span2  # an integer times an integer: exact, no fma
    flipped = span2 - extra
    more = extra > flipped
    sign = np.where(more ^ (shifted < st(0)), st(-1), st(1))
    return np.where(more, flipped, extra) + low, sign


def _location(g, size, padding, align_corners, st):
    """ComputeLocation::apply: NaN clips to 0; reflection is min(extra, span - extra)."""
    x = _unnormalize(g, size, align_corners, st)
    if padding == _REFLECTION:
        parts = _reflect_parts(x, size, align_corners, st)
        # minimum() propagates NaN as blendv's pick of ``extra`` does
        x = np.zeros_like(x) if parts is None else parts[0]
    if padding != _ZEROS:
        x = np.where(x > st(0), x, st(0))
        x = np.where(x < st(size - 1), x, st(size - 1))
    return x


def _location_grad(g, size, padding, align_corners, st):
    """ComputeLocation::apply_get_grad: the coordinate and d coordinate / d grid."""
    x = _unnormalize(g, size, align_corners, st)
    scale = st(size - 1) / st(2) if align_corners else st(size) / st(2)
    mult = np.full(x.shape, scale, x.dtype)
    if padding == _REFLECTION:
        parts = _reflect_parts(x, size, align_corners, st)
        x, mult = (np.zeros_like(x), np.zeros_like(x)) if parts is None else \
            (parts[0], parts[1] * scale)
    if padding != _ZEROS:
        lo = np.where(np.isnan(x) | (x > st(0)), x, st(0))  # maximum() keeps NaN
        x = np.where(np.isnan(lo) | (lo < st(size - 1)), lo, st(size - 1))
        # the borders themselves count as outside (their bits equal 0 or the maximum)
        mult = np.where((lo != st(0)) & (x != st(size - 1)), mult, st(0))
    return x, mult


def _to_int(v, it):
    """convert_to_int_of_same_size: truncation; NaN and overflow give INT_MIN."""
    ok = np.abs(v) < 2.0 ** (8 * np.dtype(it).itemsize - 1)
    return np.where(ok, np.where(ok, v, 0).astype(it), np.iinfo(it).min)


# ---- the kernels -------------------------------------------------------------------------------

class _Corners:
    """compute_interp_params: weights, masks and clipped indices of the four corners (nw, ne,
    sw, se) of every grid point."""

    def __init__(self, x, y, H, W, st):
        it = np.int32 if st is np.float32 else np.int64
        xw, yn = np.floor(x), np.floor(y)
        self.w = x - xw
        self.e = st(1) - self.w
        self.n = y - yn
        self.s = st(1) - self.n
        self.weights = (self.s * self.e, self.s * self.w, self.n * self.e, self.n * self.w)
        ix, iy = _to_int(xw, it), _to_int(yn, it)
        self.masks, self.index = [], []
        for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
            cx, cy = ix + it(dx), iy + it(dy)
            self.masks.append((cx > -1) & (cx < W) & (cy > -1) & (cy < H))
            self.index.append(np.clip(cy, 0, H - 1) * W + np.clip(cx, 0, W - 1))


def _planes(x):
    """(N, H*W, C): each point's channels together, for gathering."""
    n, c = x.shape[:2]
    return np.moveaxis(x.reshape(n, c, -1), 1, -1)


def _gather(planes, index, mask, st):
    vals = np.take_along_axis(planes, index.reshape(index.shape[0], -1, 1), axis=1)
    return np.where(mask.reshape(mask.shape[0], -1, 1), vals, st(0))


def _nearest_index(g, size, padding, align_corners, it):
    return _to_int(np.rint(_location(g, size, padding, align_corners, g.dtype.type)), it)


@kernel("grid_sampler_2d")
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    _check_2d(input, grid)
    if input._dtype not in _SERVED + _HALVES:
        raise not_implemented("grid_sampler_2d_cpu_kernel_impl", input._dtype)
    if not _serves(input, grid, interpolation_mode):
        return _decomposition()(input, grid, interpolation_mode, padding_mode, align_corners)
    _same_dtype(grid, input)
    with np.errstate(all="ignore"):  # NaN and inf coordinates compute as the C++ does, silently
        out = _forward(arr(input), arr(grid), interpolation_mode, padding_mode, align_corners)
    return wrap(out, input._dtype)


def _forward(x, g, mode, padding, align_corners):
    st = x.dtype.type
    n, c, H, W = x.shape
    oh, ow = g.shape[1:3]
    planes = _planes(x)
    if mode == _NEAREST:
        it = np.int32 if st is np.float32 else np.int64
        ix = _nearest_index(g[..., 0], W, padding, align_corners, it)
        iy = _nearest_index(g[..., 1], H, padding, align_corners, it)
        inside = (ix > -1) & (ix < W) & (iy > -1) & (iy < H)
        out = _gather(planes, np.clip(iy, 0, H - 1) * W + np.clip(ix, 0, W - 1), inside, st)
    else:
        k = _Corners(_location(g[..., 0], W, padding, align_corners, st),
                     _location(g[..., 1], H, padding, align_corners, st), H, W, st)
        vals = [_gather(planes, i, m, st) for i, m in zip(k.index, k.masks)]
        w = [t.reshape(n, -1, 1) for t in k.weights]
        out = _mul_add(vals[1], w[1], vals[0] * w[0])
        out = _mul_add(vals[3], w[3], _mul_add(vals[2], w[2], out))
    return np.ascontiguousarray(np.moveaxis(out, -1, 1)).reshape(n, c, oh, ow)


def _visit_order(grid, step):
    """Each grid point's (vector number, lane) in upstream's slice iterator: vectors run over
    the flattened slice when its H x W is contiguous, else row by row."""
    _, oh, ow, _ = grid._size
    _, sh, sw, sc = grid._stride
    flat = _contiguous((oh, ow, 2), (sh, sw, sc)) or \
        ((sw == 1 or ow == 1) and _contiguous((oh, ow), (sh, sw)))
    pos = np.arange(oh * ow)
    if flat:
        return pos // step, pos % step
    per_row = -(-ow // step)
    col = pos % ow
    return (pos // ow) * per_row + col // step, col % step


def _contiguous(sizes, strides) -> bool:
    expected = 1
    for size, stride in reversed(list(zip(sizes, strides))):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


@kernel("grid_sampler_2d_backward")
def grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
                             align_corners, output_mask):
    _check_2d(input, grid)
    if input._dtype not in _SERVED + _HALVES:
        raise not_implemented("grid_sampler_2d_backward_cpu_kernel_impl", input._dtype)
    g = arr(grid)
    undefined = padding_mode == _BORDER and np.isnan(g).any() or \
        padding_mode == _REFLECTION and not np.isfinite(g).all()
    if undefined or not _serves(input, grid, interpolation_mode, grad_output):
        return _decomposed_backward(grad_output, input, grid, interpolation_mode, padding_mode,
                                    align_corners, output_mask)
    _same_dtype(grid, input)
    _same_dtype(grad_output, input)
    with np.errstate(all="ignore"):
        gi, gg = _backward(arr(grad_output), arr(input), g, grid, interpolation_mode,
                           padding_mode, align_corners, output_mask[0])
    return (wrap(gi, input._dtype) if gi is not None else None), wrap(gg, grid._dtype)


def _backward(go, x, g, grid, mode, padding, align_corners, want_input):
    st = x.dtype.type
    n, c, H, W = x.shape
    oh, ow = g.shape[1:3]
    step = 32 // x.dtype.itemsize  # 256-bit vectors under AVX512 too (measured)
    vec, lane = _visit_order(grid, step)
    gout = _planes(go)  # (n, points, c)
    gin = np.zeros((n, c, H * W), x.dtype) if want_input else None

    def scatter(corners):
        """Adds corners' (index, mask, values (n, points, c)) in upstream's order: vector,
        channel, corner, lane (np.add.at adds one after another in the given order)."""
        nb, ch, k, pt = np.meshgrid(np.arange(n), np.arange(c), np.arange(len(corners)),
                                    np.arange(oh * ow), indexing="ij")
        key = np.lexsort([t.ravel() for t in (lane[pt], k, ch, vec[pt], nb)])
        idx = np.stack([np.broadcast_to(i[:, None, :], (n, c, oh * ow)) for i, _, _ in corners],
                       2)
        ok = np.stack([np.broadcast_to(m[:, None, :], (n, c, oh * ow)) for _, m, _ in corners], 2)
        val = np.stack([np.moveaxis(v, -1, 1) for _, _, v in corners], 2)
        flat = ((nb * c + ch) * (H * W) + idx).ravel()[key]
        keep = ok.ravel()[key]
        np.add.at(gin.reshape(-1), flat[keep], val.ravel()[key][keep])

    if mode == _NEAREST:
        if want_input:
            it = np.int32 if st is np.float32 else np.int64
            ix = _nearest_index(g[..., 0], W, padding, align_corners, it).reshape(n, -1)
            iy = _nearest_index(g[..., 1], H, padding, align_corners, it).reshape(n, -1)
            inside = (ix > -1) & (ix < W) & (iy > -1) & (iy < H)
            scatter([(np.clip(iy, 0, H - 1) * W + np.clip(ix, 0, W - 1), inside, gout)])
        ggrid = np.zeros(g.shape, x.dtype)
    else:
        xs, xm = _location_grad(g[..., 0], W, padding, align_corners, st)
        ys, ym = _location_grad(g[..., 1], H, padding, align_corners, st)
        k = _Corners(xs, ys, H, W, st)
        col = [t.reshape(n, -1, 1) for t in (k.n, k.s, k.w, k.e)]
        idx = [i.reshape(n, -1) for i in k.index]
        masks = [m.reshape(n, -1) for m in k.masks]
        weights = [t.reshape(n, -1, 1) for t in k.weights]
        if want_input:
            scatter([(i, m, w * gout) for i, m, w in zip(idx, masks, weights)])
        planes = _planes(x)
        nw, ne, sw, se = (_gather(planes, i, m, st) for i, m in zip(idx, masks))
        cn, cs, cw, ce = col
        dx = _mul_add(se - sw, cn, (ne - nw) * cs)
        dy = _mul_add(se - ne, cw, (sw - nw) * ce)
        gx = np.zeros((n, oh * ow), x.dtype)
        gy = np.zeros((n, oh * ow), x.dtype)
        for ch in range(c):  # channel after channel, as the vector loop accumulates
            gx = _mul_add(dx[..., ch], gout[..., ch], gx)
            gy = _mul_add(dy[..., ch], gout[..., ch], gy)
        ggrid = np.stack([gx * xm.reshape(n, -1), gy * ym.reshape(n, -1)], -1)
        ggrid = ggrid.reshape(g.shape)
    gi = gin.reshape(n, c, H, W) if want_input else None
    return gi, np.ascontiguousarray(ggrid)


def _decomposed_backward(grad_output, input, grid, interpolation_mode, padding_mode,
                         align_corners, output_mask):
    """The gradient of the decomposition the forward ran (what autograd computed before)."""
    import torch

    with torch.enable_grad():
        inp = input.detach().requires_grad_(bool(output_mask[0]))
        g = grid.detach().requires_grad_(True)
        out = _decomposition()(inp, g, interpolation_mode, padding_mode, align_corners)
        wrt = (inp, g) if output_mask[0] else (g,)
        grads = torch.autograd.grad(out, wrt, grad_output, allow_unused=True)
    grads = [torch.zeros_like(t) if r is None else r for r, t in zip(grads, wrt)]
    return (grads[0], grads[1]) if output_mask[0] else (None, grads[0])
