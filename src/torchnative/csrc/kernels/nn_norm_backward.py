"""native_batch_norm_backward as a kernel: the computation of the decomposition it replaces
(upstream's torch/_decomp), operator for operator, calling the kernels directly instead of going
through the door for each (it was a quarter of a small CNN's backward), so its dtypes, errors
and elementwise bits are the decomposition's; its two per-channel sums are taken in double and
rounded once, as upstream's C++ kernel accumulates them (the decomposition's torch.sum would
follow the float32 sum kernel's order, which upstream's batch norm does not use).

In float32 the input minus the mean is projected out of the gradient: with N the elements per
channel, ``(g - (x - mean) * sum(g * (x - mean)) / N * invstd**2 - sum(g) / N) * invstd * w``.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.construct import wrapped_number
from ..ops.kernel_registry import KERNELS, kernel
from .nn_softmax_backward import computation_dtype, to_dtype
from ..platform.float_state import quiet
from .support.channels import channel_row, channel_sums, rows
from .support.common import arr, wrap


def _k(name):
    return KERNELS[name]


def _mul(a, b):
    return _k("mul.Tensor")(a, b if not isinstance(b, float) else wrapped_number(b))


def _sub(a, b):
    return _k("sub.Tensor")(a, b)


def _broadcast(x, mask):
    """The decomposition's _broadcast_batch_norm_backward: unsqueeze to the input's rank."""
    for axis, size in enumerate(mask):
        if size == 1 and not (axis < len(x._size) and x._size[axis] == size):
            x = _k("unsqueeze")(x, axis)
    return x


@kernel("native_batch_norm_backward")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):
    input_dtype = input._dtype
    weight_dtype = weight._dtype if weight is not None else input_dtype
    comp = computation_dtype(input)
    grad, x, w, r_mean, r_var, mean, invstd = (
        to_dtype(t, comp) if t is not None else None
        for t in (grad_out, input, weight, running_mean, running_var, save_mean, save_invstd))
    rank = len(input._size)
    if rank < 2:
        raise AssertionError(f"rank of the input must be at least 2, got {rank}")
    shape = input._size
    num_features = math.prod(shape) / shape[1]
    if train:
        if mean is None or invstd is None:
            raise AssertionError("mean and invstd must not be None in training mode")
    else:
        if r_mean is None or r_var is None:
            raise AssertionError("running_mean_cast and running_var_cast must not be None in "
                                 "eval mode")
        mean = r_mean
        invstd = _k("rsqrt")(_k("add.Tensor")(r_var, wrapped_number(eps)))
    mask = [1] * rank
    mask[1] = shape[1]
    axes = [i for i in range(rank) if i != 1]
    norm = 1.0 / num_features
    if _dense_same_dtype(comp, grad, x) and \
            _dense_same_dtype(comp, w, mean, invstd, size=shape[1]):
        gi, gw, gb = _numpy_backward(grad, x, w, mean, invstd, train, axes, norm, comp,
                                     output_mask)
        return (to_dtype(gi, input_dtype), to_dtype(gw, weight_dtype) if gw is not None else None,
                to_dtype(gb, weight_dtype) if gb is not None else None)
    mean = _broadcast(mean, mask)
    grad_sum = _channel_sums(grad, axes, comp)
    dot_p = _channel_sums(_mul(grad, _sub(x, mean)), axes, comp)
    grad_mean = _broadcast(_mul(grad_sum, norm), mask)
    proj_scale = _broadcast(_mul(_mul(dot_p, norm), _mul(invstd, invstd)), mask)
    if w is None:
        grad_scale = _mul(_broadcast(invstd, mask), 1.0)
    else:
        grad_scale = _broadcast(_mul(invstd, w), mask)
    if train:
        proj = _mul(_sub(x, mean), proj_scale)
        grad_input = _mul(_sub(_sub(grad, proj), grad_mean), grad_scale)
    else:
        grad_input = _mul(grad, grad_scale)
    grad_weight = _mul(dot_p, invstd) if output_mask[1] else None
    grad_bias = grad_sum if output_mask[2] else None
    return (to_dtype(grad_input, input_dtype),
            to_dtype(grad_weight, weight_dtype) if grad_weight is not None else None,
            to_dtype(grad_bias, weight_dtype) if grad_bias is not None else None)


_DENSE = frozenset((D.BY_NAME["float32"], D.BY_NAME["float64"]))


def _dense_same_dtype(comp, *tensors, size=None) -> bool:
    """Every operand a dense C-ordered array of the computation dtype (float32/float64), the
    per-channel ones of ``size`` elements: the kernels the decomposition calls then reduce to
    numpy's own elementwise operations."""
    if comp not in _DENSE:
        return False
    for t in tensors:
        if t is None:
            continue
        if t._dtype is not comp or not arr(t).flags.c_contiguous or \
                size is not None and t._size != (size,):
            return False
    return True


def _channel_sums(t, axes, comp):
    """A per-channel sum of ``t`` (a tensor of the computation dtype). In float32, taken in double
    and rounded once: upstream's C++ kernel accumulates the channel in double (``acc_type``) over
    per-plane vector sums, which a double sum keeps far more often than the float32 sum kernel's
    cascade (upstream's batch norm does not use that kernel). In float64, the sum kernel's."""
    if comp is D.BY_NAME["float32"]:
        return wrap(np.sum(arr(t), axis=tuple(axes), dtype=np.float64).astype(np.float32), comp)
    return _k("sum.dim_IntList")(t, axes)


