"""Pooling (DilatedMaxPool2d.cpp, AveragePool2d.cpp, AveragePool3d.cpp, AdaptiveAveragePooling.cpp,
AdaptiveAveragePooling3d.cpp): max_pool2d_with_indices, avg_pool2d/3d, _adaptive_avg_pool2d/3d,
adaptive_max_pool2d, the backward kernels avg_pool2d/3d_backward and
_adaptive_avg_pool2d/3d_backward, the CompositeImplicitAutograd max_pool2d,
max_pool1d(_with_indices), avg_pool1d, adaptive_avg_pool1d/2d/3d, adaptive_max_pool1d that reach
them, and the out= kernels that follow upstream's autogen and structured rules.

Windows are strided numpy views (no copy of the input). max pooling ignores padding (only real
positions compete), keeps the first maximum, and lets NaN win (the last NaN's index, as
upstream's ``val > max || isnan(val)`` scan gives). Averages accumulate in opmath and divide by
the window size upstream computes (count_include_pad, divisor_override, ceil_mode windows cut at
the padded border).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..core.tensor import numel_of
from ..core import dtypes as D
from ..core.construct import empty
from ..core.device import CPU
from .support.common import arr, as_compute, int_list
from ..dispatch.call import call
from .support.out import register_autogen_out, register_structured_out
from .support.nn_util import is_channels_last, not_implemented, typemeta
from ..ops.kernel_registry import kernel

_B = D.BY_NAME
_INT64 = _B["int64"]


def _pair(v, name, what, allow_empty=False):
    v = [int(x) for x in (v or ())]  # None: the argument was omitted
    if allow_empty and not v:
        return None
    if len(v) not in (1, 2):
        raise RuntimeError(f"{name}: {what}")
    return (v[0], v[0]) if len(v) == 1 else (v[0], v[1])


def _suggest_cl(t) -> bool:
    return len(t._size) == 4 and is_channels_last(t)


def _output_shape(size, k, pad, stride, dilation, ceil_mode):
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    eff = (k - 1) * dilation + 1
    if pad > (eff // 2 if eff >= 0 else -(-eff // 2)):  # C's division, toward zero
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={k} and dilation={dilation}")
    num = size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = num // stride + 1  # div_rtn: rounds toward negative infinity
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _shape_check(input, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow, cl):
    if kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if dw <= 0 or dh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {dh} dW: {dw}")
    if dilh <= 0 or dilw <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilationH: "
                           f"{dilh} dilationW: {dilw}")
    s, nd = input._size, len(input._size)
    valid = s[1] != 0 and s[2] != 0
    if cl:
        if not (nd == 4 and valid and s[3] != 0):
            raise RuntimeError("Expected 4D (batch mode) tensor expected for input with "
                               "channels_last layout with optional 0 dim batch size for input, "
                               f"but got: {int_list(s)}")
    elif not ((nd == 3 and s[0] != 0 and valid) or (nd == 4 and valid and s[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{int_list(s)}")
    if not (kw // 2 >= pw and kh // 2 >= ph):
        raise RuntimeError("pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}")
    if ow < 1 or oh < 1:
        raise RuntimeError(f"Given input size: ({s[-3]}x{s[-2]}x{s[-1]}). Calculated output size: "
                           f"({s[-3]}x{oh}x{ow}). Output size is too small")


def _params(name, kernel_size, stride, padding):
    kh, kw = _pair(kernel_size, name, "kernel_size must either be a single int, or a tuple of "
                                      "two ints")
    st = _pair(stride, name, "stride must either be omitted, a single int, or a tuple of two ints",
               allow_empty=True)
    dh, dw = st if st is not None else (kh, kw)
    ph, pw = _pair(padding, name, "padding must either be a single int, or a tuple of two ints")
    return kh, kw, dh, dw, ph, pw


def _windows(x, kh, kw, dh, dw, dilh, dilw, oh, ow):
    """(..., H, W) -> (..., oh, ow, kh, kw) strided view over an already padded array."""
    st = x.strides
    return np.lib.stride_tricks.as_strided(
        x, x.shape[:-2] + (oh, ow, kh, kw),
        st[:-2] + (st[-2] * dh, st[-1] * dw, st[-2] * dilh, st[-1] * dilw), writeable=False)


def _output(input, values: np.ndarray, dt, cl: bool):
    """A tensor of dtype dt in the input's layout (channels-last or contiguous) holding values."""
    shape = values.shape
    if cl:
        n, c, h, w = shape
        out = empty(shape, dt, CPU, stride=(h * w * c, 1, w * c, c))
    else:
        out = empty(shape, dt, CPU)
    src = D.dtype_from_numpy(values.dtype)
    if src is not dt:
        from ..core.cast import cast_array

        values = cast_array(values, src, dt)
    np.copyto(arr(out), values)
    return out


_MAXPOOL_TYPES = frozenset(_B[n] for n in ("uint8", "int8", "int16", "int32", "int64", "float32",
                                           "float64", "float16", "bfloat16"))


@kernel("max_pool2d_with_indices")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,),
                            ceil_mode=False):
    kh, kw, dh, dw, ph, pw = _params("max_pool2d", kernel_size, stride, padding)
    dilh, dilw = _pair(dilation or (1,), "max_pool2d",
                       "dilation must be either a single int, or a tuple of two ints")
    cl = _suggest_cl(self)
    if cl:
        if len(self._size) != 4:
            raise RuntimeError("non-empty 4D (batch mode) tensor expected for input with "
                               "channels_last layout")
    elif len(self._size) not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    h, w = self._size[-2], self._size[-1]
    oh = _output_shape(h, kh, ph, dh, dilh, ceil_mode)
    ow = _output_shape(w, kw, pw, dw, dilw, ceil_mode)
    _shape_check(self, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow, cl)
    dt = self._dtype
    out_shape = tuple(self._size[:-2]) + (oh, ow)
    if numel_of(self) == 0:
        return _output(self, np.empty(out_shape, D.numpy_dtype(dt)), dt, cl), \
            _output(self, np.empty(out_shape, np.int64), _INT64, cl)
    if dt not in _MAXPOOL_TYPES:
        raise not_implemented("max_pool2d", dt)
    x = _values(self)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    valid, reach, corner, empty = _windows_of(h, w, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow)
    if (kh, kw) == (dh, dw) and not (ph or pw) and dilh == dilw == 1 and \
            oh * kh == h and ow * kw == w:
        vals, pick = _scan_tiles(x, kh, kw, oh, ow)
    else:
        xp = _padded(x, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow, low)
        vals, pick = _scan_max(xp, kh, kw, dh, dw, dilh, dilw, oh, ow, valid, low)
    index = reach[pick]
    index += corner
    if empty is not None:   # windows over padding alone: upstream's start, stepped past it
        index[..., empty[0]] = empty[1]
    return _output(self, vals, dt, cl), _output(self, index, _INT64, cl)


