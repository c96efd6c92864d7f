"""Normalization: native_layer_norm (layer_norm.cpp), the rms_norm composites, native_batch_norm
and the _native_batch_norm_legit family (Normalization.cpp), native_group_norm (group_norm.cpp),
and the CompositeImplicitAutograd wrappers that reach them (layer_norm, rms_norm,
_fused_rms_norm, batch_norm, _batch_norm_impl_index, group_norm).

Statistics are computed in opmath (float for float16/bfloat16); a parameter dtype that differs
from the input's is "mixed type", allowed only as float parameters for a reduced-float input, and
then the statistics are float too. Rows are normalized as upstream's kernels do:
``y = (x * rstd + (-rstd * mean)) * gamma + beta``.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.tensor import numel_of
from ..core import dtypes as D
from ..core.construct import empty, from_result
from ..core.device import CPU
from ..core.layouts import channels_last, channels_last_3d, contiguous_format
from .support.channels import channel_row, channel_sums, rows
from .support.common import arr, as_compute, int_list, wrap
from ..dispatch.call import call
from .pointwise_math import fma
from .support.nn_util import contiguous, is_channels_last, not_implemented, typemeta
from ..ops.kernel_registry import kernel
from ..platform.float_state import quiet
from ..platform.torch_warn import torch_warn

_B = D.BY_NAME
_F32 = _B["float32"]
_FLOATS = frozenset(_B[n] for n in ("float32", "float64", "float16", "bfloat16"))


def _values(t) -> np.ndarray:
    """t's values in its compute dtype (float32 for float16/bfloat16), without a copy when
    the storage already holds them."""
    a = arr(t)
    if a.dtype.kind in "fc" and a.dtype.itemsize >= 4:
        return a
    return as_compute(t, t._dtype)


def _mixed(input, *params) -> bool:
    """is_mixed_type: the first defined parameter's dtype differs from the input's."""
    first = next((p for p in params if p is not None), None)
    return first is not None and first._dtype is not input._dtype


def _check_mixed(*params):
    for p in params:
        if p is not None and p._dtype is not _F32:
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")


def _check_params_dtype(input, *params):
    for p in params:
        if p is not None and p._dtype is not input._dtype:
            raise RuntimeError(f"expected scalar type {input._dtype._cpp_name} but found "
                               f"{p._dtype._cpp_name}")


def _moments(x: np.ndarray, eps: float, double_eps: bool):
    """Row means and 1/sqrt(var + eps) of a (rows, n) array, in its dtype. The moments are
    accumulated in float64 and rounded (upstream's Welford cascade is within an ulp of that);
    ``double_eps`` adds eps in double before the square root, as group_norm's kernel does."""
    inv_n = 1.0 / x.shape[1]
    mean = np.add.reduce(x, axis=1, dtype=np.float64, keepdims=True)
    mean *= inv_n
    centered = np.subtract(x, mean, dtype=np.float64)
    np.square(centered, out=centered)
    var = np.add.reduce(centered, axis=1, keepdims=True)
    var *= inv_n
    var = var.astype(x.dtype)
    if double_eps:
        rstd = (1.0 / np.sqrt(np.maximum(var, 0).astype(np.float64) + eps)).astype(x.dtype)
    else:
        rstd = x.dtype.type(1) / np.sqrt(var + x.dtype.type(eps))
    return mean.astype(x.dtype), rstd


def _check_norm_shape(input, normalized_shape, weight, bias, rms=False):
    shape = tuple(int(s) for s in normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p._size) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {int_list(p._size)} and normalized_shape = "
                               f"{int_list(shape)}")
    n = len(shape)
    if len(input._size) < n or tuple(input._size[len(input._size) - n:]) != shape:
        dims = ", ".join(str(s) for s in shape)
        raise RuntimeError(f"Given normalized_shape={int_list(shape)}, expected input with shape "
                           f"[*{dims if rms else ', ' + dims}], but got input of size"
                           f"{int_list(input._size)}")
    axis = len(input._size) - n
    m = 1
    for s in input._size[:axis]:
        m *= s
    return shape, axis, m


# ---- layer_norm -------------------------------------------------------------------------------