def _numpy_backward(grad, x, w, mean, invstd, train, axes, norm, comp, output_mask):
    """The decomposition's elementwise steps as the mul/sub kernels compute them on dense
    arrays of one dtype (each product and difference rounded in that dtype, the Python float
    ``norm`` entering as that dtype, as a wrapped number does), in the same order; the
    per-channel sums as ``_channel_sums`` takes them (float32 ones by ``_row_sums``). The arrays
    are seen as N rows of C * inner values and each per-channel vector as one repeated row
    (support/channels.py): contiguous passes where numpy's (1, C, 1, ...) broadcast runs its
    generic strided loops, the same values."""
    cdt = D.numpy_dtype(comp)
    g, xa = arr(grad), arr(x)
    shape = g.shape
    c, inner = shape[1], math.prod(shape[2:])
    g2, x2 = rows(g), rows(xa)
    if cdt == np.float32 and g.size:
        def sums(a2):
            return _row_sums(a2, c, inner)
    else:
        def sums(a2):
            return arr(_channel_sums(wrap(a2.reshape(shape), comp), axes, comp))
    with quiet():
        xm = np.subtract(x2, channel_row(arr(mean), inner))
        grad_sum = sums(g2)
        dot_p = sums(np.multiply(g2, xm))
        n = cdt.type(norm)
        inv = arr(invstd)
        grad_mean = grad_sum * n
        proj_scale = (dot_p * n) * (inv * inv)
        grad_scale = inv * cdt.type(1.0) if w is None else inv * arr(w)
        if train:  # ((g - xm * proj_scale) - grad_mean) * grad_scale, in xm's place
            gi = np.multiply(xm, channel_row(proj_scale, inner), out=xm)
            np.subtract(g2, gi, out=gi)
            np.subtract(gi, channel_row(grad_mean, inner), out=gi)
            np.multiply(gi, channel_row(grad_scale, inner), out=gi)
        else:
            gi = np.multiply(g2, channel_row(grad_scale, inner))
        gw = wrap(dot_p * inv, comp) if output_mask[1] else None
    return (wrap(gi.reshape(shape), comp), gw,
            wrap(grad_sum, comp) if output_mask[2] else None)


def _row_sums(a2, c, inner):
    """Per-channel sums of N rows of C * inner float32 values, taken in double and rounded once
    (``_channel_sums``' values, in the order of a matrix-vector product over each (sample,
    channel) block, then the samples)."""
    return channel_sums(a2.astype(np.float64), c, inner).astype(np.float32)


# ---- native_layer_norm_backward -----------------------------------------------------------------
#
# The decomposition upstream's torch/_decomp gives (the kernel ours ran until now), operator for
# operator and in its order, calling the kernels directly: a MiniLM layer's gradient made 16
# door calls through the Python bindings, about a millisecond, for some 15 microseconds of
# numpy. Same kernels, same arguments (the Python int N as a wrapped number), so the same
# dtypes, values and errors.

def _contiguous_as(t, comp):
    """``t.to(comp, memory_format=torch.contiguous_format)``: t itself when already so."""
    if t._dtype is comp and t.is_contiguous():
        return t
    from ..core.layouts import contiguous_format

    return _k("_to_copy")(t, dtype=comp, memory_format=contiguous_format)


@kernel("native_layer_norm_backward")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    shape = tuple(input._size)
    ndim = len(shape)
    comp = computation_dtype(input)
    grad, x, w, b = (_contiguous_as(t, comp) if t is not None else None
                     for t in (grad_out, input, weight, bias))
    axis = ndim - len(normalized_shape)
    inner_dims = list(range(axis, ndim))
    outer_dims = list(range(axis))
    n = math.prod(shape[axis:])
    m = math.prod(shape[:axis])
    if m == 0 or n == 0:
        from ..dispatch.call import call

        def zeros(size):
            return call("new_zeros", input, list(size))
        return (zeros(shape) if output_mask[0] else None,
                zeros(shape[axis:]) if output_mask[1] else None,
                zeros(shape[axis:]) if output_mask[2] else None)
    for _ in range(ndim - mean.dim()):
        mean = _k("unsqueeze")(mean, -1)
    for _ in range(ndim - rstd.dim()):
        rstd = _k("unsqueeze")(rstd, -1)
    mul, total = _k("mul.Tensor"), _k("sum.dim_IntList")
    x_hat = mul(_sub(x, mean), rstd)
    grad_x_hat = mul(grad, w) if w is not None else grad
    a = mul(grad_x_hat, wrapped_number(n))
    b_ = total(grad_x_hat, inner_dims, True)
    c2 = total(mul(grad_x_hat, x_hat), inner_dims, True)
    c3 = mul(x_hat, c2)
    inner = _sub(_sub(a, b_), c3)
    d_input = d_weight = d_bias = None
    if output_mask[0]:
        d_input = mul(_k("div.Tensor")(rstd, wrapped_number(n)), inner)
    if output_mask[1] and w is not None:
        d_weight = total(mul(grad, x_hat), outer_dims, False) if outer_dims else mul(grad, x_hat)
    if output_mask[2] and b is not None:
        d_bias = total(grad, outer_dims, False) if outer_dims else _k("clone")(grad)
    return (to_dtype(d_input, input._dtype) if d_input is not None else None,
            to_dtype(d_weight, weight._dtype) if d_weight is not None else None,
            to_dtype(d_bias, bias._dtype) if d_bias is not None else None)