def _scan_max(xp, kh, kw, dh, dw, dilh, dilw, oh, ow, valid, low):
    """Upstream's scan over each window in row-major order, one strided view per offset: a
    value is taken when greater than the running maximum or NaN (the first maximum and the last
    NaN win); padding holds ``low`` and is never taken; a window never taken keeps its first real
    position. Returns the values and each window's offset (kr * kw + kc), shaped (..., oh, ow).

    When the leading (batch, channel) positions outnumber an output row, the scan runs on a copy
    with them innermost, so each elementwise call walks one long contiguous run instead of rows
    of ``ow`` (the values compared and taken are the same)."""
    lead = xp.shape[:-2]
    inner = math.prod(lead) >= ow
    if inner:
        xp = np.ascontiguousarray(np.moveaxis(xp, (-2, -1), (0, 1)))  # (H, W, *lead)
        shape = (oh, ow) + lead
        first = np.argmax(valid, axis=-1).reshape((oh, ow) + (1,) * len(lead))
    else:
        shape = lead + (oh, ow)
        first = np.argmax(valid, axis=-1)
    best = np.full(shape, low, xp.dtype)
    pick = np.empty(shape, np.intp)
    pick[...] = first  # each window's first real position
    nan = xp.dtype.kind == "f" and bool(np.isnan(xp).any())
    take = np.empty(shape, bool)
    for r in range(kh):
        for c in range(kw):
            rows = slice(r * dilh, r * dilh + (oh - 1) * dh + 1, dh)
            cols = slice(c * dilw, c * dilw + (ow - 1) * dw + 1, dw)
            v = xp[rows, cols] if inner else xp[..., rows, cols]
            np.greater(v, best, out=take)
            if nan:
                take |= np.isnan(v)
            best = np.where(take, v, best)  # a select: twice copyto(where=)'s speed on
            pick = np.where(take, r * kw + c, pick)  # unpredictable masks
    if inner:
        return np.moveaxis(best, (0, 1), (-2, -1)), np.moveaxis(pick, (0, 1), (-2, -1))
    return best, pick


def _scan_tiles(x, kh, kw, oh, ow):
    """``_scan_max`` where the windows tile the plane exactly (kernel == stride, no padding or
    dilation, no remainder): every window is whole, so its first offset is taken outright (a
    value above the initial ``low``, or ``low`` itself, or NaN: the same value and offset 0), and
    the other offsets are scanned in row-major order over a strided view of ``x`` itself."""
    V = x.reshape(x.shape[:-2] + (oh, kh, ow, kw))
    best = V[..., 0, :, 0]
    pick = np.zeros(best.shape, np.intp)
    nan = x.dtype.kind == "f" and bool(np.isnan(x).any())
    take = np.empty(best.shape, bool)
    for r in range(kh):
        for c in range(kw):
            if r or c:
                v = V[..., r, :, c]
                np.greater(v, best, out=take)
                if nan:
                    take |= np.isnan(v)
                best = np.where(take, v, best)
                pick = np.where(take, r * kw + c, pick)
    return best, pick


def _values(t) -> np.ndarray:
    """Values to pool: float16/bfloat16 widened to float32 (exact), others as stored."""
    a = arr(t)
    return as_compute(t, t._dtype) if a.dtype.kind == "V" or a.dtype == np.float16 else a


def _padded(x, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow, fill):
    """x padded with ``fill`` (also past the end, where ceil_mode windows reach)."""
    h, w = x.shape[-2:]
    need_h = (oh - 1) * dh + dilh * (kh - 1) + 1
    need_w = (ow - 1) * dw + dilw * (kw - 1) + 1
    pad = [(0, 0)] * (x.ndim - 2) + [(ph, max(need_h - h - ph, 0)), (pw, max(need_w - w - pw, 0))]
    return np.pad(x, pad, constant_values=fill) if any(p for pair in pad for p in pair) else x


def _padded_windows(x, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow, fill):
    return _windows(_padded(x, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow, fill),
                    kh, kw, dh, dw, dilh, dilw, oh, ow)


_WINDOWS: dict = {}


