"""Convolution (Convolution.cpp): the CompositeExplicitAutograd kernels convolution,
_convolution and convolution_backward for 1-3 spatial dimensions (strided, padded, dilated,
grouped, transposed), and the CompositeImplicitAutograd entries conv1d/2d/3d (with their
padding='same'/'valid' overloads), _convolution_mode and conv_transpose1d/2d/3d, which reach
them as upstream's C++ does.

A forward convolution is im2col + one batched matmul per group; a transposed one is a matmul
followed by col2im (a strided scatter-add per kernel offset). Both compute in opmath (float for
float16/bfloat16) and round once. The output is channels-last when the input or the weight is
(upstream's mkldnn_conv_use_channels_last), else contiguous.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .support import blas_threads
from ..core.tensor import numel_of
from ..core import dtypes as D
from ..core.construct import empty, from_result
from ..core.device import CPU
from ..core.layouts import channels_last, channels_last_3d, contiguous_format
from ..core.refuse import TorchnativeNotImplementedError
from .support.channels import channel_row, rows
from .support.common import arr, as_compute, int_list
from ..dispatch.call import call
from ..platform import cpu_capability
from .support.nn_util import is_channels_last, typemeta
from ..ops.kernel_registry import kernel
from ..platform.torch_warn import torch_warn

_B = D.BY_NAME


def _expand(param, name, dim):
    param = [int(p) for p in param]
    if len(param) == 1:
        return param * dim
    if len(param) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           f"values to match the convolution dimensions, but got {name}="
                           f"{int_list(param)}")
    return param


def _check_shape_forward(input, weight, bias, stride, padding, dilation, transposed,
                         output_padding, groups):
    ws = tuple(weight._size)
    k = len(input._size)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if len(ws) != k:
        raise RuntimeError(f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional weight "
                           f"{int_list(ws)}, but got {k}-dimensional input of size "
                           f"{int_list(input._size)} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {int_list(ws)} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size [{int_list(ws)}] instead")
    if not transposed:
        if input._size[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {int_list(ws)}, expected "
                               f"input{int_list(input._size)} to have {ws[1] * groups} channels, "
                               f"but got {input._size[1]} channels instead")
        if bias is not None and (len(bias._size) != 1 or bias._size[0] != ws[0]):
            raise RuntimeError(f"Given weight of size {int_list(ws)}, expected bias to be "
                               f"1-dimensional with {ws[0]} elements, but got bias of size "
                               f"{int_list(bias._size)} instead")
        padded = [input._size[i + 2] + 2 * padding[i] for i in range(k - 2)]
        kernel = [dilation[i] * (ws[i + 2] - 1) + 1 for i in range(k - 2)]
        if any(p < q for p, q in zip(padded, kernel)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                               "than actual input size")
    else:
        if input._size[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {int_list(ws)}, expected "
                               f"input{int_list(input._size)} to have {ws[0]} channels, but got "
                               f"{input._size[1]} channels instead")
        if bias is not None and (len(bias._size) != 1 or bias._size[0] != ws[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {int_list(ws)}, expected bias "
                               f"to be 1-dimensional with {ws[1] * groups} elements, but got bias "
                               f"of size {int_list(bias._size)} instead")


def _channels_last_output(input, weight) -> bool:
    return is_channels_last(input) or is_channels_last(weight)


def _out_size(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _pad(x, padding):
    """x (N, C, *sp) with zeros around its spatial dims: np.pad's values and memory order,
    without its cost."""
    if not any(padding):
        return x
    out = np.zeros(x.shape[:2] + tuple(n + 2 * p for n, p in zip(x.shape[2:], padding)),
                   x.dtype, order="F" if x.flags.fnc else "C")
    out[(slice(None),) * 2 + tuple(slice(p, p + n) for n, p in zip(x.shape[2:], padding))] = x
    return out


def _forward(x, w, stride, padding, dilation, groups):
    """x (N, C, *sp), w (O, C/G, *k) -> (N, O, *out): per image and group, the weight matrix
    times the windows laid out offset-major (``_windows_by_offset``), which is the output's own
    layout: no transposing copy after the product."""
    n, c = x.shape[:2]
    o = w.shape[0]
    ks = w.shape[2:]
    d = len(ks)
    out = [_out_size(x.shape[2 + i] + 2 * padding[i], ks[i], stride[i], 0, dilation[i])
           for i in range(d)]
    g, cg, og = groups, c // groups, o // groups
    p = math.prod(out)
    kk = math.prod(ks)
    cols = _windows_by_offset(x, padding, out, ks, stride, dilation, g)  # (n, g, cg*kk, p)
    wmat = w.reshape(g, og, cg * kk)
    blas_threads.for_product(n * g * p, cg * kk, og)
    res = np.matmul(wmat, cols)  # (n, g, og, p)
    return res.reshape((n, o) + tuple(out))


def _windows_by_offset(x, padding, out, ks, stride, dilation, groups, batch_inner=False):
    """The windows of x (N, C, *sp) padded with zeros as (N, G, C/G * K, P), or (G, C/G * K,
    N * P) with ``batch_inner``: row (c, offset) holds that channel's values at that kernel
    offset for every output position. A view where numpy can reshape the window view without a
    copy (a 1x1 kernel), else one contiguous copy whose inner runs are output rows (im2col's
    window-major layout took a gather)."""
    xp = _pad(x, padding)
    n, c = xp.shape[:2]
    d = len(ks)
    g, cg = groups, c // groups
    kk = math.prod(ks)
    p = math.prod(out)
    st = xp.strides
    lead = ((g, cg * st[1]), (cg, st[1])) + tuple(
        (ks[i], st[2 + i] * dilation[i]) for i in range(d))
    batch = ((n, st[0]),)
    rest = tuple((out[i], st[2 + i] * stride[i]) for i in range(d))
    dims = lead + batch + rest if batch_inner else batch + lead + rest
    win = np.lib.stride_tricks.as_strided(xp, tuple(s for s, _ in dims),
                                          tuple(b for _, b in dims), writeable=False)
    shape = (g, cg * kk, n * p) if batch_inner else (n, g, cg * kk, p)
    try:
        return np.reshape(win, shape, copy=False)
    except ValueError:
        return np.ascontiguousarray(win).reshape(shape)


def _transposed(x, w, stride, padding, dilation, output_padding, groups):
    """x (N, Cin, *in), w (Cin, Cout/G, *k) -> (N, Cout, *out): matmul, then col2im."""
    n, c = x.shape[:2]
    ks = w.shape[2:]
    d = len(ks)
    g, cg, og = groups, c // groups, w.shape[1]
    ins = x.shape[2:]
    out = [(ins[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ks[i] - 1) +
           output_padding[i] + 1 for i in range(d)]
    p = math.prod(ins)
    kk = math.prod(ks)
    xs = x.reshape(n, g, cg, p).transpose(0, 1, 3, 2)  # (n, g, p, cg)
    wm = w.reshape(g, cg, og * kk)
    blas_threads.for_product(n * g * p, cg, og * kk)
    cols = np.matmul(xs, wm).reshape((n, g, p, og) + tuple(ks))
    full = [out[i] + 2 * padding[i] for i in range(d)]
    if cols.dtype == np.float64 and cols.size <= _COL2IM_MAX:
        # bincount adds each target's contributions in the order they come, from 0.0, in
        # double. The loop below adds a target's contributions kernel offset by kernel offset;
        # a target's offsets ascend exactly as its input positions descend (position * stride
        # + offset * dilation is fixed), so the products read backwards, in memory order, give
        # every target the loop's order, in one pass and without a transposing copy
        idx = _col2im_index(n, g, og, ins, ks, stride, dilation, full)
        src = cols.reshape(-1)[::-1]
        acc = np.bincount(idx, weights=src, minlength=n * g * og * math.prod(full)).reshape(
            (n, g, og) + tuple(full))
        crop = tuple(slice(padding[i], padding[i] + out[i]) for i in range(d))
        return acc[(slice(None),) * 3 + crop].reshape((n, g * og) + tuple(out))
    acc = np.zeros((n, g, og) + tuple(full), cols.dtype)
    cols = cols.transpose((0, 1, 3) + tuple(range(4, 4 + d)) + (2,)).reshape(
        (n, g, og) + tuple(ks) + tuple(ins))
    for off in itertools.product(*(range(k) for k in ks)):
        sl = tuple(slice(off[i] * dilation[i], off[i] * dilation[i] +
                         (ins[i] - 1) * stride[i] + 1, stride[i]) for i in range(d))
        acc[(slice(None),) * 3 + sl] += cols[(slice(None),) * 3 + off]
    crop = tuple(slice(padding[i], padding[i] + out[i]) for i in range(d))
    return acc[(slice(None),) * 3 + crop].reshape((n, g * og) + tuple(out))


_COL2IM_MAX = 1 << 22  # contributions; the cached index is 8 bytes each
_COL2IM: dict = {}


def _col2im_index(n, g, og, ins, ks, stride, dilation, full) -> np.ndarray:
    """Target of each col2im contribution, flat in the (N, G, O/G, *full) accumulator, for the
    products (n, g, input position, o, kernel offset) read from last to first."""
    key = (n, g, og, tuple(ins), tuple(ks), tuple(stride), tuple(dilation), tuple(full))
    idx = _COL2IM.get(key)
    if idx is None:
        d = len(ks)
        fstride = [math.prod(full[i + 1:]) for i in range(d)]
        plane = math.prod(full)
        pos = np.zeros((), np.int64)
        off = np.zeros((), np.int64)
        for i in range(d):
            pos = np.add.outer(pos, np.arange(ins[i], dtype=np.int64) * (stride[i] * fstride[i]))
            off = np.add.outer(off, np.arange(ks[i], dtype=np.int64) * (dilation[i] * fstride[i]))
        idx = (np.arange(n, dtype=np.int64).reshape(-1, 1, 1, 1, 1) * (g * og * plane) +
               np.arange(g, dtype=np.int64).reshape(1, -1, 1, 1, 1) * (og * plane) +
               pos.reshape(1, 1, -1, 1, 1) +
               np.arange(og, dtype=np.int64).reshape(1, 1, 1, -1, 1) * plane +
               off.reshape(1, 1, 1, 1, -1)).reshape(-1)[::-1].copy()
        if len(_COL2IM) >= 16:
            _COL2IM.clear()
        _COL2IM[key] = idx
    return idx


def _check_output_padding(output_padding, stride, dilation):
    names = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}[
        len(stride)]
    if len(stride) == 1:  # upstream views 1-d as 2-d with a unit height
        names, output_padding, stride, dilation = ("height", "width"), [0] + output_padding, \
            [1] + stride, [1] + dilation
    if any(op >= s and op >= dl for op, s, dl in zip(output_padding, stride, dilation)):
        parts = [f"output_padding_{nm}: {v}" for nm, v in zip(names, output_padding)] + \
            [f"stride_{nm}: {v}" for nm, v in zip(names, stride)] + \
            [f"dilation_{nm}: {v}" for nm, v in zip(names, dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(parts))


def _convolution_impl(input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups):
    dim = len(weight._size) - 2
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride = _expand(stride, "stride", dim)
    padding = _expand(padding, "padding", dim)
    dilation = _expand(dilation, "dilation", dim)
    output_padding = _expand(output_padding, "output_padding", dim)
    _check_shape_forward(input, weight, bias, stride, padding, dilation, transposed,
                         output_padding, groups)
    dt = input._dtype
    if weight._dtype is not dt:
        raise RuntimeError(f"expected scalar type {dt._cpp_name} but found "
                           f"{weight._dtype._cpp_name}")
    if dt.is_complex:  # upstream's conv1d/2d/3d composites take complex inputs apart (below)
        from .support.nn_util import not_implemented

        n = max(dim, 2)
        if transposed:
            raise not_implemented(f"slow_conv_transpose{n}d_out_cpu", dt)
        if any(d != 1 for d in dilation):
            raise not_implemented("slow_conv_dilated<>", dt)
        raise not_implemented("compute_columns3d" if n == 3 else "slow_conv2d_cpu", dt)
    if transposed:
        _check_output_padding(output_padding, stride, dilation)
    x = _compute(input, dt)
    w = _compute(weight, dt)
    if transposed:
        res = _transposed(x, w, stride, padding, dilation, output_padding, groups)
    else:
        res = _forward(x, w, stride, padding, dilation, groups)
    if bias is not None:
        b = _compute(bias, bias._dtype).astype(res.dtype, copy=False)
        if res.flags.c_contiguous and res.size:   # res is our own array
            r = rows(res)
            np.add(r, channel_row(b, r.shape[1] // b.size), out=r)
        else:
            res = np.add(res, b.reshape((1, -1) + (1,) * dim), out=res)
    fmt = contiguous_format
    if dim in (2, 3) and _channels_last_output(input, weight):
        fmt = channels_last if dim == 2 else channels_last_3d
    return _result(res, dt, fmt)


def _compute(t, dt) -> np.ndarray:
    """Values in the compute dtype: float16/bfloat16 widen to float32; float32 accumulates in
    float64 (upstream's oneDNN kernels sum in an order we cannot reproduce, so ours rounds once
    from a more accurate sum instead of adding an error of a different order); the rest as
    stored."""
    a = arr(t)
    if a.dtype == np.float32:
        return a.astype(np.float64)
    return as_compute(t, t._dtype) if a.dtype.kind not in "iu" and a.dtype.itemsize < 4 or \
        a.dtype.kind == "V" else a


def _strides(shape, fmt) -> tuple:
    if fmt is channels_last:
        n, c, h, w = shape
        return (h * w * c, 1, w * c, c)
    if fmt is channels_last_3d:
        n, c, d, h, w = shape
        return (d * h * w * c, 1, h * w * c, w * c, c)
    from ..core.tensor import contiguous_strides

    return contiguous_strides(shape)


@kernel("convolution")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    return _convolution_impl(input, weight, bias, stride, padding, dilation, transposed,
                             output_padding, groups)


@kernel("_convolution")
def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups, benchmark, deterministic, cudnn_enabled, allow_tf32):
    return _convolution_impl(input, weight, bias, stride, padding, dilation, transposed,
                             output_padding, groups)


# ---- CompositeImplicitAutograd entries ---------------------------------------------------------

def _batchify(input, spatial, name):
    no_batch = spatial + 1
    batched = len(input._size) == no_batch + 1
    if not (len(input._size) == no_batch or batched):
        raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input "
                           f"to {name}, but got input of size: {int_list(input._size)}")
    return (input if batched else call("unsqueeze", input, 0)), batched


def _check_bias_dtype(input, bias):
    if bias is not None and bias._dtype is not input._dtype:
        raise RuntimeError(f"Input type ({typemeta(input._dtype)}) and bias type "
                           f"({typemeta(bias._dtype)}) should be the same")


def _complex_parts(t):
    ri = call("view_as_real", call("resolve_conj", t))
    return call("select.int", ri, -1, 0), call("select.int", ri, -1, 1)


def _complex_convolution(conv, x, weight, bias):
    """Upstream's complex_convolution(_mode): Gauss's trick, three real convolutions
    a = conv(xr, wr, br), b = conv(xi, wi), c = conv(xr + xi, wr + wi, br + bi), and
    a - b + i * (c - a - b), as operators (autograd differentiates through them, as upstream's)."""
    x_r, x_i = _complex_parts(x)
    w_r, w_i = _complex_parts(weight)
    if bias is None:
        b_r = b_ri = None
    else:
        b_r, b_i = _complex_parts(bias)
        b_ri = call("add.Tensor", b_r, b_i)
    a = conv(x_r, w_r, b_r)
    b = conv(x_i, w_i, None)
    c = conv(call("add.Tensor", x_r, x_i), call("add.Tensor", w_r, w_i), b_ri)
    imag = call("mul.Scalar", call("sub.Tensor", call("sub.Tensor", c, a), b), 1j)
    return call("add.Tensor", call("sub.Tensor", a, b), imag)


def _conv_nd(spatial, name):
    def conv(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
        _check_bias_dtype(input, bias)
        x, batched = _batchify(input, spatial, name)
        if isinstance(padding, str):
            def real(x, w, b):
                return call("_convolution_mode", x, w, b, list(stride), padding,
                            list(dilation), groups)
        else:
            def real(x, w, b):
                return call("convolution", x, w, b, list(stride), list(padding),
                            list(dilation), False, [0] * spatial, groups)
        out = _complex_convolution(real, x, weight, bias) if input._dtype.is_complex else \
            real(x, weight, bias)
        return out if batched else call("squeeze.dim", out, 0)

    return conv


def _conv_transpose_nd(spatial, name):
    def conv_t(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,),
               groups=1, dilation=(1,)):
        _check_bias_dtype(input, bias)
        x, batched = _batchify(input, spatial, name)

        def real(x, w, b):
            return call("convolution", x, w, b, list(stride), list(padding), list(dilation),
                        True, list(output_padding), groups)

        out = _complex_convolution(real, x, weight, bias) if input._dtype.is_complex else \
            real(x, weight, bias)
        return out if batched else call("squeeze.dim", out, 0)

    return conv_t


for _d in (1, 2, 3):
    kernel(f"conv{_d}d", f"conv{_d}d.padding", composite=True)(_conv_nd(_d, f"conv{_d}d"))
    kernel("conv_transpose1d" if _d == 1 else f"conv_transpose{_d}d.input", composite=True)(
        _conv_transpose_nd(_d, f"conv_transpose{_d}d"))


def _same_padding_lr(k, d):
    """pooling_same_mode_padding_lr at stride 1 (the only stride 'same' allows)."""
    total = d * (k - 1)
    return total // 2, total - total // 2


@kernel("_convolution_mode", composite=True)
def _convolution_mode(input, weight, bias, stride, padding, dilation, groups):
    if padding == "valid":
        return call("convolution", input, weight, bias, list(stride), [0], list(dilation), False,
                    [0], groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    k = len(weight._size)
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    dim = k - 2
    if k != len(input._size):
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight"
                           f"{int_list(weight._size)}, but got {input.dim()}-dimensional input of "
                           f"size {int_list(input._size)} instead")
    if len(stride) not in (dim, 1):
        raise RuntimeError(f"stride cannot broadcast to {dim} dimensions")
    if len(dilation) not in (dim, 1):
        raise RuntimeError(f"dilation cannot broadcast to {dim} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pad_l, pad_r = [], []
    for i in range(dim):
        dl = dilation[0] if len(dilation) == 1 else dilation[i]
        lo, hi = _same_padding_lr(weight._size[i + 2], dl)
        pad_l.append(lo)
        pad_r.append(hi)
    if pad_l == pad_r:
        return call("convolution", input, weight, bias, list(stride), pad_l, list(dilation),
                    False, [0] * dim, groups)
    torch_warn("Using padding='same' with even kernel lengths and odd dilation may require a "
               "zero-padded copy of the input be created")
    pad_nd = [0] * (2 * dim)
    for i in range(dim):
        delta = pad_r[i] - pad_l[i]
        idx = 2 * (dim - 1 - i)  # F.pad's order: last dimension first
        if delta > 0:
            pad_nd[idx + 1] = delta
        else:
            pad_nd[idx] = delta
            pad_l[i] = pad_r[i]
    padded = call("constant_pad_nd", input, pad_nd, 0)
    return call("convolution", padded, weight, bias, list(stride), pad_l, list(dilation), False,
                [0] * dim, groups)


# ---- convolution_backward ------------------------------------------------------------------------
#
# The gradients of convolution (Convolution.cpp's convolution_backward, CompositeExplicitAutograd)
# for the output_mask's subset of (input, weight, bias): the input gradient of a convolution is
# the transposed convolution of the output gradient by the same weight (and the other way round
# for a transposed one); the weight gradient correlates the (padded) forward input with the
# forward output's gradient through the same strided, dilated windows, group by group; the bias
# gradient sums the output gradient over all but the channel dimension. Values are computed like
# the forward's (float64 for float32, float32 for float16/bfloat16) and rounded once. Upstream's
# CPU backends decide the layout (channels-last outputs when the input or the weight is
# channels-last, except 3-d double convolutions, which its slow kernels compute contiguous) and
# which dtypes exist (the slow kernels that integer and complex tensors reach compute only
# dilated convolutions of int64).

_F32, _F64 = _B["float32"], _B["float64"]
_FLOAT_CONV = frozenset(_B[n] for n in ("float32", "float64", "float16", "bfloat16"))


def _weight_grad(x, g, ks, stride, padding, dilation, groups):
    """d<conv(x, w), g>/dw for x (N, C, *in) and g (N, O, *out): (O, C/G, *k)."""
    n, c = x.shape[:2]
    o = g.shape[1]
    outs = g.shape[2:]
    gr, cg, og = groups, c // groups, o // groups
    p = math.prod(outs)
    kk = math.prod(ks)
    cols = _windows_by_offset(x, padding, outs, ks, stride, dilation, gr, batch_inner=True)
    gm = g.reshape(n, gr, og, p).transpose(1, 2, 0, 3).reshape(gr, og, n * p)
    blas_threads.for_product(gr * og, n * p, cg * kk)
    res = np.matmul(gm, cols.transpose(0, 2, 1))  # (g, og, cg*kk)
    return res.reshape((o, cg) + tuple(ks))


def _uses_mkldnn(input, weight, stride, dilation, groups, dt) -> bool:
    """ConvParams::use_mkldnn on CPU, on the 4-d (1-d viewed as 2-d) geometry: for
    bfloat16/float16 where oneDNN computes the type natively (mkldnn::_is_mkldnn_bf16_supported:
    an AVX-512 CPU; float16: AVX512-FP16 or AMX-FP16), else upstream's slow kernels; for float32
    unless the convolution is small enough that upstream prefers its own kernels. Its backward
    computes the weight gradient with the bias gradient, so the weight gradient comes back when
    only the bias's was asked for."""
    if dt is _B["bfloat16"]:
        return cpu_capability.ONEDNN_BF16
    if dt is _B["float16"]:
        return cpu_capability.ONEDNN_FP16
    if dt is not _B["float32"]:
        return False
    xs = list(input._size)
    ws = list(weight._size)
    if len(xs) == 3:
        xs.insert(2, 1)
        ws.insert(2, 1)
    from .support.parallel import get_num_threads

    n = xs[0]
    first = any(s != 1 for s in stride) or any(d != 1 for d in dilation) or n >= 16 or \
        ws[-1] != 1 or ws[-2] != 1 or get_num_threads() > 1
    second = groups > 1 or (ws[-1] > 3 and ws[-2] > 3) or n > 1 or \
        xs[0] * xs[1] * xs[2] * xs[3] > 20480
    return first and second


def _backend_name(dim, transposed, dilated, which):
    if transposed:
        return f"slow_conv_transpose{dim}d_" + ("backward_out_cpu" if which == 0 else
                                                "acc_grad_parameters_cpu")
    if dilated:
        return "slow_conv_dilated<>"
    return f"slow_conv{dim}d_cpu_grad_" + ("input" if which == 0 else "weight")


@kernel("convolution_backward")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    dim = len(weight._size) - 2
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    stride = _expand(stride, "stride", dim)
    padding = _expand(padding, "padding", dim)
    dilation = _expand(dilation, "dilation", dim)
    output_padding = _expand(output_padding, "output_padding", dim)
    groups = int(groups)
    _check_shape_forward(input, weight, None, stride, padding, dilation, transposed,
                         output_padding, groups)
    if len(input._size) != len(grad_output._size):
        raise RuntimeError("Expected input and grad_output to have the same number of "
                           f"dimensions, but got: {input.dim()} and {grad_output.dim()}")
    if not transposed and any(output_padding):
        raise RuntimeError("output_padding is not supported for non-transposed convolutions; "
                           f"got: {' '.join(map(str, output_padding))}")
    mask = [bool(m) for m in output_mask]
    dt = input._dtype
    gi = gw = gb = None
    if input._size[0] == 0 or input._size[1] == 0:
        # upstream's Empty backend
        if mask[0]:
            gi = call("zeros_like", input, dtype=None, layout=None, device=None,
                      pin_memory=None, memory_format=None)
        if mask[1]:
            gw = call("zeros_like", weight, dtype=None, layout=None, device=None,
                      pin_memory=None, memory_format=None)
        if mask[2]:
            sizes = list(bias_sizes) if bias_sizes is not None else [grad_output._size[1]]
            gb = call("zeros", sizes, dtype=weight._dtype, layout=None, device=weight.device,
                      pin_memory=None)
        return gi, gw, gb
    if numel_of(input) == 0:
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got input "
                           f"shape: {int_list(input._size)}")
    extra_weight = False
    if mask[2] and not mask[1] and _uses_mkldnn(input, weight, stride, dilation, groups, dt):
        mask[1] = extra_weight = True
    if mask[0] or mask[1]:
        dilated = any(dl != 1 for dl in dilation)
        if dt not in _FLOAT_CONV and not (dt is _B["int64"] and dilated and not transposed):
            which = 0 if mask[0] else 1
            name = _backend_name(max(dim, 2), transposed, dilated, which)
            if dilated and not transposed:
                if dt.is_complex:
                    raise TorchnativeNotImplementedError(
                        "complex convolution_backward", "torchnative's convolution kernels "
                        "compute real dtypes")
            from .support.nn_util import not_implemented

            raise not_implemented(name, dt)
        for t in (grad_output, weight):
            if t._dtype is not dt:
                raise RuntimeError(f"expected scalar type {dt._cpp_name} but found "
                                   f"{t._dtype._cpp_name}")
        g = _compute(grad_output, dt)
        x = _compute(input, dt)
        w = _compute(weight, dt)
        fmt = contiguous_format
        if dim in (2, 3) and _channels_last_output(input, weight) and \
                (dim == 2 or dt is not _B["float64"]):
            fmt = channels_last if dim == 2 else channels_last_3d
        if mask[0]:
            if transposed:
                res = _forward(g, w, stride, padding, dilation, groups)
                # output_padding can leave the forward one position longer than the input
                # along a dim; that position belongs to no input element
                res = res[(..., *(slice(0, n) for n in input._size[2:]))]
            else:
                ins = input._size[2:]
                op = [ins[i] - ((g.shape[2 + i] - 1) * stride[i] - 2 * padding[i] +
                                dilation[i] * (w.shape[2 + i] - 1) + 1) for i in range(dim)]
                res = _transposed(g, w, stride, padding, dilation, op, groups)
            gi = _result(res, dt, fmt)
        if mask[1]:
            ks = tuple(weight._size[2:])
            if transposed:
                res = _weight_grad(g, x, ks, stride, padding, dilation, groups)
            else:
                res = _weight_grad(x, g, ks, stride, padding, dilation, groups)
            shape = list(weight._size)
            if extra_weight and dim == 1:
                shape.insert(2, 1)  # left in the 2-d form the backend computed it in
            gw = _result(res.reshape(shape), dt, fmt)
    if mask[2]:
        gdt = grad_output._dtype
        gv = g if (mask[0] or mask[1]) and gdt is dt else _compute(grad_output, gdt)
        # summed in (and returned as) the gradient's own dtype, integers included
        total = gv.sum(axis=(0,) + tuple(range(2, gv.ndim)), dtype=gv.dtype)
        gb = _result(total, gdt, contiguous_format)
    return gi, gw, gb


def _result(values, dt, fmt):
    if fmt is contiguous_format and dt is _F32 and values.dtype == np.float64:
        # the float32 convolutions' rounding, into a fresh C-ordered array that is the tensor
        # (numpy's cast rounds to nearest even, as cast_array's)
        return from_result(values.astype(np.float32, order="C"), dt)
    out = empty(values.shape, dt, CPU, stride=_strides(values.shape, fmt))
    src = D.dtype_from_numpy(values.dtype)
    if src is _F64 and dt is _F32:  # numpy's cast rounds to nearest even, as cast_array's
        np.copyto(arr(out), values, casting="same_kind")
        return out
    if src is not dt:
        from ..core.cast import cast_array

        values = cast_array(values, src, dt)
    np.copyto(arr(out), values)
    return out


def _register_outs():
    from .support.out import register_autogen_out

    register_autogen_out("convolution_backward.out", convolution_backward,
                         ("out0", "out1", "out2"))


_register_outs()