@kernel("native_layer_norm")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    mixed = _mixed(input, weight, bias)
    if mixed:
        _check_mixed(weight, bias)
    shape, axis, m = _check_norm_shape(input, normalized_shape, weight, bias)
    dt = input._dtype
    stat_dt = _F32 if mixed else dt
    stat_shape = tuple(input._size[:axis]) + (1,) * len(shape)
    if m == 0 or numel_of(input) == 0:
        return (empty(input._size, dt, CPU), empty(stat_shape, stat_dt, CPU),
                empty(stat_shape, stat_dt, CPU))
    if dt not in _FLOATS:
        raise not_implemented("LayerNormKernelImpl", dt)
    if not mixed:
        _check_params_dtype(input, weight, bias)
    n = numel_of(input) // m
    x = _values(input).reshape(m, n)
    mean, rstd = _moments(x, eps, double_eps=False)
    # upstream: fma((x - mean) * rstd, gamma, beta)
    y = np.subtract(x, mean)
    y *= rstd
    if weight is not None or bias is not None:
        g = _values(weight).reshape(1, n) if weight is not None else np.ones((), x.dtype)
        b = _values(bias).reshape(1, n) if bias is not None else np.zeros((), x.dtype)
        y = fma(y, g.astype(x.dtype, copy=False), b.astype(x.dtype, copy=False))
    return (wrap(y.reshape(input._size), dt), wrap(mean.reshape(stat_shape), stat_dt),
            wrap(rstd.reshape(stat_shape), stat_dt))


@kernel("layer_norm", composite=True)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return call("native_layer_norm", input, normalized_shape, weight, bias, eps)[0]


# ---- rms_norm (layer_norm.cpp: rms_norm_symint, rms_norm_composite) ---------------------------

_RMS_TYPES = _FLOATS | frozenset(_B[n] for n in ("complex64", "complex128"))


def _suggest_channels_last(t) -> bool:
    return is_channels_last(t)


def _suggested_format(t):
    """Tensor::suggest_memory_format."""
    if not _suggest_channels_last(t):
        return contiguous_format
    return channels_last if len(t._size) == 4 else channels_last_3d


def _rms_norm_composite(input, normalized_shape, weight, eps):
    dims = [len(input._size) - i - 1 for i in range(len(normalized_shape))]
    dt = input._dtype
    if dt not in _RMS_TYPES:
        raise not_implemented("rms_norm", dt)
    opmath = {_B["float16"]: _F32, _B["bfloat16"]: _F32}.get(dt, dt)
    up = input if opmath is dt else call("_to_copy", input, dtype=opmath)
    if eps is None:
        eps = float(np.finfo(np.float32 if opmath in (_F32, _B["complex64"]) else
                             np.float64).eps)
    rstd = call("rsqrt", call("add_.Scalar",
                              call("mean.dim", call("pow.Tensor_Scalar", up, 2), dims, True),
                              eps))
    result = call("mul.Tensor", up, rstd)
    if weight is not None:
        result = call("mul.Tensor", result, weight)
    if not _suggest_channels_last(input):
        result, rstd = contiguous(result), contiguous(rstd)
    if result._dtype is not dt:  # type_as(input)
        result = call("_to_copy", result, dtype=dt)
    return result, rstd


@kernel("_fused_rms_norm", composite=True)
def _fused_rms_norm(input, normalized_shape, weight, eps):
    return _rms_norm_composite(input, normalized_shape, weight, eps)


@kernel("rms_norm", composite=True)
def rms_norm(input, normalized_shape, weight=None, eps=None):
    _check_norm_shape(input, normalized_shape, weight, None, rms=True)
    if _suggest_channels_last(input) or input._dtype.is_complex:
        return _rms_norm_composite(input, normalized_shape, weight, eps)[0]
    if weight is not None and weight._dtype is not input._dtype:
        torch_warn("Mismatch dtype between input and weight: input dtype = "
                   f"{typemeta(input._dtype)}, weight dtype = {typemeta(weight._dtype)}, "
                   "Cannot dispatch to fused implementation.")
        return _rms_norm_composite(input, normalized_shape, weight, eps)[0]
    return call("_fused_rms_norm", input, list(normalized_shape), weight, eps)[0]


