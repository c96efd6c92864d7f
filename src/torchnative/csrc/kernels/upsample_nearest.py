"""Nearest-neighbour interpolation and its gradient (``F.interpolate(mode="nearest" /
"nearest-exact")``): upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d, their ``.vec``
composites and the six backwards, as UpSampleKernel.cpp / UpSampleMoreKernel.cpp compute them.

Every output element copies one input element, so only the source indices matter, and upstream
has two rules for them, one per forward kernel:

* the channels-last kernel and every backward use UpSample.h's nearest_idx: equal sizes copy,
  an output exactly twice the input takes ``i >> 1`` (whatever the scale), else
  ``floorf(float(i) * scale)`` with the scale in float (1/scale_factor when one is given, else
  in/out); the exact variant floors ``(i + 0.5) * scale`` computed in double, rounded to float;
* the generic (TensorIterator) kernel computes the scale and ``scale * i`` (exact: ``scale *
  (i + 0.5) - 0.5``, clamped at 0, plus 0.5) in the opmath type -- double for float64 -- with
  no shortcut, and floors through float.

2-d takes the channels-last kernel when the input is channels-last contiguous with more than 3
channels or when out_h + out_w <= 128; 3-d only for a channels-last input with more than 3
channels; 1-d never. Both clamp to size - 1.

The backward zeroes the input's gradient and adds every output gradient into its source in
output row-major order (per channel; the channels-last kernel per batch, a channel vector at a
time: the same order for each element), float16/bfloat16 in a float32 buffer rounded once at
the end. Source indices are monotonic, so each input element's terms are a run per dimension,
and the k-th terms of every run can be added at once.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..core import dtypes as D
from ..core.cast import BF16_SCALAR_NAN, BF16_VECTOR_NAN, cast_array
from ..core.construct import empty, from_result
from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .joining import format_strides, suggest_format
from .nn_pad_backward import add_keeping_nan
from .pointwise_base import F16, F32, F64, FLOAT_H, REDUCED, U8, check
from .support.common import arr, int_list
from .upsample_aa import check_grad_output
from .upsample_vec import _output_size

_FORWARD_TYPES = FLOAT_H | {U8}  # FLOATING_TYPES_AND3(Byte, BFloat16, Half)
_AXES = ("D", "H", "W")
_RANK_BLOCKS = 64  # rank combinations added block by block; beyond, one ordered scatter


def _sizes_check(k: int, input_size, output_size) -> tuple:
    """upsample_{k}d_common_check: the full output size."""
    if len(output_size) != k:
        raise RuntimeError(f"It is expected output_size equals to {k}, but got size "
                           f"{len(output_size)}")
    if len(input_size) != k + 2:
        raise RuntimeError(f"It is expected input_size equals to {k + 2}, but got size "
                           f"{len(input_size)}")
    spatial = [int(s) for s in input_size[2:]]
    out = [int(s) for s in output_size]
    if min(spatial + out) <= 0:
        labels = _AXES[3 - k:]
        got_in = ", ".join(f"{a}: {s}" for a, s in zip(labels, spatial))
        got_out = ", ".join(f"{a}: {s}" for a, s in zip(labels, out))
        joint = ") and output (" if k == 1 else ") output ("
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({got_in}{joint}{got_out})")
    return (int(input_size[0]), int(input_size[1]), *out)


def _cl_contiguous(t) -> bool:
    """is_contiguous(ChannelsLast/ChannelsLast3d) as c10 computes it: dense channels-last
    strides over the dims of size other than 1 (an empty tensor is not exempt)."""
    if t.dim() not in (4, 5):
        return False
    expected = 1
    for d in (1, *range(t.dim() - 1, 1, -1), 0):
        if t._size[d] != 1:
            if t._stride[d] != expected:
                return False
            expected *= t._size[d]
    return True


def _scale(in_size: int, out_size: int, scale, T):
    """compute_scales_value<T>: 1/scale when one is given (and positive), else in/out in T."""
    if scale is not None and scale > 0:
        return T(1.0 / scale)
    return T(in_size) / T(out_size)


def _nearest_idx(in_size: int, out_size: int, scale, exact: bool) -> np.ndarray:
    """UpSample.h's nearest_idx / nearest_exact_idx (the channels-last kernel, the backward)."""
    i = np.arange(out_size, dtype=np.int64)
    if exact:
        s = float(_scale(in_size, out_size, scale, np.float32))
        src = ((i + 0.5) * s).astype(np.float32)
    elif out_size == in_size:
        return i
    elif out_size == 2 * in_size:
        return i >> 1
    else:
        src = i.astype(np.float32) * _scale(in_size, out_size, scale, np.float32)
    return np.minimum(np.floor(src).astype(np.int64), in_size - 1)


