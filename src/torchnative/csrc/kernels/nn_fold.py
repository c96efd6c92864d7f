"""im2col (F.unfold) and col2im (F.fold) as kernels (upstream Im2Col.cpp, Col2Im.cpp, im2col.h,
im2col_shape_check.h).

im2col copies: one strided window of the zero-padded image per kernel offset. col2im sums the
patches back in the order of upstream's loop: kernel offsets row-major, each offset adding one
block (a pixel is reached at most once per offset), in the tensor's dtype. Both loops are
compiled once, outside the per-capability kernels, so their NaN bits do not move with the CPU
capability: c10's software conversions (bfloat16 0x7FC0, float16 sign | 0x7E00).
"""

from __future__ import annotations

import numpy as np

from ..core.construct import from_result
from ..core.tensor import wrap_dim
from ..ops.kernel_registry import kernel
from .nn_pad_backward import add_keeping_nan
from .pointwise_base import BF16, BOOL, C32, COMPLEX, F16, FLOAT_H, check
from .support.common import arr

_TYPES = (FLOAT_H | COMPLEX | {BOOL}) - {C32}  # FLOATING_AND_COMPLEX_TYPES_AND3(BF16, Half, Bool)


def _pairs(names, *lists):
    out = []
    for name, v in zip(names, lists):
        v = [int(e) for e in v]
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        out.append(v)
    return out


def _positive(what: str, label: str, hw, strict: bool = True):
    h, w = hw
    if (h > 0 and w > 0) if strict else (h >= 0 and w >= 0):
        return
    raise RuntimeError(f"{what}, but got {label}_height: {h} {label}_width: {w}")


def _blocks(size: int, k: int, d: int, p: int, s: int) -> int:
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1  # div_rtn: floor division


def _params(k, d, p, s) -> str:
    return (f"kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
            f"padding=({p[0]}, {p[1]})")


def _window(i: int, d: int, s: int, n: int) -> slice:
    """The positions kernel offset ``i`` reads in the padded image, one per block."""
    start = i * d
    return slice(start, start + (n - 1) * s + 1, s)


@kernel("im2col")
def im2col(self, kernel_size, dilation, padding, stride):
    k, d, p, s = _pairs(("kernel_size", "dilation", "padding", "stride"),
                        kernel_size, dilation, padding, stride)
    _positive("kernel size should be greater than zero", "kernel", k)
    _positive("dilation should be greater than zero", "dilation", d)
    _positive("padding should be non-negative", "pad", p, strict=False)
    _positive("stride should be greater than zero", "stride", s)
    nd, size = self.dim(), self._size
    valid = size[wrap_dim(1, nd)] != 0 and size[wrap_dim(2, nd)] != 0
    if not ((nd == 3 and size[0] and valid) or (nd == 4 and valid and size[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           "other non-zero dimensions for input, but got: "
                           f"{list(size)}")
    h, w = size[-2:]
    oh, ow = (_blocks(n, k[i], d[i], p[i], s[i]) for i, n in enumerate((h, w)))
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), {_params(k, d, p, s)}, "
                           f"calculated shape of the array of sliding blocks as ({oh}, {ow}), "
                           "but its components must be at least one.")
    dt = self._dtype
    check("im2col_out_cpu", dt, _TYPES)
    a = arr(self)
    a = a if nd == 4 else a[None]
    padded = np.zeros(a.shape[:2] + (h + 2 * p[0], w + 2 * p[1]), a.dtype)
    padded[..., p[0]:p[0] + h, p[1]:p[1] + w] = a
    out = np.empty(a.shape[:2] + (k[0], k[1], oh, ow), a.dtype)
    for i in range(k[0]):
        rows = _window(i, d[0], s[0], oh)
        for j in range(k[1]):
            out[:, :, i, j] = padded[:, :, rows, _window(j, d[1], s[1], ow)]
    out = out.reshape(a.shape[0], a.shape[1] * k[0] * k[1], oh * ow)
    return from_result(out if nd == 4 else out[0], dt)


@kernel("col2im")
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    o, k, d, p, s = _pairs(("output_size", "kernel_size", "dilation", "padding", "stride"),
                           output_size, kernel_size, dilation, padding, stride)
    _positive("kernel size should be greater than zero", "kernel", k)
    _positive("stride should be greater than zero", "stride", s)
    _positive("dilation should be greater than zero", "dilation", d)
    _positive("padding should be non-negative", "pad", p, strict=False)
    nd, size = self.dim(), self._size
    if not ((nd == 2 and size[0] != 0 and size[1] != 0) or
            (nd == 3 and size[1] != 0 and size[2] != 0)):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {list(size)}")
    planes, length = size[-2:]
    if planes % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={planes} and "
                           f"kernel_size=({k[0]}, {k[1]}).")
    bh, bw = (_blocks(o[i], k[i], d[i], p[i], s[i]) for i in range(2))
    given = f"Given output_size=({o[0]}, {o[1]}), {_params(k, d, p, s)}, " \
            f"stride=({s[0]}, {s[1]}), "
    if length != bh * bw:
        raise RuntimeError(f"{given}expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
                           f"input.size(2)={length}.")
    if bh < 1 or bw < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as "
                           f"({bh}, {bw}), which is too small (non-positive)")
    if o[0] < 1 or o[1] < 1:
        raise RuntimeError("Expected output spatial size to be positive, but got: "
                           f"output_size=({o[0]}, {o[1]}).")
    dt = self._dtype
    check("col2im_out_cpu", dt, _TYPES)
    a = arr(self)
    a = a if nd == 3 else a[None]
    c = planes // (k[0] * k[1])
    cols = a.reshape(a.shape[0], c, k[0], k[1], bh, bw)
    # the padded image: what falls in the padding is dropped, as upstream's bounds test drops it
    acc = np.zeros((a.shape[0], c, o[0] + 2 * p[0], o[1] + 2 * p[1]), a.dtype)
    for i in range(k[0]):
        rows = _window(i, d[0], s[0], bh)
        for j in range(k[1]):
            to = (Ellipsis, rows, _window(j, d[1], s[1], bw))
            acc[to] = add_keeping_nan(acc[to], cols[:, :, i, j])
    out = np.ascontiguousarray(acc[..., p[0]:p[0] + o[0], p[1]:p[1] + o[1]])
    if dt is BF16 or dt is F16:
        bits = out.view(np.uint16)
        nan = out != out
        bits[nan] = 0x7FC0 if dt is BF16 else (bits[nan] & 0x8000) | 0x7E00
    return from_result(out if nd == 3 else out[0], dt)