# ---- batch_norm -------------------------------------------------------------------------------

def _channel_view(t, ndim):
    """A (C,) vector shaped to broadcast over an (N, C, ...) input."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    dt = input._dtype
    if dt not in _FLOATS:
        raise not_implemented("batch_norm", dt)
    mixed = _mixed(input, weight, bias, running_mean, running_var)
    if mixed:
        _check_mixed(weight, bias, running_mean, running_var)
    else:
        _check_params_dtype(input, weight, bias, running_mean, running_var)
    stat_dt = _F32 if mixed else dt
    ndim = len(input._size)
    c = input._size[1]
    x = _values(input)
    acc = x.dtype
    wide = None  # x widened to float64 by the statistics, for the output's multiply-add
    if training:
        axes = (0,) + tuple(range(2, ndim))
        n = numel_of(input) // c if c else 0
        # accumulate in double as upstream's acc_type<float> on CPU does
        if x.dtype == np.float32 and x.flags.c_contiguous and n:
            wide, mean64, var_sum = _channel_stats(x, c, n)
        else:
            xd = x.astype(np.float64, copy=False)
            mean64 = np.add.reduce(xd, axis=axes)       # ndarray.mean's steps without its frames
            mean64 /= n
            var_sum = np.square(xd - _channel_view(mean64, ndim)).sum(axis=axes)
        var = var_sum / n
        with quiet():
            invstd = 1 / np.sqrt(var + eps)
            if eps == 0:  # a channel without variance gets 0 (upstream's guard), not inf
                invstd[var == 0] = 0.0
            unbiased = var_sum / (n - 1) if n > 1 else var_sum / 0.0
        if running_mean is not None:
            rm = _values(running_mean).astype(np.float64)
            _write(running_mean, momentum * mean64 + (1 - momentum) * rm)
        if running_var is not None:
            rv = _values(running_var).astype(np.float64)
            _write(running_var, momentum * unbiased + (1 - momentum) * rv)
        mean = mean64.astype(acc)
        inv = invstd.astype(acc)
        save_mean, save_invstd = wrap(mean, stat_dt), wrap(inv, stat_dt)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean = _values(running_mean).astype(acc, copy=False)
        inv = 1 / np.sqrt(_values(running_var).astype(acc, copy=False) + acc.type(eps))
        save_mean, save_invstd = empty((0,), stat_dt, CPU), empty((0,), stat_dt, CPU)
    alpha = inv * (_values(weight).astype(acc, copy=False) if weight is not None else acc.type(1))
    b = _values(bias).astype(acc, copy=False) if bias is not None else np.zeros(c, acc)
    beta = fma(-mean, alpha, b)  # upstream: bias - mean * alpha, contracted
    y = fma(x, _channel_view(alpha, ndim), _channel_view(beta, ndim), wide=wide)
    out = _like_input(input, y, dt)
    return out, save_mean, save_invstd


def _channel_stats(x, c, n):
    """x widened to double, and each channel's mean and sum of squared deviations from it in
    double, of a C-contiguous float32 (N, C, ...) array with ``n`` elements per channel: the
    general steps' values up to the order of the double sums (far below a float32 rounding), in
    contiguous passes over one row per (sample, channel): the sums by a matrix-vector product,
    the means subtracted as one repeated row (support/channels.py), the squares by einsum's
    row-wise dot. The widened x is left as it is, for the output's multiply-add."""
    xd = x.astype(np.float64)
    inner = n // x.shape[0]
    mean64 = channel_sums(xd, c, inner)
    mean64 /= n
    dev = np.subtract(rows(xd), channel_row(mean64, inner)).reshape(-1, inner)
    var_sum = np.einsum("ij,ij->i", dev, dev).reshape(-1, c).sum(0)
    return xd, mean64, var_sum


