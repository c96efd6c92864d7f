"""reflection_pad{1,2,3}d_backward as kernels (upstream ReflectionPad.cpp, cpu/PaddingKernel.cpp).

Upstream zeroes the input's gradient and walks the output gradient in row-major order, adding
each element into its mirrored source in the tensor's own dtype (a float16 sum rounds after every
add). An input element receives at most three contributions per padded dim, and they arrive in
the lexicographic order of their output positions; so the kernel adds whole blocks, one per
combination of occurrence ranks (rank 0 of every dim first), which keeps that order element by
element. The channels-last variants walk the same positions per channel: the same sums.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..core import dtypes as D
from ..core.cast import BF16_SCALAR_NAN, BF16_VECTOR_NAN, cast_array
from ..core.construct import empty, from_result
from ..core.tensor import wrap_dim
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .indexing import _shape_str
from .joining import _pad_index, format_strides, suggest_format
from .nn_embed import _torch_check
from .pointwise_base import C32, COMPLEX, F16, F32, FLOAT_H, FLOATING, REDUCED, check
from .support.common import arr

_TYPES = (FLOAT_H | COMPLEX) - {C32}        # FLOATING_AND_COMPLEX_TYPES_AND2(Half, BFloat16)
_LABELS = {1: "width", 2: "height", 3: "depth"}


def _occurrences(n: int, lo: int, hi: int):
    """Per occurrence rank r: (input indices reached an r-th time, the output positions that
    reach them), output positions increasing within each input index."""
    seen: list[list[int]] = [[] for _ in range(n)]
    for j, i in enumerate(_pad_index(n, lo, hi, True)):
        seen[i].append(j)
    ranks = []
    for r in range(max(len(s) for s in seen)):
        sel = [i for i in range(n) if len(seen[i]) > r]
        ranks.append((np.array(sel, np.intp), np.array([seen[i][r] for i in sel], np.intp)))
    return ranks


def _accumulate(g: np.ndarray, dst: np.ndarray, pads, rnd=None, g_wins=None) -> None:
    """dst[..., spatial] += every element of ``g`` at its reflected source, in upstream's order
    (``rnd``: the rounding of each sum to the tensor's dtype, when ``dst`` is wider). ``pads``
    holds (lo, hi) for the trailing dims, outermost first. NaN + NaN keeps the accumulator's NaN
    except where ``g_wins`` (a channel mask) says upstream's compiled add keeps the other one."""
    k = len(pads)
    per_dim = [_occurrences(dst.shape[dst.ndim - k + d], lo, hi) for d, (lo, hi) in
               enumerate(pads)]
    for combo in itertools.product(*per_dim):
        src = (Ellipsis, *np.ix_(*[p for _, p in combo]))
        to = (Ellipsis, *np.ix_(*[s for s, _ in combo]))
        total = add_keeping_nan(dst[to], g[src], g_wins)
        dst[to] = total if rnd is None else rnd(total)


def add_keeping_nan(acc: np.ndarray, add: np.ndarray, g_wins=None) -> np.ndarray:
    """acc + add where NaN + NaN keeps ``acc``'s NaN (x86's first operand), or ``add``'s where
    ``g_wins``: numpy's loops do not say which one they keep."""
    total = acc + add
    if acc.dtype.kind == "c":  # each part sums on its own
        return total
    nan = acc != acc
    if nan.any():
        total = np.where(nan, acc, total)
        if g_wins is not None:
            total = np.where(nan & (add != add) & g_wins, add + add.dtype.type(0), total)
    return total


def _nan_order(dt, cl: bool, channels: int, spatial: int):
    """Which channels' NaN + NaN keep the incoming gradient's NaN in upstream's compiled loop
    (None: none; the accumulator's everywhere), measured per capability: the channels-last
    kernel's vector adds (and the compiler's 4-wide tail) keep the second operand's, except
    DEFAULT's: float32 vectors keep it in four of their eight lanes, float64's 3d loop nowhere,
    float16's in the low eight of sixteen."""
    default = cpu_capability.CAPABILITY == cpu_capability.DEFAULT
    c = np.arange(channels)
    if dt is F16 and cl and default:  # 16-lane vectors added as two float halves
        wins = (c < channels - channels % 16) & (c % 16 < 8)
        return wins.reshape(channels, *[1] * spatial)
    if dt not in FLOATING or not cl:
        return None
    wins = c < channels - channels % 4
    if default and spatial == 3 and dt is not F32:
        return None
    if default and dt is F32:  # the 2d and 3d loops were compiled with their lanes swapped
        vec = channels - channels % 8
        wins = np.where(c < vec, (c % 8 >= 4) == (spatial == 2), wins)
    return wins.reshape(channels, *[1] * spatial)


def _reduced_sum(g: np.ndarray, shape, pads, dt, vector_channels: int) -> np.ndarray:
    """The float16/bfloat16 gradient: each sum in float32 rounded to ``dt`` (c10's operator+=),
    stored with the NaN bits of the capability's conversions: float16 as F16C (AVX2/AVX512) or
    c10's software conversion; bfloat16 0x7FC0 (c10's scalar conversion), 0xFFFF in the channels
    a channels-last kernel adds a whole vector of (``vector_channels``)."""
    npdt = D.numpy_dtype(dt)
    dst = np.zeros(shape, np.float32)
    _accumulate(g.astype(np.float32), dst, pads, lambda v: v.astype(npdt).astype(np.float32),
                _nan_order(dt, vector_channels > 0, vector_channels, len(pads)))
    out = cast_array(dst, F32, dt)
    nan = np.isnan(dst)
    if not nan.any():
        return out
    bits = out.view(np.uint16)
    if dt is F16:
        if cpu_capability.CAPABILITY == cpu_capability.DEFAULT:
            bits[nan] = (bits[nan] & np.uint16(0x8000)) | np.uint16(0x7E00)
        return out
    bits[nan] = BF16_SCALAR_NAN
    lanes = 0 if cpu_capability.CAPABILITY == cpu_capability.DEFAULT else \
        cpu_capability.VEC_BYTES // 2
    if vector_channels and lanes:
        vec = vector_channels - vector_channels % lanes
        lane = np.zeros(shape, bool)
        lane[:, :vec] = True
        bits[nan & lane] = BF16_VECTOR_NAN
    return out


def _result(self, grad_output, pads, out_fmt: str, name: str, empty_early: bool = False):
    """The zeroed gradient of ``self`` in ``out_fmt`` with ``grad_output`` accumulated into it;
    ``name`` is the dispatch name upstream's dtype refusal carries."""
    dt = grad_output._dtype
    if empty_early and not grad_output.numel():  # 1d/3d return before dispatching
        return from_result(np.zeros(self._size, D.numpy_dtype(self._dtype)), self._dtype)
    check(name, dt, _TYPES)
    if self._dtype is not dt:  # the kernel reads the input's gradient as grad_output's type
        raise RuntimeError(f"expected scalar type {dt._cpp_name} but found "
                           f"{self._dtype._cpp_name}")
    if not (self.numel() and grad_output.numel()):
        dst = np.zeros(self._size, D.numpy_dtype(dt))
    elif dt in REDUCED:
        cl = name.endswith("channels_last")
        dst = _reduced_sum(arr(grad_output), self._size, pads, dt, self._size[1] if cl else 0)
    else:
        dst = np.zeros(self._size, D.numpy_dtype(dt))
        cl = name.endswith("channels_last")
        _accumulate(arr(grad_output), dst, pads, None,
                    _nan_order(dt, cl, self._size[1] if cl else 0, len(pads)))
    if out_fmt == "contiguous":
        return from_result(dst, dt)
    out = empty(self._size, dt, stride=format_strides(self._size, out_fmt))
    out._np[...] = dst
    return out


def _size_check(grad_output, self, padding, k: int, word: str):
    """The output-size checks, innermost dim first, as upstream words them: (lo, hi) per dim."""
    nd = self.dim()
    first = 2 if nd == k + 2 else 1
    dims = [first + d for d in range(k)]          # outermost spatial dim first
    pads = [(padding[2 * (k - 1 - d)], padding[2 * (k - 1 - d) + 1]) for d in range(k)]
    sizes = [self._size[wrap_dim(d, nd)] for d in dims]  # read outermost first, as upstream
    for d in reversed(range(k)):
        want = sizes[d] + pads[d][0] + pads[d][1]
        got = grad_output._size[wrap_dim(dims[d], grad_output.dim())]
        if want != got:
            raise RuntimeError(f"{word} {_LABELS[k - d]} unexpected. Expected: {want}, "
                               f"Got: {got}")
    return pads


def _channels_last(name: str, fmt: str) -> str:
    return name if fmt == "contiguous" else f"{name}_channels_last"


@kernel("reflection_pad1d_backward")
def reflection_pad1d_backward(grad_output, self, padding):
    padding = [int(p) for p in padding]
    nd = self.dim()
    dim_w = 2 if nd == 3 else 1
    lo, hi = padding[0], padding[1]
    n = self._size[wrap_dim(dim_w, nd)]
    if not (lo < n and hi < n):
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                           f"{dim_w} of input {_shape_str(self._size)}")
    pads = _size_check(grad_output, self, padding, 1, "grad_output")
    return _result(self, grad_output, pads, "contiguous", "reflection_pad1d_backward", True)


@kernel("reflection_pad2d_backward")
def reflection_pad2d_backward(grad_output, self, padding):
    padding = [int(p) for p in padding]
    pads = _size_check(grad_output, self, padding, 2, "gradOutput")
    name = _channels_last("reflection_pad2d_backward", suggest_format(grad_output))
    return _result(self, grad_output, pads, suggest_format(self), name)


@kernel("reflection_pad3d_backward")
def reflection_pad3d_backward(grad_output, self, padding):
    padding = [int(p) for p in padding]
    if len(padding) != 6:
        raise RuntimeError(f"padding size is expected to be 6, but got: {len(padding)}")
    if self.dim() <= 3:
        raise _torch_check("input.dim() > 3")
    if grad_output.dim() != self.dim():
        raise _torch_check("grad_output.dim() == input.dim()")
    pads = _size_check(grad_output, self, padding, 3, "grad_output")
    g_fmt = "contiguous" if grad_output.dim() == 4 else suggest_format(grad_output)
    name = _channels_last("reflection_pad3d_backward", g_fmt)
    return _result(self, grad_output, pads, suggest_format(self), name, True)