def _windows_of(*geometry):
    """``_valid``'s mask, each window offset's (k = kr * kw + kc) reach from the window's corner,
    each window's corner in the flat input plane, and the windows with no real position (None,
    or their mask over (oh, ow) and the index upstream's loop leaves them: its start row and
    column each stepped by the dilation past the padding, ``ih0 * W + iw0``), made once per
    pooling geometry (the training step pools the same shapes every step) and kept read-only."""
    plan = _WINDOWS.get(geometry)
    if plan is None:
        h, w, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow = geometry
        reach = (np.arange(kh)[:, None] * (dilh * w) + np.arange(kw)[None, :] * dilw).reshape(-1)
        r0, c0 = np.arange(oh) * dh - ph, np.arange(ow) * dw - pw
        corner = r0[:, None] * w + c0[None, :]
        valid = _valid(*geometry)
        none = ~valid.any(-1)
        empty = None
        if none.any():
            r0 = np.where(r0 < 0, r0 + -(r0 // dilh) * dilh, r0)   # while (ih0 < 0) ih0 += dil
            c0 = np.where(c0 < 0, c0 + -(c0 // dilw) * dilw, c0)
            empty = (none, (r0[:, None] * w + c0[None, :])[none])
        plan = (valid, reach, corner, empty)
        for a in (valid, reach, corner) + (empty or ()):
            a.flags.writeable = False
        if len(_WINDOWS) >= 64:
            _WINDOWS.clear()
        _WINDOWS[geometry] = plan
    return plan


def _valid(h, w, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow) -> np.ndarray:
    """(oh, ow, kh*kw): which window positions fall inside the unpadded input."""
    rows = np.arange(oh)[:, None] * dh - ph + np.arange(kh)[None, :] * dilh
    cols = np.arange(ow)[:, None] * dw - pw + np.arange(kw)[None, :] * dilw
    ok_r = (rows >= 0) & (rows < h)
    ok_c = (cols >= 0) & (cols < w)
    return (ok_r[:, None, :, None] & ok_c[None, :, None, :]).reshape(oh, ow, kh * kw)


# ---- average pooling --------------------------------------------------------------------------

_AVG_TYPES = _MAXPOOL_TYPES


def _reaching(k: int, pad: int, stride: int, out: int, size: int) -> tuple[int, int]:
    """(first, count): the kernel offsets that fall inside an input of ``size`` for at least
    one of ``out`` windows (window o covers o * stride - pad + offset)."""
    first = max(0, pad - (out - 1) * stride)
    last = min(k, size + pad)
    return first, max(last - first, 0)


def _trunc_div(s: np.ndarray, f) -> np.ndarray:
    """C++ integer division (toward zero; the divisor may be negative)."""
    q = np.abs(s) // np.abs(f)
    return np.where((s < 0) != (f < 0), -q, q).astype(s.dtype)


@kernel("avg_pool2d")
def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    kh, kw, dh, dw, ph, pw = _params("avg_pool2d", kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    cl = _suggest_cl(self)
    if cl:
        if len(self._size) != 4:
            raise RuntimeError("non-empty 4D (batch mode) tensor expected for input with "
                               "channels_last layout")
    elif len(self._size) not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    h, w = self._size[-2], self._size[-1]
    oh = _output_shape(h, kh, ph, dh, 1, ceil_mode)
    ow = _output_shape(w, kw, pw, dw, 1, ceil_mode)
    _shape_check(self, kh, kw, dh, dw, ph, pw, 1, 1, oh, ow, cl)
    dt = self._dtype
    out_shape = tuple(self._size[:-2]) + (oh, ow)
    if numel_of(self) == 0:
        return _output(self, np.empty(out_shape, D.numpy_dtype(dt)), dt, cl)
    if dt not in _AVG_TYPES:
        raise not_implemented("avg_pool2d", dt)
    x = _values(self)
    # only kernel offsets that reach the input in some window are summed (the others add only
    # zeros): a kernel far larger than its input would otherwise pad it to the kernel's size
    (i0, kh_in), (j0, kw_in) = _reaching(kh, ph, dh, oh, h), _reaching(kw, pw, dw, ow, w)
    win = _padded_windows(x, kh_in, kw_in, dh, dw, ph - i0, pw - j0, 1, 1, oh, ow, 0)
    # sum the window positions in upstream's order (rows, then columns), zeros outside
    acc = np.zeros(out_shape, x.dtype)
    for i in range(kh_in):
        for j in range(kw_in):
            acc += win[..., i, j]
    # window sizes: cut at the padded border (for the count), then at the input
    r0 = np.arange(oh) * dh - ph
    c0 = np.arange(ow) * dw - pw
    r1, c1 = np.minimum(r0 + kh, h + ph), np.minimum(c0 + kw, w + pw)
    pool = (r1 - r0)[:, None] * (c1 - c0)[None, :]
    real = (np.minimum(r1, h) - np.maximum(r0, 0))[:, None] * \
        (np.minimum(c1, w) - np.maximum(c0, 0))[None, :]
    if divisor_override is not None:
        factor = np.full((oh, ow), divisor_override, np.int64)
    else:
        factor = pool if count_include_pad else real
    empty_win = real <= 0
    if x.dtype.kind == "f":
        out = acc / factor.astype(x.dtype)
    else:
        out = _trunc_div(acc, factor)
    if empty_win.any():
        out = np.where(empty_win, 0, out).astype(out.dtype)
    return _output(self, out, dt, cl)


def _check_sizes(shape):
    """What allocating the output checks first (a negative requested size)."""
    for d in shape:
        if d < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: "
                               f"{int_list(shape)}")


def _start(a, b, c):
    return (a * c) // b


def _end(a, b, c):
    return ((a + 1) * c + b - 1) // b


_FLOATS = frozenset(_B[n] for n in ("float32", "float64", "float16", "bfloat16"))


@kernel("_adaptive_avg_pool2d")
def _adaptive_avg_pool2d(self, output_size):
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    nd = len(self._size)
    if nd not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{int_list(self._size)}")
    for i in range(1, nd):
        if self._size[i] == 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {int_list(self._size)} "
                               f"with dimension {i} being empty")
    oh, ow = (int(s) for s in output_size)
    dt = self._dtype
    cl = _suggest_cl(self)
    out_shape = tuple(self._size[:-2]) + (oh, ow)
    _check_sizes(out_shape)
    if dt not in _FLOATS:
        raise not_implemented("adaptive_avg_pool2d", dt)
    x = _values(self)
    h, w = x.shape[-2:]
    out = np.empty(out_shape, x.dtype)
    if numel_of(self) and oh and ow:
        if h % oh == 0 and w % ow == 0:  # equal windows: one strided view
            kh, kw = h // oh, w // ow
            win = _windows(x, kh, kw, kh, kw, 1, 1, oh, ow)
            acc = np.zeros(out_shape, x.dtype)
            for i in range(kh):
                for j in range(kw):
                    acc += win[..., i, j]
            out[...] = acc / x.dtype.type(kh) / x.dtype.type(kw)
        else:
            for a in range(oh):
                i0, i1 = _start(a, oh, h), _end(a, oh, h)
                for b in range(ow):
                    j0, j1 = _start(b, ow, w), _end(b, ow, w)
                    acc = np.zeros(out_shape[:-2], x.dtype)
                    for i in range(i0, i1):
                        for j in range(j0, j1):
                            acc += x[..., i, j]
                    out[..., a, b] = acc / x.dtype.type(i1 - i0) / x.dtype.type(j1 - j0)
    return _output(self, out, dt, cl)


# ---- CompositeImplicitAutograd entries ---------------------------------------------------------

@kernel("max_pool2d", composite=True)
def max_pool2d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return call("max_pool2d_with_indices", self, list(kernel_size), list(stride or ()),
                list(padding), list(dilation), ceil_mode)[0]


@kernel("adaptive_avg_pool2d", composite=True)
def adaptive_avg_pool2d(self, output_size):
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if output_size[0] < 0 or output_size[1] < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{output_size[0]}, {output_size[1]}}}")
    if output_size[0] == 1 and output_size[1] == 1:
        # the mean over the spatial dimensions is the same thing, computed faster
        out = call("mean.dim", self, [-1, -2], True)
        if _suggest_cl(self):
            n, c = self._size[0], self._size[1]
            call("as_strided_", out, [n, c, 1, 1], [c, 1, c, c])
        return out
    return call("_adaptive_avg_pool2d", self, list(output_size))


def _check_dim_range(name, t, lo, hi):
    if not lo <= len(t._size) < hi:
        raise RuntimeError(f"Expected {lo}D to {hi - 1}D tensor for argument #1 'self' (while "
                           f"checking arguments for {name}), but got {t.dim()}D tensor "
                           f"{int_list(t._size)}")


def _check_1d(name, arg, v):
    if len(v) != 1:
        raise RuntimeError(f"{name}() argument '{arg}' should contain one int (got {len(v)})")


@kernel("adaptive_avg_pool1d", composite=True)
def adaptive_avg_pool1d(self, output_size):
    _check_dim_range("adaptive_avg_pool1d", self, 2, 4)
    _check_1d("adaptive_avg_pool1d", "output_size", output_size)
    out = call("adaptive_avg_pool2d", call("unsqueeze", self, -2), [1, output_size[0]])
    return call("squeeze.dim", out, -2)


@kernel("avg_pool1d", composite=True)
def avg_pool1d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False,
               count_include_pad=True):
    stride = list(stride or ()) or kernel_size
    _check_dim_range("avg_pool1d", self, 2, 4)
    for arg, v in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding)):
        _check_1d("avg_pool1d", arg, v)
    out = call("avg_pool2d", call("unsqueeze", self, -2), [1, kernel_size[0]], [1, stride[0]],
               [0, padding[0]], ceil_mode, count_include_pad)
    return call("squeeze.dim", out, -2)