def _generic_idx(in_size: int, out_size: int, scale, exact: bool, T) -> np.ndarray:
    """HelperInterpNearest(Exact)::compute_indices_weights: the generic kernel's indices, in
    the opmath type T (float64 for double tensors, else float32)."""
    s = _scale(in_size, out_size, scale, T)
    i = np.arange(out_size, dtype=np.int64).astype(T)
    if exact:  # area_pixel_compute_source_index: s * (i + 0.5) - 0.5, clamped at 0
        src = (s * (i + T(0.5))).astype(T) - T(0.5)
        src = np.where(src < 0, T(0), src)
        src = (src.astype(np.float64) + 0.5).astype(np.float32)
    else:
        src = (s * i).astype(T).astype(np.float32)
    return np.minimum(np.floor(src).astype(np.int64), in_size - 1)


def _forward(k: int, exact: bool, self, output_size, scales):
    full = _sizes_check(k, self._size, output_size)
    if self.numel() == 0 and int(np.prod(self._size[1:])) == 0:
        raise RuntimeError(f"Non-empty {k + 2}D data tensor expected but got a tensor with "
                           f"sizes {int_list(self._size)}")
    c = self._size[1]
    if k == 2:
        cl_kernel = (_cl_contiguous(self) and c > 3) or sum(full[2:]) <= 128
    else:
        cl_kernel = k == 3 and _cl_contiguous(self) and c > 3
    check(f"upsample_nearest{k}d_channels_last" if cl_kernel else
          "compute_indices_weights_nearest", self._dtype, _FORWARD_TYPES)
    fmt = "contiguous" if k == 1 else suggest_format(self)
    if int(np.prod(full)) == 0:
        return empty(full, self._dtype, stride=format_strides(full, fmt))
    spatial = self._size[2:]
    if cl_kernel:
        idx = [_nearest_idx(spatial[d], full[2 + d], scales[d], exact) for d in range(k)]
    else:
        T = np.float64 if self._dtype is F64 else np.float32
        idx = [_generic_idx(spatial[d], full[2 + d], scales[d], exact, T) for d in range(k)]
    values = arr(self)
    for d, ix in enumerate(idx):  # one gather per dimension (numpy's take beats a joint index)
        values = values.take(ix, axis=2 + d)
    if fmt == "contiguous":
        return from_result(np.ascontiguousarray(values), self._dtype)
    out = empty(full, self._dtype, stride=format_strides(full, fmt))
    out._np[...] = values
    return out


def _runs(idx: np.ndarray, in_size: int):
    """(first output index, count) of the run of outputs reading each input index."""
    lo = np.searchsorted(idx, np.arange(in_size), "left")
    hi = np.searchsorted(idx, np.arange(in_size), "right")
    return lo, hi - lo


def _accumulate(g: np.ndarray, acc: np.ndarray, idx: list) -> None:
    """acc[..., idx] += g, each input element's terms in output row-major order; NaN + NaN
    keeps the accumulator's NaN (the scalar loop's first operand)."""
    k = len(idx)
    runs = [_runs(ix, acc.shape[acc.ndim - k + d]) for d, ix in enumerate(idx)]
    ranks = [int(n.max()) for _, n in runs]
    if int(np.prod(ranks)) > _RANK_BLOCKS:  # many terms per element: an ordered scatter
        lead = acc.reshape(-1, *acc.shape[acc.ndim - k:])
        np.add.at(lead, (slice(None), *np.ix_(*idx)), g.reshape(lead.shape[0], *g.shape[-k:]))
        return
    if all(int(n.min()) == r for (_, n), r in zip(runs, ranks)):
        # every element has r terms (an integer factor): the k-th terms are a strided view
        for combo in itertools.product(*(range(r) for r in ranks)):
            view = g[(Ellipsis, *(slice(a, None, r) for a, r in zip(combo, ranks)))]
            acc[...] = add_keeping_nan(acc, view)
        return
    for combo in itertools.product(*(range(r) for r in ranks)):
        take = [np.minimum(lo + r, len(ix) - 1) for r, (lo, _), ix in zip(combo, runs, idx)]
        have = np.ones((), bool)
        for d, (r, (_, n)) in enumerate(zip(combo, runs)):
            have = have[..., None] & (n > r) if d else (n > r)
        term = g[(Ellipsis, *np.ix_(*take))]
        acc[...] = np.where(have, add_keeping_nan(acc, term), acc)


