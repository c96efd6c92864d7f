"""Fractional max pooling (FractionalMaxPool2d.cpp, FractionalMaxPool3d.cpp):
fractional_max_pool2d/3d and their backward kernels.

Each plane's windows start where upstream's generate_intervals puts them, from that plane's
random samples (drawn by the Python caller from the bit-exact generator; sample 0 for the last
dimension in 2-d, for the first in 3-d, as upstream reads them): start[i] = int((i + u) * alpha)
- int(u * alpha) with alpha = (in - pool) / (out - 1), computed in the input's dtype, and the last
window ends at the border. The maximum keeps the first largest value and lets NaN win (the last
NaN), as upstream's ``val > max || isnan(val)`` scan does; indices are flat within the plane.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .support.common import arr, int_list, wrap
from ..ops.kernel_registry import kernel

_LONG = D.BY_NAME["int64"]
_DTYPES = frozenset(D.BY_NAME[n] for n in ("float32", "float64", "bfloat16", "float16"))


def _intervals(samples: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """(planes,) samples -> (planes, out) window starts, in the samples' dtype arithmetic."""
    st = samples.dtype.type
    seq = np.zeros((samples.shape[0], out), np.int64)
    if out > 1:
        alpha = st(size - pool) / st(out - 1)
        i = np.arange(out - 1).astype(samples.dtype)
        seq[:, :-1] = ((i[None, :] + samples[:, None]) * alpha).astype(np.int64) - \
            (samples * alpha).astype(np.int64)[:, None]
    if out > 0:
        seq[:, -1] = size - pool
    return seq

def _check_samples(input, samples, nd):
    if input._dtype is not samples._dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    n, c, d = samples._size
    batched = input.dim() == nd + 2
    batch = input._size[0] if batched else 1
    channels = input._size[1] if batched else input._size[0]
    if n < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if c != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if d != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {d}.")


def _check(name, input, pool, output, nd, samples):
    _check_samples(input, samples, nd)
    if len(pool) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of "
                           f"{'Ints' if nd == 2 else 'three Ints'}")
    if len(output) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of "
                           f"{'Ints' if nd == 2 else 'three Ints'}")
    dims = input.dim()
    if dims not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{int_list(input._size)}")
    for i in range(1, dims):
        if input._size[i] <= 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{int_list(input._size)} with dimension {i} "
                               "being empty.")
    names = ("time", "height", "width")[3 - nd:]
    for o, k, s, what in zip(output, pool, input._size[-nd:], names):
        if o + k - 1 > s:
            raise RuntimeError(f"{name}(): pool {what} {k} too large relative to input {what} {s}")
    if input._dtype not in _DTYPES:
        raise NotImplementedError(f"\"{name}_out_frame\" not implemented for "
                                  f"'{input._dtype._cpp_name}'")

def _pool(name, input, kernel_size, output_size, random_samples, nd):
    pool, output = [int(v) for v in kernel_size], [int(v) for v in output_size]
    _check(name, input, pool, output, nd, random_samples)
    x = arr(input)
    lead = x.shape[:-nd]
    spatial = x.shape[-nd:]
    planes = int(np.prod(lead))
    shape = lead + tuple(output)
    if planes == 0 or 0 in output:  # an empty batch computes nothing (numpy cannot infer -1)
        return (wrap(np.empty(shape, x.dtype), input._dtype),
                wrap(np.empty(shape, np.int64), _LONG))
    flat = x.reshape(planes, -1)
    # plane p reads samples [p * nd, (p + 1) * nd) of the flat buffer, whatever its shape (as
    # upstream's kernel indexes it)
    u = np.ascontiguousarray(arr(random_samples)).reshape(-1)[:planes * nd].reshape(planes, nd)
    # 2-d reads sample 0 for the width and 1 for the height; 3-d reads them in dimension order
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_intervals(np.ascontiguousarray(u[:, order[d]]), spatial[d], output[d], pool[d])
              for d in range(nd)]
    strides = [int(np.prod(spatial[d + 1:])) for d in range(nd)]
    # flat index of every window element: (planes, *output, *pool), scanned in upstream's order
    idx = np.zeros((planes,) + tuple(output) + tuple(pool), np.int64)
    for d in range(nd):
        s = starts[d].reshape((planes,) + tuple(output[d] if e == d else 1 for e in range(nd)) +
                              (1,) * nd)
        k = np.arange(pool[d]).reshape((1,) * (nd + 1) + tuple(pool[d] if e == d else 1
                                                                for e in range(nd)))
        idx = idx + (s + k) * strides[d]
    window = idx.reshape(planes, -1, int(np.prod(pool)))
    vals = np.take_along_axis(flat, window.reshape(planes, -1), axis=1).reshape(window.shape)
    nan = np.isnan(vals)
    last_nan = window.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
    pick = np.where(nan.any(axis=-1), last_nan, np.argmax(np.where(nan, -np.inf, vals), axis=-1))
    best = np.take_along_axis(window, pick[..., None], axis=-1)[..., 0]
    out = np.take_along_axis(flat, best, axis=1)
    return wrap(out.reshape(shape), input._dtype), wrap(best.reshape(shape), _LONG)

def _unpool(grad_output, input, indices, nd):
    lead = tuple(input._size[:-nd])
    planes = int(np.prod(lead))
    plane = int(np.prod(input._size[-nd:]))
    g = arr(grad_output).reshape(planes, int(np.prod(grad_output._size[-nd:])))
    grad = np.zeros((planes, plane), g.dtype)
    rows = np.broadcast_to(np.arange(planes)[:, None], g.shape)
    np.add.at(grad, (rows, arr(indices).reshape(g.shape)), g)
    return wrap(grad.reshape(tuple(input._size)), input._dtype)

@kernel("fractional_max_pool2d")
def fractional_max_pool2d(self, kernel_size, output_size, random_samples):
    return _pool("fractional_max_pool2d", self, kernel_size, output_size, random_samples, 2)

@kernel("fractional_max_pool3d")
def fractional_max_pool3d(self, kernel_size, output_size, random_samples):
    return _pool("fractional_max_pool3d", self, kernel_size, output_size, random_samples, 3)

@kernel("fractional_max_pool2d_backward")
def fractional_max_pool2d_backward(grad_output, self, kernel_size, output_size, indices):
    return _unpool(grad_output, self, indices, 2)

@kernel("fractional_max_pool3d_backward")
def fractional_max_pool3d_backward(grad_output, self, kernel_size, output_size, indices):
    return _unpool(grad_output, self, indices, 3)

