"""Weight normalization (WeightNorm.cpp, cpu/WeightNormKernel.cpp): ``norm_except_dim``,
``_weight_norm``, the fused interface's backward and its differentiable twin.

``_weight_norm_interface`` itself is served by upstream's Python decomposition. The composites
call other operators through the door as upstream's C++ does, so autograd records them (the
non-fused ``_weight_norm`` path is double-differentiable through them). The fused backward kernel
accumulates in opmath (float for float16/bfloat16) as upstream's: ``grad_g = sum(grad_w * v) /
norm`` per slice, ``grad_v = a * grad_w - b * v`` with ``a = g / norm``, ``b = a * grad_g / norm``.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from .support.common import as_compute, wrap
from .support.nn_util import not_implemented

_REDUCED = frozenset(D.BY_NAME[n] for n in ("float16", "bfloat16"))
_FLOATS = _REDUCED | {D.BY_NAME["float32"], D.BY_NAME["float64"]}


@kernel("norm_except_dim", composite=True)
def norm_except_dim(v, pow=2, dim=0):
    nd = v.dim()
    if dim == -1:
        return call("norm.Scalar", v, pow)
    if dim == 0:
        size = [v.shape[0]] + [1] * (nd - 1)
        flat = call("view", call("contiguous", v), [v.shape[0], -1])
        return call("view", call("norm.ScalarOpt_dim", flat, pow, [1]), size)
    if dim == nd - 1:
        size = [1] * (nd - 1) + [v.shape[-1]]
        flat = call("view", call("contiguous", v), [-1, v.shape[-1]])
        return call("view", call("norm.ScalarOpt_dim", flat, pow, [0]), size)
    swapped = call("transpose.int", v, 0, dim)
    return call("transpose.int", norm_except_dim(swapped, pow, 0), 0, dim)


@kernel("_weight_norm", composite=True)
def _weight_norm(v, g, dim=0):
    if v.device != g.device:
        raise RuntimeError(
            "weight_norm: expected v_in and g_in to be on the same device, but v_in is on "
            f"{v.device} and g_in is on {g.device}")
    v, g = call("contiguous", v), call("contiguous", g)
    if dim == 0 or dim == v.dim() - 1:
        return call("_weight_norm_interface", v, g, dim)[0]
    return call("mul.Tensor", v, call("div.Tensor", g, norm_except_dim(v, 2, dim)))


def _slices(t, dim: int, dt) -> np.ndarray:
    """``t`` as (M, N) in opmath: rows are dim-0 slices (dim == 0) or columns are the last
    dim's slices (dim == last), as the fused kernels walk them."""
    a = as_compute(t, dt)
    if dim == 0:
        return a.reshape(t.shape[0], -1)
    return a.reshape(-1, t.shape[-1])


@kernel("_weight_norm_interface_backward")
def _weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    for name, t in (("saved_v", saved_v), ("saved_g", saved_g), ("saved_norm", saved_norms)):
        if not t.is_contiguous():
            raise RuntimeError(f"{name} must be contiguous")
    nd = saved_v.dim()
    if dim not in (0, nd - 1):
        raise RuntimeError("fused kernels can only be applied for first or last dim")
    dt = saved_v._dtype
    if dt not in _FLOATS:
        raise not_implemented("weight_norm_backward_kernel", dt)
    if saved_v.numel() == 0:
        return (wrap(np.empty(saved_v.shape, D.numpy_dtype(dt)), dt),
                wrap(np.zeros(saved_g.shape, D.numpy_dtype(saved_g._dtype)), saved_g._dtype))
    acc = saved_norms._dtype
    gw, v = _slices(grad_w, dim, dt), _slices(saved_v, dim, dt)
    norm = as_compute(saved_norms, acc).reshape(-1)
    g = as_compute(saved_g, acc).reshape(-1)
    axis = 1 if dim == 0 else 0
    per_dim_sum = np.einsum("ij,ij->i" if axis == 1 else "ij,ij->j", gw, v)
    per_dim_sum = per_dim_sum.astype(norm.dtype, copy=False)
    grad_g = per_dim_sum / norm
    a = g / norm
    b = a * grad_g / norm
    shape = (-1, 1) if dim == 0 else (1, -1)
    grad_v = a.reshape(shape) * gw - b.reshape(shape) * v
    return (wrap(grad_v.reshape(saved_v.shape), dt),
            wrap(grad_g.reshape(saved_g.shape), saved_g._dtype))


@kernel("_weight_norm_differentiable_backward", composite=True)
def _weight_norm_differentiable_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    for name, t in (("grad_w", grad_w), ("saved_v", saved_v), ("saved_g", saved_g),
                    ("saved_norms", saved_norms)):
        if not t.is_contiguous():
            raise RuntimeError(f"{name} must be contiguous")
    last = saved_v.dim() - 1
    if dim not in (0, last):
        raise RuntimeError("Expected dim to be the first or last dimension")
    norms = call("_to_copy", saved_norms, dtype=saved_g._dtype) \
        if saved_norms._dtype != saved_g._dtype else saved_norms
    bcast = [1] * saved_v.dim()
    prod = call("mul.Tensor", grad_w, saved_v)
    if dim == 0:
        bcast[0] = saved_v.shape[0]
        sums = call("sum.dim_IntList", call("view", prod, [saved_v.shape[0], -1]), [1])
    else:
        bcast[last] = saved_v.shape[last]
        sums = call("sum.dim_IntList", call("view", prod, [-1, saved_v.shape[last]]), [0])
    per_dim_sums = call("view", sums, bcast)
    scale = call("div.Tensor", per_dim_sums, call("mul.Tensor", norms, norms))
    grad_v = call("mul.Tensor", call("div.Tensor", saved_g, norms),
                  call("sub.Tensor", grad_w, call("mul.Tensor", saved_v, scale)))
    grad_g = call("div.Tensor", per_dim_sums, norms)
    return grad_v, grad_g