def _settle_reduced(buf: np.ndarray, dt, slice_size: int) -> np.ndarray:
    """The float32 buffer rounded to ``dt`` (apply_grad_input), NaNs stored as its loop stores
    them: vector conversions on the first multiple of a vector of each slice (``slice_size``
    elements in memory order), c10's scalar one on the rest; DEFAULT converts one by one."""
    out = cast_array(buf, F32, dt)
    nan = np.isnan(buf)
    if not nan.any():
        return out
    bits = out.view(np.uint16)
    default = cpu_capability.CAPABILITY == cpu_capability.DEFAULT
    if dt is F16:
        if default:  # c10's software conversion: a quiet NaN of the same sign
            bits[nan] = (bits[nan] & np.uint16(0x8000)) | np.uint16(0x7E00)
        return out
    bits[nan] = BF16_SCALAR_NAN
    if not default:
        lanes = 16  # measured: 16 under AVX512 as under AVX2
        pos = np.arange(buf.size).reshape(buf.shape) % slice_size
        bits[nan & (pos < slice_size - slice_size % lanes)] = BF16_VECTOR_NAN
    return out


def _backward(k: int, exact: bool, name: str, grad_output, output_size, input_size, scales):
    full = _sizes_check(k, input_size, output_size)
    gsize = grad_output._size
    if k == 1:
        for i in range(3):  # check_dim_size
            if len(gsize) != 3 or gsize[i] != full[i]:
                raise RuntimeError(f"Expected a tensor of dimension 3 and tensor.size[{i}] == "
                                   f"{full[i]} but got: dimension {len(gsize)} and "
                                   f"tensor.size[{i}] = {gsize[i]}")
    else:
        if len(gsize) != k + 2:
            raise RuntimeError(f"Expected grad_output to be a tensor of dimension {k + 2} but "
                               f"got: dimension {len(gsize)}")
        check_grad_output(grad_output, full[:k + 2])
    dt = grad_output._dtype
    cl_kernel = k > 1 and _cl_contiguous(grad_output)
    if cl_kernel:
        name = (name if k == 2 or exact else "_" + name) + "_cl"
    check(name, dt, FLOAT_H)
    isize = tuple(int(s) for s in input_size)
    fmt = suggest_format(grad_output) if k == 2 else "contiguous"  # only 2-d's meta keeps it
    out = empty(isize, dt, stride=format_strides(isize, fmt))
    if out.numel() == 0:
        return out
    idx = [_nearest_idx(isize[2 + d], full[2 + d], scales[d], exact) for d in range(k)]
    g = arr(grad_output)
    if dt in REDUCED:
        acc = np.zeros(isize, np.float32)
        _accumulate(g.astype(np.float32), acc, idx)
        if cl_kernel:  # converted per batch in channels-last memory order
            order = (0, *range(2, k + 2), 1)
            settled = _settle_reduced(np.ascontiguousarray(acc.transpose(order)), dt,
                                      int(np.prod(isize[1:])))
            acc = settled.transpose(np.argsort(order))
        else:
            acc = _settle_reduced(acc, dt, int(np.prod(isize[2:])))
    else:
        acc = np.zeros(isize, D.numpy_dtype(dt))
        _accumulate(g, acc, idx)
    out._np[...] = acc
    return out


def _register(k: int, exact: bool):
    base = f"_upsample_nearest_exact{k}d" if exact else f"upsample_nearest{k}d"
    back = f"{base}_backward"

    @kernel(base)
    def forward(self, output_size, *scales):
        return _forward(k, exact, self, output_size, scales + (None,) * (k - len(scales)))

    @kernel(back)
    def backward(grad_output, output_size, input_size, *scales):
        return _backward(k, exact, back, grad_output, output_size, input_size,
                         scales + (None,) * (k - len(scales)))

    @kernel(f"{base}.vec", composite=True)
    def vec(input, output_size, scale_factors):
        osize = _output_size(tuple(input.shape), output_size, scale_factors)
        scales = list(scale_factors) if scale_factors is not None else [None] * k
        return call(base, input, osize, *scales)

    forward.__name__, backward.__name__, vec.__name__ = base, back, f"{base}_vec"


for _k in (1, 2, 3):
    _register(_k, False)
    _register(_k, True)
