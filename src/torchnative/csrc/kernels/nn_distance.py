"""Pairwise distances (Distance.cpp, cpu/DistanceOpsKernel.cpp): _pdist_forward, _pdist_backward
and the CompositeImplicitAutograd pdist that reaches them as upstream's C++ does.

For rows x_i, x_j of the input (i < j, in row-major pair order) the p-norm of their difference:
p == 0 counts the differing coordinates, p == inf takes the largest difference, other p (also
negative ones, which only pdist refuses) compute (sum |d|^p)^(1/p). Values are computed in
float64 and rounded once (upstream's float32 kernel sums in vector lanes, an order of its own).
The backward kernel gives each row the sum over its pairs of the per-coordinate derivative
(zero where the distance is zero), the formula chosen by p as upstream's kernel chooses it.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..core.device import CPU
from .support.common import arr
from ..dispatch.call import call
from .support.nn_util import contiguous, not_implemented
from .support.out import register_autogen_out
from ..ops.kernel_registry import kernel

_B = D.BY_NAME
_TYPES = frozenset((_B["float32"], _B["float64"]))


def _rows(t):
    """(n, m) of the kernel's view of ``t``: size(0) rows of size(1) values."""
    if t.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    n = t._size[0]
    if n <= 1:
        return n, None
    if t.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{t.dim()}, "
                         f"{t.dim() - 1}], but got 1)")
    return n, t._size[1]


def _pairs(n):
    i, j = np.triu_indices(n, 1)
    return i, j


def _distances(diff, p):
    a = np.abs(diff)
    if p == 0:
        return np.minimum(np.ceil(a), 1).sum(-1)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return np.sqrt((a * a).sum(-1))
    if np.isinf(p):
        return a.max(-1) if a.shape[-1] else np.zeros(a.shape[:-1])
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return np.power(np.power(a, p).sum(-1), 1.0 / p)


@kernel("_pdist_forward")
def _pdist_forward(self, p=2.0):
    if not self.is_contiguous():
        raise RuntimeError("_pdist_forward requires contiguous input")
    dt = self._dtype
    n, m = _rows(self)
    if n <= 1:
        return empty((0,), dt, CPU)
    c = n * (n - 1) // 2
    out = empty((c,), dt, CPU)
    if m == 0:
        arr(out)[...] = 0
        return out
    if dt not in _TYPES:
        raise not_implemented("pdist", dt)
    x = arr(self).reshape(-1)[: n * m].reshape(n, m).astype(np.float64)
    i, j = _pairs(n)
    with np.errstate(all="ignore"):
        arr(out)[...] = _distances(x[i] - x[j], float(p))
    return out


def _sign(x):
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _pair_grads(diff, g, dist, p):
    """The per-coordinate derivative of each pair's distance, times its gradient."""
    g = g[:, None]
    dist = dist[:, None]
    with np.errstate(all="ignore"):
        if p == 1:
            return g * _sign(diff)
        if p < 2:
            r = _sign(diff) * np.power(np.abs(diff), p - 1) * g / np.power(dist, p - 1)
            zero = (dist == 0) | ((diff == 0) & (p < 1))
            return np.where(zero, 0.0, r)
        if p == 2:
            return np.where(dist == 0, 0.0, g * diff / dist)
        if np.isinf(p):
            return g * _sign(diff) * (1 - np.minimum(1, np.ceil(np.abs(np.abs(diff) - dist))))
        r = diff * np.power(np.abs(diff), p - 2) * g / np.power(dist, p - 1)
        return np.where(dist == 0, 0.0, r)


@kernel("_pdist_backward")
def _pdist_backward(grad, self, p, pdist):
    if not self.is_contiguous():
        raise RuntimeError("_pdist_backward requires self to be contiguous")
    if not pdist.is_contiguous():
        raise RuntimeError("_pdist_backward requires pdist to be contiguous")
    dt = self._dtype
    out = empty(tuple(self._size), dt, CPU)
    if dt not in _TYPES:
        raise not_implemented("pdist_backward", dt)
    res = arr(out)
    p = float(p)
    if p == 0 or grad.numel() == 0 or self.numel() == 0:
        res[...] = 0
        return out
    for t in (grad, pdist):
        if t._dtype is not dt:
            raise RuntimeError(f"expected scalar type {dt._cpp_name} but found "
                               f"{t._dtype._cpp_name}")
    n, m = self._size[0], self._size[1]
    x = arr(self).reshape(n, m)
    i, j = _pairs(n)
    c = len(i)
    g = arr(grad).reshape(-1)[:c].astype(np.float64)
    dist = arr(pdist).reshape(-1)[:c].astype(np.float64)
    # differences in the input's dtype: the inf-norm compares them with the rounded distance
    contrib = _pair_grads((x[i] - x[j]).astype(np.float64), g, dist, p)
    # each row as upstream's kernel reaches it: first as the second row of its pairs, then
    # as the first
    acc = np.zeros((n, m))
    np.subtract.at(acc, j, contrib)
    np.add.at(acc, i, contrib)
    res[...] = acc.reshape(res.shape)
    return out


@kernel("pdist", composite=True)
def pdist(self, p=2.0):
    if self.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.dim()}D")
    if not self._dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return call("_pdist_forward", contiguous(self), p)


register_autogen_out("_pdist_forward.out", _pdist_forward)
register_autogen_out("_pdist_backward.out", _pdist_backward)