@kernel("max_pool1d_with_indices", composite=True)
def max_pool1d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,),
                            ceil_mode=False):
    stride = list(stride or ()) or kernel_size
    _check_dim_range("max_pool1d", self, 2, 4)
    for arg, v in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding),
                   ("dilation", dilation)):
        _check_1d("max_pool1d", arg, v)
    out, idx = call("max_pool2d_with_indices", call("unsqueeze", self, -2), [1, kernel_size[0]],
                    [1, stride[0]], [0, padding[0]], [1, dilation[0]], ceil_mode)
    return call("squeeze.dim", out, -2), call("squeeze.dim", idx, -2)


@kernel("max_pool1d", composite=True)
def max_pool1d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    nd, s = len(self._size), self._size
    if not ((nd == 2 and s[0] != 0 and s[1] != 0) or (nd == 3 and s[1] != 0 and s[2] != 0)):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{int_list(s)}")
    stride = list(stride or ())
    _check_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode)
    from ..core.grad_mode import is_grad_enabled
    from .support.nn_util import subclass_like

    if (self.requires_grad and is_grad_enabled()) or subclass_like(self) \
            or self.device.type != "cpu":
        return call("max_pool1d_with_indices", self, kernel_size, stride, padding, dilation,
                    ceil_mode)[0]
    # upstream computes this case in its own kernel, dispatching nothing
    x = _view(self, tuple(s[:-1]) + (1, s[-1]))
    stride = stride or kernel_size
    out = max_pool2d_with_indices(x, [1, kernel_size[0]], [1, stride[0]], [0, padding[0]],
                                  [1, dilation[0]], ceil_mode)[0]
    return _view(out, tuple(out._size[:-2]) + (out._size[-1],))


def _view(t, shape):
    from .views import view

    return view(t, list(shape))


def _check_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode):
    name = "max_pool1d()"
    if len(kernel_size) != 1:
        raise RuntimeError(f"{name} kernel_size must be an int, list of ints or tuple of ints of "
                           f"size 1 but got size {len(kernel_size)}")
    if len(stride) not in (0, 1):
        raise RuntimeError(f"{name} stride must be None, an int, list of ints, or tuple of ints of "
                           f"size 1 but got size {len(stride)}")
    if len(padding) != 1:
        raise RuntimeError(f"{name} padding must be an int, list of ints, or tuple of ints of size "
                           f"1 but got size {len(padding)}")
    if len(dilation) != 1:
        raise RuntimeError(f"{name} dilation must be an int, list of ints or tuple of ints of size "
                           f"1 but got size {len(dilation)}")
    stride = stride or kernel_size
    k, st, p, d = kernel_size[0], stride[0], padding[0], dilation[0]
    if k <= 0:
        raise RuntimeError(f"{name} kernel_size must be greater than zero, but got {k}")
    if st <= 0:
        raise RuntimeError(f"{name} stride must be greater than zero, but got {st}")
    if p < 0:
        raise RuntimeError(f"{name} padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"{name} padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"{name} dilation must be greater than zero, but got {d}")
    ow = _output_shape(self._size[-1], k, p, st, d, ceil_mode)
    if ow <= 0:
        raise RuntimeError(f"{name} Invalid computed output size: {ow}")


# ---- adaptive max pooling ---------------------------------------------------------------------

def adaptive_max_checks(name: str, self, output_size, spatial: int):
    """The adaptive max pools' input checks (``spatial`` pooled dimensions, optional batch)."""
    nd = len(self._size)
    if nd not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got: "
                           f"{int_list(self._size)}")
    for i in range(1, nd):
        if self._size[i] <= 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {int_list(self._size)} with "
                               f"dimension {i} being empty")
    if len(output_size) != spatial:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {spatial}")


