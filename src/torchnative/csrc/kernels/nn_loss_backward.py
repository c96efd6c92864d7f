"""The negative log-likelihood's backward kernels (LossNLL.cpp, LossNLL2d.cpp):
nll_loss_backward and nll_loss2d_backward.

The gradient is zero except at each item's target class, which gets ``-weight[t] * grad_output``
(reduction none) or ``weight[t] * -(grad_output / total_weight)`` (mean; sum without the
division). Each product is one scalar_t operation, so float16/bfloat16 round after each step as
upstream's arithmetic does; ignored items keep an exact +0 (a product with zero would give -0 or
NaN).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .nn_loss import (_FLOATS, _NATIVE, _REDUCED, _check_target_dtype, _rounded, _vals,
                      MEAN, NONE, check_nll2d_inputs, check_nll_shapes, every_target_kept)
from .support.common import arr, int_list, wrap
from .support.nn_util import not_implemented
from ..ops.kernel_registry import kernel


def _dtypes(self, target, frame, grad_output, weight, total_weight):
    """(the input's dtype, the numpy dtype the kernel computes in), after AT_DISPATCH's and the
    accessors' dtype checks."""
    _check_target_dtype(target)
    dt = self._dtype
    if dt not in _FLOATS:
        raise not_implemented(frame, dt)
    for t in (grad_output, weight, total_weight):
        if t is not None and t._dtype is not dt:
            raise RuntimeError(f"expected scalar type {dt._cpp_name} but found "
                               f"{t._dtype._cpp_name}")
    return dt, (np.float32 if dt in _REDUCED else D.numpy_dtype(dt))


def _targets(target, ignore_index, n_classes):
    """(flat int64 targets, mask of the items not ignored); out-of-range targets refused."""
    t = arr(target).reshape(-1).astype(np.int64, copy=False)
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(t[np.argmax(bad)])} is out of bounds.")
    return t, keep


def _scaled(grad_output, total_weight, reduction, dt, acc):
    """-(grad_output / total_weight) (mean) or -grad_output, one scalar_t division. For
    float32/float64 a Python float (a nonzero total weight): a float64 quotient of two float32
    values rounds to float32's own quotient (53 >= 2 * 24 + 2 bits), as storing it into the
    float32 gradient, or numpy's cast of it for a product with float32 weights, does."""
    if dt in _NATIVE:
        g = float(arr(grad_output).reshape(-1)[0])
        if reduction != MEAN:
            return -g
        w = float(arr(total_weight).reshape(-1)[0])
        if w != 0:
            return -(g / w)
    g = np.asarray(_vals(grad_output).reshape(-1)[0], acc)
    if reduction == MEAN:
        with np.errstate(divide="ignore", invalid="ignore"):
            g = _rounded(np.asarray(g / np.asarray(_vals(total_weight).reshape(-1)[0], acc)),
                         dt)
    return -g


def _per_item(grad_output, items, w, safe, dt, acc):
    """Reduction none: -weight[t] * grad_output per item, one scalar_t product."""
    go = _vals(grad_output).astype(acc, copy=False).reshape(-1)[items]
    neg_w = -w[safe] if w is not None else np.asarray(-1, acc)
    return _rounded((neg_w * go).astype(acc, copy=False), dt)


def _at_targets(value, w, safe, dt, weighted):
    """weight[t] * value per item (value broadcast), rounded as one scalar_t product."""
    if not weighted:
        return value
    return _rounded((w[safe] * value).astype(w.dtype, copy=False), dt)


@kernel("nll_loss_backward")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    check_nll_shapes(self, target)
    if total_weight.numel() != 1:
        raise RuntimeError(f"expected total_weight to be a  single element tensor, got: "
                           f"{int_list(total_weight._size)} ({total_weight.numel()} elements)")
    n_classes = self._size[-1]
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    per_item = reduction == NONE and len(self._size) == 2
    if per_item:
        if grad_output.dim() != 1 or grad_output._size[0] != self._size[0]:
            got = grad_output._size[0] if grad_output.dim() else 1
            raise RuntimeError(f"Expected a tensor of dimension 1 and tensor.size[0] == "
                               f"{self._size[0]} but got: dimension {grad_output.dim()} and "
                               f"tensor.size[0] = {got}")
    elif not (grad_output.dim() <= 1 and grad_output.numel() == 1):
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: "
                           f"{int_list(grad_output._size)}")
    dt, acc = _dtypes(self, target, "nll_loss_backward_out_frame", grad_output, weight, total_weight)
    batch = 1 if len(self._size) == 1 else self._size[0]
    gi = np.zeros((batch, n_classes), acc)
    if weight is None and not per_item:
        t = arr(target).reshape(-1)
        if t.size == batch and batch and every_target_kept(t, ignore_index, n_classes):
            # every item kept, unit weights: each target class gets the scaled gradient itself
            gi[np.arange(t.size), t] = _scaled(grad_output, total_weight, reduction, dt, acc)
            return wrap(gi.reshape(self._size), dt)
    t, keep = _targets(target, ignore_index, n_classes)
    rows = np.nonzero(keep)[0]
    safe = t[keep]
    w = _vals(weight).astype(acc, copy=False) if weight is not None else None
    if per_item:
        gi[rows, safe] = _per_item(grad_output, rows, w, safe, dt, acc)
    else:
        g = _scaled(grad_output, total_weight, reduction, dt, acc)
        gi[rows, safe] = _at_targets(g, w, safe, dt, w is not None)
    return wrap(gi.reshape(self._size), dt)


@kernel("nll_loss2d_backward")
def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index,
                        total_weight):
    check_nll2d_inputs(self, target, weight)
    n, c, h, w_ = self._size
    if not self.is_contiguous() and self._non_overlapping_and_dense():
        # zeros_like keeps such a layout, and the kernel writes a contiguous buffer
        raise RuntimeError("grad_input must be contiguous")
    if total_weight.numel() != 1:
        raise RuntimeError(f"expected total_weight to be a single element tensor, got: "
                           f"{int_list(total_weight._size)} ({total_weight.numel()} elements)")
    dt, acc = _dtypes(self, target, "nll_loss2d_backward_out_frame", grad_output, weight, total_weight)
    gi = np.zeros((n * h * w_, c), acc)  # channels last while filling, moved to NCHW below
    w = _vals(weight).astype(acc, copy=False) if weight is not None else None
    if reduction == NONE:
        if grad_output.dim() != 3:
            raise RuntimeError("grad_output must have same dimension as target (3) but got "
                               f"dimension: {int_list(grad_output._size)}")
        if tuple(grad_output._size) != tuple(target._size):
            raise RuntimeError(f"size mismatch (got grad_output: {int_list(grad_output._size)} "
                               f"target: {int_list(target._size)}")
    elif not (grad_output.dim() <= 1 and grad_output.numel() == 1):
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: "
                           f"{int_list(grad_output._size)}")
    t, keep = _targets(target, ignore_index, c)
    items = np.nonzero(keep)[0]
    safe = t[keep]
    if reduction == NONE:
        gi[items, safe] = _per_item(grad_output, items, w, safe, dt, acc)
    else:
        g = _scaled(grad_output, total_weight, reduction, dt, acc)
        gi[items, safe] = _at_targets(g, w, safe, dt, w is not None)
    out = np.ascontiguousarray(np.moveaxis(gi.reshape(n, h, w_, c), -1, 1))
    return wrap(out, dt)