def _write(t, values):
    """Store float64 values into t in place, rounded to its dtype as upstream's store does
    (float32: numpy's cast rounds to nearest even, as the C++ conversion does)."""
    from ..core.cast import cast_array

    values = np.asarray(values, dtype=np.float64)
    if t._dtype in _NATIVE:
        with quiet():
            np.copyto(arr(t), values, casting="unsafe")
        return
    np.copyto(arr(t), cast_array(values, _B["float64"], t._dtype))


_NATIVE = frozenset((_F32, _B["float64"]))
# (size, stride) -> whether empty_like's suggested layout of such an input is C-contiguous
_PLAIN_LAYOUT: dict = {}


def _like_input(input, y, dt):
    """The output in the input's suggested memory format (empty_like), holding y."""
    from .copy import strides_for

    key = (input._size, input._stride)
    plain = _PLAIN_LAYOUT.get(key)
    if plain is None:
        if len(_PLAIN_LAYOUT) > 256:
            _PLAIN_LAYOUT.clear()
        plain = _PLAIN_LAYOUT[key] = (
            tuple(strides_for(input, _suggested_format(input))) ==
            tuple(np.empty(input._size, np.uint8).strides) if all(input._size) else False)
    if plain and y.dtype == D.numpy_dtype(dt) and y.flags.c_contiguous:
        return from_result(y, dt)          # y (fma's result) is fresh: it is that tensor
    out = empty(input._size, dt, CPU, stride=strides_for(input, _suggested_format(input)))
    from ..core.cast import cast_array

    src = D.dtype_from_numpy(y.dtype)
    np.copyto(arr(out), y if src is dt else cast_array(y, src, dt))
    return out


@kernel("native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


@kernel("_native_batch_norm_legit")
def _native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum,
                             eps):
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


@kernel("_native_batch_norm_legit.no_stats")
def _native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    return _batch_norm(input, weight, bias, None, None, training, momentum, eps)


@kernel("_native_batch_norm_legit_no_training")
def _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var,
                                         momentum, eps):
    return _batch_norm(input, weight, bias, running_mean, running_var, False, momentum, eps)


# at::toAccumulateType(t, is_cuda=false)
_ACC = {"float16": _F32, "bfloat16": _F32, "float32": _B["float64"]}


def _check_features(name, expected, t):
    if numel_of(t) != expected:
        raise RuntimeError(f"{name} should contain {expected} elements not {t.numel()}")


@kernel("_batch_norm_impl_index", composite=True)
def _batch_norm_impl_index(input, weight, bias, running_mean, running_var, training, momentum,
                           eps, cudnn_enabled):
    # input.sizes()[1]: a 1-d input reads the unused (zero) slot of its size storage upstream
    c = input._size[1] if len(input._size) > 1 else 0
    if running_mean is not None:
        _check_features("running_mean", c, running_mean)
    elif not training:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if running_var is not None:
        _check_features("running_var", c, running_var)
    elif not training:
        raise RuntimeError("running_var must be defined in evaluation mode")
    if weight is not None:
        _check_features("weight", c, weight)
    if bias is not None:
        _check_features("bias", c, bias)
    reserve = call("empty.memory_format", [0], dtype=_B["uint8"], layout=None,
                   device=input.device, pin_memory=None, memory_format=None)
    if numel_of(input) == 0:
        # statistics in the CPU accumulate type; the output a fresh tensor (not a view)
        acc = _ACC.get(input._dtype._name, input._dtype)
        stats = [call("empty.memory_format", [c], dtype=acc, layout=None, device=input.device,
                      pin_memory=None, memory_format=None) for _ in range(2)]
        out = call("clone", input, memory_format=None)
        if weight is not None:
            out = call("mul.Tensor", out, call("select.int", weight, 0, 0))
        if bias is not None:
            out = call("add.Tensor", out, call("select.int", bias, 0, 0))
        return out, stats[0], stats[1], reserve, 0
    out, mean, invstd = call("native_batch_norm", input, weight, bias, running_mean, running_var,
                             training, momentum, eps)
    return out, mean, invstd, reserve, 0


@kernel("batch_norm", composite=True)
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return call("_batch_norm_impl_index", input, weight, bias, running_mean, running_var,
                training, momentum, eps, cudnn_enabled)[0]


# ---- group_norm -------------------------------------------------------------------------------