def window_max(win: np.ndarray) -> np.ndarray:
    """Position of each window's maximum (last axis) as upstream's scan picks it: a value is
    taken when greater than the running maximum or NaN, so the first maximum and the last NaN
    win."""
    pick = np.argmax(win, axis=-1)
    nan = np.isnan(win)
    if nan.any():
        last = win.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        pick = np.where(nan.any(axis=-1), last, pick)
    return pick


def adaptive_window_max(x: np.ndarray, out_sizes: tuple):
    """Adaptive max pooling over x's last len(out_sizes) dims: each output's window is [start,
    end) per dim, scanned in row-major order (window_max's rule); the index is the position in
    the pooled plane."""
    k = len(out_sizes)
    ins, lead = x.shape[-k:], x.shape[:-k]
    vals = np.empty(lead + tuple(out_sizes), x.dtype)
    idx = np.empty(lead + tuple(out_sizes), np.int64)
    for pos in itertools.product(*(range(o) for o in out_sizes)):
        bounds = [(_start(p, o, n), _end(p, o, n)) for p, o, n in zip(pos, out_sizes, ins)]
        win = x[(Ellipsis,) + tuple(slice(a, b) for a, b in bounds)].reshape(lead + (-1,))
        pick = window_max(win)
        vals[(Ellipsis,) + pos] = np.take_along_axis(win, pick[..., None], -1)[..., 0]
        flat = 0
        for (a, b), n, off in zip(bounds, ins, np.unravel_index(pick, [b - a for a, b in bounds])):
            flat = flat * n + (a + off)
        idx[(Ellipsis,) + pos] = flat
    return vals, idx


@kernel("adaptive_max_pool2d")
def adaptive_max_pool2d(self, output_size):
    adaptive_max_checks("adaptive_max_pool2d", self, output_size, 2)
    nd = len(self._size)
    oh, ow = (int(s) for s in output_size)
    dt = self._dtype
    cl = nd == 4 and _suggest_cl(self)
    out_shape = tuple(self._size[:-2]) + (oh, ow)
    _check_sizes(out_shape)
    if dt not in _FLOATS:
        raise not_implemented("adaptive_max_pool2d", dt)
    vals, idx = adaptive_window_max(_values(self), (oh, ow))
    return _output(self, vals, dt, cl), _output(self, idx, _INT64, cl)


@kernel("adaptive_max_pool1d", composite=True)
def adaptive_max_pool1d(self, output_size):
    _check_dim_range("adaptive_max_pool1d", self, 2, 4)
    _check_1d("adaptive_max_pool1d", "output_size", output_size)
    for i in range(1, len(self._size)):
        if self._size[i] <= 0:
            raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {int_list(self._size)} "
                               f"with dimension {i} being empty")
    out, idx = call("adaptive_max_pool2d", call("unsqueeze", self, -2), [1, output_size[0]])
    return call("squeeze.dim", out, -2), call("squeeze.dim", idx, -2)


# ---- 3-d average pooling, the backward kernels (AveragePool3d.cpp, AvgPoolKernel.cpp,
# AdaptiveAveragePooling3d.cpp, AdaptiveAvgPoolKernel.cpp) ------------------------------------
#
# Upstream's loops accumulate in the tensor's own type: each window sums its elements in scan
# order (depth, rows, columns) starting from zero, then divides; a backward kernel divides each
# output's gradient once and adds it into every input position of its window, output positions
# in scan order. The numpy versions below keep both orders exactly: a forward adds the window
# offsets in scan order (padding contributes exact zeros); a backward adds the offsets in
# reverse scan order, which reaches every input position from its output positions in scan
# order. float16/bfloat16 values are computed in float32 and rounded after every operation, as
# c10::Half/BFloat16 arithmetic does.

_F32, _F64 = _B["float32"], _B["float64"]
_AVG3D_TYPES = frozenset((_F32, _F64, _INT64))


def _rounder(dt):
    """A function rounding float32 values to ``dt`` (returned as float32) for float16/bfloat16;
    None for the dtypes numpy computes natively."""
    if dt not in D.REDUCED_FLOATING:
        return None
    from ..core.cast import cast_array

    def rnd(a):
        return cast_array(cast_array(np.asarray(a, np.float32), _F32, dt), dt, _F32)

    return rnd


def _div(a, f, integer, rnd=None):
    """a / f as upstream's scalar_t arithmetic computes it (integers truncate toward zero)."""
    if integer:
        return _trunc_div(a, np.asarray(f, np.int64))
    out = a / np.asarray(f).astype(a.dtype)
    return rnd(out) if rnd is not None else out


def _triple(v, name, what, allow_empty=False):
    v = [int(x) for x in (v or ())]
    if allow_empty and not v:
        return None
    if len(v) not in (1, 3):
        raise RuntimeError(f"{name}: {what}")
    return tuple(v) if len(v) == 3 else (v[0],) * 3


def _params3d(kernel_size, stride, padding):
    k = _triple(kernel_size, "avg_pool3d", "kernel_size must be a single int, or a tuple of three "
                                           "ints")
    st = _triple(stride, "avg_pool3d", "stride must be omitted, a single int, or a tuple of three "
                                       "ints", allow_empty=True)
    if st is None:
        st = k
    elif len(stride) == 1:
        st = (st[0],) * 3
    p = _triple(padding, "avg_pool3d", "padding must be a single int, or a tuple of three ints")
    return k, st, p


def _check_format_3d(t):
    if len(t._size) not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")


