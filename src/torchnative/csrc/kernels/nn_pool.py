"""2-d pooling (DilatedMaxPool2d.cpp, AveragePool2d.cpp, AdaptiveAveragePooling.cpp):
max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d, and the CompositeImplicitAutograd
max_pool2d, max_pool1d(_with_indices), avg_pool1d, adaptive_avg_pool1d/2d that reach them.

Windows are strided numpy views (no copy of the input). max pooling ignores padding (only real
positions compete), keeps the first maximum, and lets NaN win (the last NaN's index, as
upstream's ``val > max || isnan(val)`` scan gives). Averages accumulate in opmath and divide by
the window size upstream computes (count_include_pad, divisor_override, ceil_mode windows cut at
the padded border).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..construct import empty
from ..device import CPU
from .common import arr, as_compute
from .nn_util import call, is_channels_last, not_implemented
from .registry import kernel

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
    return t.dim() == 4 and is_channels_last(t)


def _output_shape(size, k, pad, stride, dilation, ceil_mode):
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > ((k - 1) * dilation + 1) // 2:
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
    s, nd = input._size, input.dim()
    valid = s[1] != 0 and s[2] != 0
    if cl:
        if not (nd == 4 and valid and s[3] != 0):
            raise RuntimeError("Expected 4D (batch mode) tensor expected for input with "
                               "channels_last layout with optional 0 dim batch size for input, "
                               f"but got: {_shape(s)}")
    elif not ((nd == 3 and s[0] != 0 and valid) or (nd == 4 and valid and s[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{_shape(s)}")
    if not (kw // 2 >= pw and kh // 2 >= ph):
        raise RuntimeError("pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}")
    if ow < 1 or oh < 1:
        raise RuntimeError(f"Given input size: ({s[-3]}x{s[-2]}x{s[-1]}). Calculated output size: "
                           f"({s[-3]}x{oh}x{ow}). Output size is too small")


def _shape(s) -> str:
    return "[" + ", ".join(str(x) for x in s) + "]"


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
        from ..cast import cast_array

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
        if self.dim() != 4:
            raise RuntimeError("non-empty 4D (batch mode) tensor expected for input with "
                               "channels_last layout")
    elif self.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    h, w = self._size[-2], self._size[-1]
    oh = _output_shape(h, kh, ph, dh, dilh, ceil_mode)
    ow = _output_shape(w, kw, pw, dw, dilw, ceil_mode)
    _shape_check(self, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow, cl)
    dt = self._dtype
    out_shape = tuple(self._size[:-2]) + (oh, ow)
    if self.numel() == 0:
        return _output(self, np.empty(out_shape, D.numpy_dtype(dt)), dt, cl), \
            _output(self, np.empty(out_shape, np.int64), _INT64, cl)
    if dt not in _MAXPOOL_TYPES:
        raise not_implemented("max_pool2d", dt)
    x = _values(self)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    win = _padded_windows(x, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow, low)
    win = win.reshape(out_shape + (kh * kw,))
    valid = _valid(h, w, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow)
    pick = np.argmax(win, axis=-1)
    if x.dtype.kind == "f":
        nan = np.isnan(win)
        if nan.any():  # the last NaN in scan order wins
            last_nan = kh * kw - 1 - np.argmax(nan[..., ::-1], axis=-1)
            pick = np.where(nan.any(axis=-1), last_nan, pick)
    # a window whose real values are all the lowest value keeps its first real position
    on_pad = ~np.take_along_axis(np.broadcast_to(valid, win.shape), pick[..., None], -1)[..., 0]
    if on_pad.any():
        pick = np.where(on_pad, np.argmax(valid, axis=-1), pick)
    vals = np.take_along_axis(win, pick[..., None], -1)[..., 0]
    kr, kc = np.divmod(pick, kw)
    ih = np.arange(oh)[:, None] * dh - ph + kr * dilh
    iw = np.arange(ow)[None, :] * dw - pw + kc * dilw
    return _output(self, vals, dt, cl), _output(self, (ih * w + iw).astype(np.int64), _INT64, cl)


def _values(t) -> np.ndarray:
    """Values to pool: float16/bfloat16 widened to float32 (exact), others as stored."""
    a = arr(t)
    return as_compute(t, t._dtype) if a.dtype.kind == "V" or a.dtype == np.float16 else a


def _padded_windows(x, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow, fill):
    """Windows over x padded with ``fill`` (also past the end, where ceil_mode windows reach)."""
    h, w = x.shape[-2:]
    need_h = (oh - 1) * dh + dilh * (kh - 1) + 1
    need_w = (ow - 1) * dw + dilw * (kw - 1) + 1
    pad = [(0, 0)] * (x.ndim - 2) + [(ph, max(need_h - h - ph, 0)), (pw, max(need_w - w - pw, 0))]
    xp = np.pad(x, pad, constant_values=fill) if any(p for pair in pad for p in pair) else x
    return _windows(xp, kh, kw, dh, dw, dilh, dilw, oh, ow)


def _valid(h, w, kh, kw, dh, dw, ph, pw, dilh, dilw, oh, ow) -> np.ndarray:
    """(oh, ow, kh*kw): which window positions fall inside the unpadded input."""
    rows = np.arange(oh)[:, None] * dh - ph + np.arange(kh)[None, :] * dilh
    cols = np.arange(ow)[:, None] * dw - pw + np.arange(kw)[None, :] * dilw
    ok_r = (rows >= 0) & (rows < h)
    ok_c = (cols >= 0) & (cols < w)
    return (ok_r[:, None, :, None] & ok_c[None, :, None, :]).reshape(oh, ow, kh * kw)


# ---- average pooling --------------------------------------------------------------------------

_AVG_TYPES = _MAXPOOL_TYPES


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
        if self.dim() != 4:
            raise RuntimeError("non-empty 4D (batch mode) tensor expected for input with "
                               "channels_last layout")
    elif self.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    h, w = self._size[-2], self._size[-1]
    oh = _output_shape(h, kh, ph, dh, 1, ceil_mode)
    ow = _output_shape(w, kw, pw, dw, 1, ceil_mode)
    _shape_check(self, kh, kw, dh, dw, ph, pw, 1, 1, oh, ow, cl)
    dt = self._dtype
    out_shape = tuple(self._size[:-2]) + (oh, ow)
    if self.numel() == 0:
        return _output(self, np.empty(out_shape, D.numpy_dtype(dt)), dt, cl)
    if dt not in _AVG_TYPES:
        raise not_implemented("avg_pool2d", dt)
    x = _values(self)
    win = _padded_windows(x, kh, kw, dh, dw, ph, pw, 1, 1, oh, ow, 0)
    # sum the window positions in upstream's order (rows, then columns), zeros outside
    acc = np.zeros(out_shape, x.dtype)
    for i in range(kh):
        for j in range(kw):
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
                               f"{_shape(shape)}")


def _start(a, b, c):
    return (a * c) // b


def _end(a, b, c):
    return ((a + 1) * c + b - 1) // b


_FLOATS = frozenset(_B[n] for n in ("float32", "float64", "float16", "bfloat16"))


@kernel("_adaptive_avg_pool2d")
def _adaptive_avg_pool2d(self, output_size):
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    nd = self.dim()
    if nd not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{_shape(self._size)}")
    for i in range(1, nd):
        if self._size[i] == 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {_shape(self._size)} "
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
    if self.numel() and oh and ow:
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
    if not lo <= t.dim() < hi:
        raise RuntimeError(f"Expected {lo}D to {hi - 1}D tensor for argument #1 'self' (while "
                           f"checking arguments for {name}), but got {t.dim()}D tensor "
                           f"{_shape(t._size)}")


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
    nd, s = self.dim(), self._size
    if not ((nd == 2 and s[0] != 0 and s[1] != 0) or (nd == 3 and s[1] != 0 and s[2] != 0)):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{_shape(s)}")
    stride = list(stride or ())
    _check_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode)
    from ..autograd.grad_mode import is_grad_enabled
    from .nn_util import subclass_like

    if (self.requires_grad and is_grad_enabled()) or subclass_like(self):
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

@kernel("adaptive_max_pool2d")
def adaptive_max_pool2d(self, output_size):
    nd = self.dim()
    if nd not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{_shape(self._size)}")
    for i in range(1, nd):
        if self._size[i] <= 0:
            raise RuntimeError("adaptive_max_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {_shape(self._size)} "
                               f"with dimension {i} being empty")
    if len(output_size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    oh, ow = (int(s) for s in output_size)
    dt = self._dtype
    cl = nd == 4 and _suggest_cl(self)
    out_shape = tuple(self._size[:-2]) + (oh, ow)
    _check_sizes(out_shape)
    if dt not in _FLOATS:
        raise not_implemented("adaptive_max_pool2d", dt)
    x = _values(self)
    h, w = x.shape[-2:]
    vals = np.empty(out_shape, x.dtype)
    idx = np.empty(out_shape, np.int64)
    for a in range(oh):
        i0, i1 = _start(a, oh, h), _end(a, oh, h)
        for b in range(ow):
            j0, j1 = _start(b, ow, w), _end(b, ow, w)
            win = x[..., i0:i1, j0:j1].reshape(out_shape[:-2] + (-1,))
            pick = np.argmax(win, axis=-1)  # the first maximum
            nan = np.isnan(win)
            if nan.any():  # upstream's scan lets the last NaN win
                last = win.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
                pick = np.where(nan.any(axis=-1), last, pick)
            vals[..., a, b] = np.take_along_axis(win, pick[..., None], -1)[..., 0]
            kr, kc = np.divmod(pick, j1 - j0)
            idx[..., a, b] = (i0 + kr) * w + (j0 + kc)
    return _output(self, vals, dt, cl), _output(self, idx, _INT64, cl)


@kernel("adaptive_max_pool1d", composite=True)
def adaptive_max_pool1d(self, output_size):
    _check_dim_range("adaptive_max_pool1d", self, 2, 4)
    _check_1d("adaptive_max_pool1d", "output_size", output_size)
    for i in range(1, self.dim()):
        if self._size[i] <= 0:
            raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {_shape(self._size)} "
                               f"with dimension {i} being empty")
    out, idx = call("adaptive_max_pool2d", call("unsqueeze", self, -2), [1, output_size[0]])
    return call("squeeze.dim", out, -2), call("squeeze.dim", idx, -2)