def _check_group_norm_inputs(input, weight, bias, c, groups):
    if groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {groups}")
    if c % groups != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {int_list(input._size)} and "
                           f"num_groups={groups}")
    if weight is not None and (len(weight._size) != 1 or numel_of(weight) != c):
        raise RuntimeError("Expected weight to be a vector of size equal to the number of "
                           f"channels in input, but got weight of shape "
                           f"{int_list(weight._size)} and input of shape "
                           f"{int_list(input._size)}")
    if bias is not None and (len(bias._size) != 1 or numel_of(bias) != c):
        raise RuntimeError("Expected bias to be a vector of size equal to the number of "
                           "channels in input, but got bias of shape "
                           f"{int_list((weight if weight is not None else bias)._size)} and "
                           f"input of shape {int_list(input._size)}")


@kernel("native_group_norm")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    _check_group_norm_inputs(input, weight, bias, C, group)
    if not input.is_contiguous(memory_format=_suggested_format(input)):
        raise RuntimeError("Expected X.is_contiguous(memory_format) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    mixed = _mixed(input, weight, bias)
    if mixed:
        _check_mixed(weight, bias)
    dt = input._dtype
    stat_dt = _F32 if mixed else dt
    if numel_of(input) == 0:
        return (empty(input._size, dt, CPU), empty((N, group), stat_dt, CPU),
                empty((N, group), stat_dt, CPU))
    if dt not in _FLOATS:
        raise not_implemented("GroupNormKernelImpl", dt)
    if not mixed:
        _check_params_dtype(input, weight, bias)
    x = _values(input).reshape(N * group, -1)
    mean, rstd = _moments(x, eps, double_eps=True)
    xs = _values(input).reshape(N, C, -1)
    rep = C // group
    m = np.repeat(mean.reshape(N, group), rep, axis=1)[:, :, None]
    r = np.repeat(rstd.reshape(N, group), rep, axis=1)[:, :, None]
    if weight is None and bias is None:
        y = np.subtract(xs, m)
        y *= r
    else:
        g = _values(weight).reshape(1, C, 1) if weight is not None else np.ones((), x.dtype)
        b = _values(bias).reshape(1, C, 1) if bias is not None else np.zeros((), x.dtype)
        scale = r * g.astype(x.dtype, copy=False)
        y = fma(scale, xs, fma(-scale, m, b.astype(x.dtype, copy=False)))
    y = y.reshape(input._size)
    return (_like_input(input, y, dt), wrap(mean.reshape(N, group), stat_dt),
            wrap(rstd.reshape(N, group), stat_dt))


@kernel("group_norm", composite=True)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    n, c = input.size(0), input.size(1)
    _check_group_norm_inputs(input, weight, bias, c, num_groups)
    hxw = math.prod(input._size[2:])
    fmt = _suggested_format(input)
    x = input if input.is_contiguous(memory_format=fmt) else \
        call("clone", input, memory_format=fmt)
    gamma = contiguous(weight) if weight is not None else None
    beta = contiguous(bias) if bias is not None else None
    return call("native_group_norm", x, gamma, beta, n, c, hxw, num_groups, eps)[0]


# ---- instance_norm (CompositeImplicitAutograd: a batch norm over (1, N*C, ...)) ----------------

@kernel("instance_norm", composite=True)
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    shape = list(input._size)
    b, c = input.size(0), input.size(1)
    shape[1] = b * c
    shape[0] = 1

    def repeat(t):
        return call("repeat", t, [b]) if t is not None else None

    w, bb, rm, rv = repeat(weight), repeat(bias), repeat(running_mean), repeat(running_var)
    x = call("view", contiguous(input), shape)
    out = call("batch_norm", x, w, bb, rm, rv, use_input_stats, momentum, eps, cudnn_enabled)
    # the running statistics are const upstream; an alias lets it write them back
    if running_mean is not None:
        call("copy_", call("alias", running_mean),
             call("mean.dim", call("view", rm, [b, c]), [0], False))
    if running_var is not None:
        call("copy_", call("alias", running_var),
             call("mean.dim", call("view", rv, [b, c]), [0], False))
    return call("view", out, list(input._size))
