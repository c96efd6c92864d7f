"""multilabel_margin_loss (LossMultiLabelMargin.cpp): the forward returning (loss, is_target),
its backward, and the CompositeImplicitAutograd multilabel_margin_loss.

Each row's targets are the prefix of its target row before the first -1; every (target j,
non-target i) pair adds max(0, 1 - x[j] + x[i]) (computed in the input's dtype), and a row's sum
is divided by the number of classes. As upstream: reduced losses sum in double and round once;
the unreduced loss rounds each row's double sum to the dtype before the division; a 0-/1-D input
gives a 0-dim loss even unreduced.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .support.common import arr, int_list, wrap
from ..dispatch.call import call
from .support.nn_util import not_implemented
from ..ops.kernel_registry import kernel

_B = D.BY_NAME
_FLOATS = (_B["float32"], _B["float64"])
NONE, MEAN = 0, 1


def _frames(input, target):
    nd = input.dim()
    s = input._size
    valid = (nd == 2 and s[1] != 0) or (nd == 1 and s[0] != 0) or nd == 0
    if not valid:
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {int_list(s)}")
    if nd <= 1:
        n, c = 1, (1 if nd == 0 else s[0])
        ok = target.dim() <= 1 and target.numel() == c
    else:
        n, c = s
        ok = target.dim() == 2 and tuple(target._size) == (n, c)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {int_list(target._size)} for input of "
                           f"size: {int_list(s)}")
    return n, c


def _pairs(input, target, n, c):
    """(x, is_target, active): active[r, k, i] when target k of row r, against class i, counts."""
    if input._dtype not in _FLOATS:
        raise not_implemented("multilabel_margin_loss_forward_out_frame", input._dtype)
    x = arr(input).reshape(n, c)
    t = arr(target).reshape(n, c)
    if t.size and (t.min() < -1 or t.max() >= c):
        raise RuntimeError("argument #2 'target' is out of range")
    used = np.cumprod(t >= 0, axis=1).astype(bool)  # the prefix before the first -1
    is_target = np.zeros((n, c), x.dtype)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, c))
    is_target[rows[used], t[used]] = 1
    xt = np.take_along_axis(x, np.where(used, t, 0), axis=1)  # x[target k]
    z = (x.dtype.type(1) - xt)[:, :, None] + x[:, None, :]
    active = used[:, :, None] & (is_target[:, None, :] == 0) & (z > 0)
    return x, is_target, z, active


@kernel("multilabel_margin_loss_forward")
def multilabel_margin_loss_forward(self, target, reduction):
    n, c = _frames(self, target)
    dt = self._dtype
    x, is_target, z, active = _pairs(self, target, n, c)
    rows = np.where(active, z, 0).astype(np.float64).sum(axis=(1, 2))
    if reduction != NONE or target.dim() <= 1:
        total = rows.sum() / c
        if reduction == MEAN:
            total = total / n
        out = np.asarray(total).astype(x.dtype)
    else:
        out = rows.astype(x.dtype) / x.dtype.type(c)
    return wrap(out, dt), wrap(is_target.reshape(tuple(target._size)), dt)


@kernel("multilabel_margin_loss_backward")
def multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target):
    n, c = _frames(self, target)
    if tuple(is_target._size) != tuple(target._size):
        raise RuntimeError(f"Expected tensor for argument #3 'target' to have the same size as "
                           f"tensor for argument #5 'is_target'; but {int_list(target._size)} does "
                           f"not equal {int_list(is_target._size)} (while checking arguments for "
                           "multilabel_margin_loss_backward_cpu_template)")
    dt = self._dtype
    x, _, _, active = _pairs(self, target, n, c)
    g = x.dtype.type(1.0 / (n * c) if reduction == MEAN else 1.0 / c)
    t = np.where(np.cumprod(arr(target).reshape(n, c) >= 0, axis=1).astype(bool),
                 arr(target).reshape(n, c), 0)
    grad = active.sum(axis=1).astype(x.dtype) * g  # each class gains g per violating target
    lose = active.sum(axis=2).astype(x.dtype) * g  # each target loses g per violated class
    np.add.at(grad, (np.broadcast_to(np.arange(n)[:, None], (n, c)), t), -lose)
    go = arr(grad_output)
    if reduction != NONE or grad_output.dim() == 0:
        grad = grad * go.reshape(()).astype(x.dtype)
    else:
        grad = grad * go.reshape(n, 1).astype(x.dtype)
    return wrap(np.ascontiguousarray(grad.reshape(tuple(self._size))), dt)


@kernel("multilabel_margin_loss", composite=True)
def multilabel_margin_loss(self, target, reduction=MEAN):
    return call("multilabel_margin_loss_forward", self, target, reduction)[0]