def _pool3d_shape_check(t, k, st, p, ins, outs, fn):
    kt, kh, kw = k
    if not (kt > 0 and kw > 0 and kh > 0):
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} "
                           f"kW: {kw}")
    if not (st[0] > 0 and st[2] > 0 and st[1] > 0):
        raise RuntimeError(f"stride should be greater than zero, but got dT: {st[0]} dH: {st[1]} "
                           f"dW: {st[2]}")
    nd = len(t._size)
    if nd not in (4, 5):
        raise RuntimeError(f"{fn}: Expected 4D or 5D tensor for input, but got: "
                           f"{int_list(t._size)}")
    for i in range(nd):
        if nd == 5 and i == 0:
            continue
        if t._size[i] <= 0:
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive "
                               f"length, but input has a shape of {int_list(t._size)} and "
                               f"non-batch dimension {t._size[i]} has length zero!")
    it, ih, iw = ins
    if not (it >= kt and ih >= kh and iw >= kw):
        raise RuntimeError(f"input image (T: {it} H: {ih} W: {iw}) smaller than kernel size "
                           f"(kT: {kt} kH: {kh} kW: {kw})")
    if not (kt // 2 >= p[0] and kw // 2 >= p[2] and kh // 2 >= p[1]):
        raise RuntimeError("pad should be smaller than or equal to half of effective kernel size, "
                           f"but got padT: {p[0]} padW: {p[2]} padH: {p[1]} effectiveKT: {kt} "
                           f"effectiveKW: {kw} effectiveKH: {kh}")
    ot, oh, ow = outs
    if not (ot >= 1 and ow >= 1 and oh >= 1):
        n = t._size[-4]
        raise RuntimeError(f"Given input size: ({n}x{it}x{ih}x{iw}). Calculated output size: "
                           f"({n}x{ot}x{oh}x{ow}). Output size is too small")


def _pool_extents(n_out, size, k, s, p):
    """Per output position along one dimension: start (may be negative), the window size
    counting padding, and the clipped [lo, hi) range inside the input."""
    start = np.arange(n_out, dtype=np.int64) * s - p
    end = np.minimum(start + k, size + p)
    lo, hi = np.maximum(start, 0), np.minimum(end, size)
    return start, end - start, lo, hi


def _outer(*vs):
    """The product of per-dimension vectors over the grid of output positions."""
    out = np.ones((), np.int64)
    for i, v in enumerate(vs):
        shape = [1] * len(vs)
        shape[i] = len(v)
        out = out * np.asarray(v, np.int64).reshape(shape)
    return out


def _avg_factors(ins, outs, k, st, p, count_include_pad, divisor_override):
    """(divide factor, empty-window mask) over the grid of output positions."""
    ext = [_pool_extents(o, n, kk, s, pp) for o, n, kk, s, pp in zip(outs, ins, k, st, p)]
    pool = _outer(*(e[1] for e in ext))
    real = _outer(*(e[3] - e[2] for e in ext))
    empty_win = np.zeros(real.shape, bool)
    for i, e in enumerate(ext):
        shape = [1] * len(ext)
        shape[i] = -1
        empty_win = empty_win | (e[3] <= e[2]).reshape(shape)
    if divisor_override is not None:
        factor = np.full(real.shape, divisor_override, np.int64)
    else:
        factor = pool if count_include_pad else real
    return factor, empty_win


def _padded_nd(x, outs, k, st, p, fill=0):
    """x (..., *spatial) padded with ``fill`` before (p) and after (as far as windows reach)."""
    d = len(k)
    pads = [(0, 0)] * (x.ndim - d)
    for i in range(d):
        need = (outs[i] - 1) * st[i] + k[i]
        pads.append((p[i], max(need - x.shape[x.ndim - d + i] - p[i], 0)))
    return np.pad(x, pads, constant_values=fill) if any(a or b for a, b in pads) else x


def _avg_pool_forward(x, outs, k, st, p, count_include_pad, divisor_override, integer, rnd):
    d = len(k)
    ins = x.shape[-d:]
    xp = _padded_nd(x, outs, k, st, p)
    lead = x.shape[:-d]
    acc = np.zeros(lead + tuple(outs), x.dtype)
    for off in itertools.product(*(range(kk) for kk in k)):
        sl = tuple(slice(off[i], off[i] + (outs[i] - 1) * st[i] + 1, st[i]) for i in range(d))
        acc += xp[(Ellipsis,) + sl]
        if rnd is not None:
            acc = rnd(acc)
    factor, empty_win = _avg_factors(ins, outs, k, st, p, count_include_pad, divisor_override)
    out = _div(acc, np.where(empty_win, 1, factor), integer, rnd)
    if empty_win.any():
        out = np.where(empty_win, 0, out).astype(out.dtype)
    return out


def _avg_pool_backward(g, ins, k, st, p, count_include_pad, divisor_override, integer, rnd):
    """The gradient of an average pooling over the last len(k) dimensions."""
    d = len(k)
    outs = g.shape[-d:]
    factor, empty_win = _avg_factors(ins, outs, k, st, p, count_include_pad, divisor_override)
    delta = _div(g, np.where(empty_win, 1, factor), integer, rnd)
    full = [max((outs[i] - 1) * st[i] + k[i], ins[i] + p[i]) for i in range(d)]
    acc = np.zeros(g.shape[:-d] + tuple(full), g.dtype)
    for off in reversed(list(itertools.product(*(range(kk) for kk in k)))):
        sl = (Ellipsis,) + tuple(slice(off[i], off[i] + (outs[i] - 1) * st[i] + 1, st[i])
                                 for i in range(d))
        acc[sl] += delta
        if rnd is not None:
            acc[sl] = rnd(acc[sl])
    return acc[(Ellipsis,) + tuple(slice(p[i], p[i] + ins[i]) for i in range(d))]


def _contiguous_result(values, dt):
    out = empty(values.shape, dt, CPU)
    src = D.dtype_from_numpy(values.dtype)
    if src is not dt:
        from ..core.cast import cast_array

        values = cast_array(values, src, dt)
    np.copyto(arr(out), values)
    return out


def _check_divisor(divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")


@kernel("avg_pool3d")
def avg_pool3d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    k, st, p = _params3d(kernel_size, stride, padding)
    _check_format_3d(self)
    _check_divisor(divisor_override)
    ins = tuple(self._size[-3:])
    outs = tuple(_output_shape(ins[i], k[i], p[i], st[i], 1, ceil_mode) for i in range(3))
    _pool3d_shape_check(self, k, st, p, ins, outs, "avg_pool3d()")
    dt = self._dtype
    if dt not in _AVG3D_TYPES:
        raise not_implemented("avg_pool3d_out_frame", dt)
    x = arr(self)
    out = _avg_pool_forward(x, outs, k, st, p, count_include_pad, divisor_override,
                            dt is _INT64, None)
    return _contiguous_result(out, dt)


def _check_dim_size(t, dim, dim_size, size):
    if not (len(t._size) == dim and t._size[dim_size] == size):
        got = t._size[dim_size] if -len(t._size) <= dim_size < len(t._size) else "?"
        raise RuntimeError(f"Expected a tensor of dimension {dim} and tensor.size[{dim_size}] == "
                           f"{size} but got: dimension {t.dim()} and tensor.size[{dim_size}] = "
                           f"{got}")


def _check_scalar_type(t, dt):
    """What reading ``t`` as the dispatched scalar type raises when it has another dtype."""
    if t._dtype is not dt:
        raise RuntimeError(f"expected scalar type {dt._cpp_name} but found {t._dtype._cpp_name}")


def _check_resizable(shape):
    """What resizing an output to ``shape`` raises for a negative size: the element count,
    computed on sizes taken as unsigned 64-bit numbers, overflows (else the allocator refuses
    the negative dimension)."""
    if all(d >= 0 for d in shape):
        return
    n = 1
    for d in shape:
        n *= d % (1 << 64)
        if n >= 1 << 64:
            raise RuntimeError("numel: integer multiplication overflow")
    _check_sizes(shape)


def _check_same_dtype(t, g, what, prefix="e"):
    if t._dtype is not g._dtype:
        raise RuntimeError(f"{prefix}xpected dtype {typemeta(t._dtype)} for `{what}` but got dtype "
                           f"{typemeta(g._dtype)}")


@kernel("avg_pool3d_backward")
def avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    k, st, p = _params3d(kernel_size, stride, padding)
    _check_format_3d(self)
    _check_divisor(divisor_override)
    ins = tuple(self._size[-3:])
    outs = tuple(_output_shape(ins[i], k[i], p[i], st[i], 1, ceil_mode) for i in range(3))
    _pool3d_shape_check(self, k, st, p, ins, outs, "avg_pool3d_backward()")
    nd = len(self._size)
    _check_dim_size(grad_output, nd, nd - 4, self._size[-4])
    for i in range(3):
        _check_dim_size(grad_output, nd, nd - 3 + i, outs[i])
    dt = self._dtype
    if dt not in _AVG3D_TYPES:
        raise not_implemented("avg_pool3d_backward_out_frame", dt)
    _check_scalar_type(grad_output, dt)
    g = arr(grad_output)
    res = _avg_pool_backward(g, ins, k, st, p, count_include_pad, divisor_override,
                             dt is _INT64, None)
    return _contiguous_result(res, dt)


_AVG2D_BACKWARD_TYPES = frozenset((_F32, _F64, _INT64) + tuple(D.REDUCED_FLOATING))


@kernel("avg_pool2d_backward")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    kh, kw, dh, dw, ph, pw = _params("avg_pool2d", kernel_size, stride, padding)
    _check_divisor(divisor_override)
    nd = len(self._size)
    h, w = self._size[-2], self._size[-1]
    ow = _output_shape(w, kw, pw, dw, 1, ceil_mode)
    oh = _output_shape(h, kh, ph, dh, 1, ceil_mode)
    cl = _suggest_cl(self)
    _shape_check(self, kh, kw, dh, dw, ph, pw, 1, 1, oh, ow, cl)
    _check_dim_size(grad_output, nd, nd - 3, self._size[-3])
    _check_dim_size(grad_output, nd, nd - 2, oh)
    _check_dim_size(grad_output, nd, nd - 1, ow)
    _check_same_dtype(self, grad_output, "gradOutput")
    dt = self._dtype
    if dt not in _AVG2D_BACKWARD_TYPES:
        raise not_implemented("avg_pool2d_backward", dt)
    g = _values(grad_output)
    res = _avg_pool_backward(g, (h, w), (kh, kw), (dh, dw), (ph, pw), count_include_pad,
                             divisor_override, dt is _INT64, _rounder(dt))
    return _output(self, res, dt, cl)


# ---- adaptive average pooling ------------------------------------------------------------------

def _adaptive_ranges(n_out, n_in):
    a = np.arange(n_out, dtype=np.int64)
    return (a * n_in) // n_out, ((a + 1) * n_in + n_out - 1) // n_out


def _adaptive_forward(x, outs, rnd):
    """x (..., *spatial): each output the scan-order sum of its window, divided by the window's
    extent in each dimension in turn (upstream's ``sum / kT / kH / kW``)."""
    d = len(outs)
    ins = x.shape[-d:]
    starts, sizes, idx, valid = [], [], [], []
    for i in range(d):
        s, e = _adaptive_ranges(outs[i], ins[i])
        starts.append(s)
        sizes.append(e - s)
        kmax = int((e - s).max()) if outs[i] else 0
        j = np.arange(kmax, dtype=np.int64)
        idx.append(np.minimum(s[:, None] + j[None, :], ins[i] - 1))
        valid.append(j[None, :] < (e - s)[:, None])
    lead = x.shape[:-d]
    acc = np.zeros(lead + tuple(outs), x.dtype)
    if not all(outs) or x.size == 0:
        return acc
    for off in itertools.product(*(range(v.shape[1]) for v in valid)):
        index = [Ellipsis]
        mask = np.ones((), bool)
        for i in range(d):
            shape = [1] * d
            shape[i] = outs[i]
            index.append(idx[i][:, off[i]].reshape(shape))
            mask = mask & valid[i][:, off[i]].reshape(shape)
        vals = x[tuple(index)]
        acc += np.where(mask, vals, 0).astype(x.dtype, copy=False)
        if rnd is not None:
            acc = rnd(acc)
    for i in range(d):
        shape = [1] * d
        shape[i] = outs[i]
        acc = _div(acc, sizes[i].reshape(shape), False, rnd)
    return acc


def _adaptive_backward(g, ins, rnd):
    d = len(ins)
    outs = g.shape[-d:]
    ranges = [_adaptive_ranges(outs[i], ins[i]) for i in range(d)]
    delta = g
    for i in range(d):
        shape = [1] * d
        shape[i] = outs[i]
        delta = _div(delta, (ranges[i][1] - ranges[i][0]).reshape(shape), False, rnd)
    acc = np.zeros(g.shape[:-d] + tuple(ins), g.dtype)
    if not all(outs) or g.size == 0:
        return acc
    if all(o <= n for o, n in zip(outs, ins)):
        # windows start strictly increasing: adding the offsets in reverse scan order reaches
        # each input position from its output positions in scan order
        kmax = [int((e - s).max()) for s, e in ranges]
        for off in reversed(list(itertools.product(*(range(k) for k in kmax)))):
            sel_out, sel_in = [Ellipsis], [Ellipsis]
            for i in range(d):
                s, e = ranges[i]
                ok = np.nonzero(off[i] < e - s)[0]
                sel_out.append(ok)
                sel_in.append(s[ok] + off[i])
            if any(len(x) == 0 for x in sel_out[1:]):
                continue
            io = np.ix_(*sel_out[1:])
            ii = np.ix_(*sel_in[1:])
            acc[(Ellipsis,) + ii] += delta[(Ellipsis,) + io]
            if rnd is not None:
                acc[(Ellipsis,) + ii] = rnd(acc[(Ellipsis,) + ii])
        return acc
    for o in itertools.product(*(range(n) for n in outs)):
        sl = (Ellipsis,) + tuple(slice(int(ranges[i][0][o[i]]), int(ranges[i][1][o[i]]))
                                 for i in range(d))
        acc[sl] += delta[(Ellipsis,) + o][(...,) + (None,) * d]
        if rnd is not None:
            acc[sl] = rnd(acc[sl])
    return acc


_ADAPTIVE_TYPES = frozenset((_F32, _F64) + tuple(D.REDUCED_FLOATING))


@kernel("_adaptive_avg_pool3d")
def _adaptive_avg_pool3d(self, output_size):
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    nd = len(self._size)
    for i in range(1, nd):
        if self._size[i] <= 0:
            raise RuntimeError("adaptive_avg_pool3d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {int_list(self._size)} "
                               f"with dimension {i} being empty")
    if nd not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{int_list(self._size)}")
    outs = tuple(int(s) for s in output_size)
    out_shape = tuple(self._size[:-3]) + outs
    _check_resizable(out_shape)
    dt = self._dtype
    if dt not in _ADAPTIVE_TYPES:
        raise not_implemented("adaptive_avg_pool3d_cpu", dt)
    return _contiguous_result(_adaptive_forward(_values(self), outs, _rounder(dt)), dt)


def _adaptive_empty_output_check(g, name):
    for i in range(1, g.dim()):
        if g._size[i] <= 0:
            raise RuntimeError(f"{name}(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes "
                               f"{int_list(g._size)} with dimension {i} being empty")


@kernel("_adaptive_avg_pool3d_backward")
def _adaptive_avg_pool3d_backward(grad_output, self):
    _adaptive_empty_output_check(grad_output, "adaptive_avg_pool3d_backward")
    dt = self._dtype
    if dt not in _ADAPTIVE_TYPES:
        raise not_implemented("adaptive_avg_pool3d_backward_cpu", dt)
    _check_scalar_type(grad_output, dt)
    res = _adaptive_backward(_values(grad_output), tuple(self._size[-3:]), _rounder(dt))
    return _contiguous_result(res.reshape(tuple(self._size)), dt)


@kernel("_adaptive_avg_pool2d_backward")
def _adaptive_avg_pool2d_backward(grad_output, self):
    _adaptive_empty_output_check(grad_output, "adaptive_avg_pool2d_backward")
    nd = len(grad_output._size)
    if nd not in (3, 4):
        raise RuntimeError("adaptive_avg_pool2d_backward_out_cpu_template: Expected 3D or 4D "
                           f"tensor, but got {int_list(self._size)}")
    _check_same_dtype(self, grad_output, "grad_output",
                      "adaptive_avg_pool2d_backward_out_cpu_template: E")
    dt = self._dtype
    if dt not in _ADAPTIVE_TYPES:
        raise not_implemented("adaptive_avg_pool2d_backward", dt)
    res = _adaptive_backward(_values(grad_output), tuple(self._size[-2:]), _rounder(dt))
    return _output(self, res.reshape(tuple(self._size)), dt, _suggest_cl(self))


@kernel("adaptive_avg_pool3d", composite=True)
def adaptive_avg_pool3d(self, output_size):
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    o = [int(s) for s in output_size]
    if not all(s >= 0 for s in o):
        raise RuntimeError("adaptive_avg_pool3d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{o[0]}, {o[1]},{o[2]}}}")
    if o == [1, 1, 1]:
        out = call("mean.dim", self, [-1, -2, -3], True)
        if len(self._size) == 5 and is_channels_last(self):
            n, c = self._size[0], self._size[1]
            call("as_strided_", out, [n, c, 1, 1, 1], [c, 1, c, c, c])
        return out
    return call("_adaptive_avg_pool3d", self, o)


# ---- out= forms with upstream's own rules -------------------------------------------------------
#
# The door's generic out= wrapper follows TensorIterator (any castable dtype). Upstream's other
# out= kernels are stricter, and these kernels follow them: torchgen's autogenerated ones
# (``autogen:`` in native_functions.yaml) resize each output to the functional's result, then
# copy it only into an output of the same dtype; structured ones check the dtype first, and an
# output they resize takes the layout the meta function chose.

def _avg_pool1d_functional(self, kernel_size, stride=(), padding=(0,), ceil_mode=False,
                           count_include_pad=True):
    return call("avg_pool1d", self, list(kernel_size), list(stride or ()), list(padding),
                ceil_mode, count_include_pad)


register_autogen_out("avg_pool1d.out", _avg_pool1d_functional)
register_autogen_out("adaptive_avg_pool1d.out",
                     lambda self, output_size: call("adaptive_avg_pool1d", self, list(output_size)))
register_structured_out("avg_pool3d.out", avg_pool3d)
register_structured_out("avg_pool3d_backward.grad_input", avg_pool3d_backward, "grad_input")
register_structured_out("avg_pool2d_backward.grad_input", avg_pool2d_backward, "grad_input")
register_autogen_out("_adaptive_avg_pool3d.out", _adaptive_avg_pool3d)
register_autogen_out("_adaptive_avg_pool3d_backward.out", _adaptive_avg_pool3d_backward)
register_autogen_out("_adaptive_avg_pool2d_backward.out", _adaptive_avg_pool2d_backward)
