"""Pointwise losses' backward kernels as upstream's CPU code computes them (Loss.cpp,
cpu/PointwiseOpsKernel.cpp): mse_loss_backward and binary_cross_entropy_backward.

Each formula is upstream's loop, step by step: float16/bfloat16 round after every operation
(c10::Half/BFloat16 arithmetic and Vectorized<Half/BFloat16> alike); the mean's 1/numel is folded
into the scalar (mse) or divided afterwards by the division kernel (binary cross entropy), as
upstream does. Not here (left on their decompositions, see the commit): smooth_l1_loss,
huber_loss and their backward kernels, soft_margin_loss_backward -- their scalar-tail elements and
NaN bits were not reproduced exactly.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.cast import scalar_nans
from ..core.promotion import can_cast, promote_types
from ..ops.kernel_registry import KERNELS, kernel
from ..platform.float_state import quiet
from .nn_loss import MEAN, _rounded
from .nn_softmax_backward import to_dtype
from .simd_lanes import AVX2_BYTES, loop_nans
from .pointwise_base import ALL_H, BF16, FLOAT_H, REDUCED, broadcast_shape, check, \
    checked, finish
from .support.common import as_compute, wrap

_EPS32 = np.float32(1e-12)      # Loss.cpp's ``constexpr float EPSILON``


def _norm(reduction, numel, scale=1.0):
    return scale / numel if reduction == MEAN else scale


def _r(x, dt):
    """One scalar_t operation's rounding (float16/bfloat16 computed in float)."""
    return _rounded(x, dt) if dt in REDUCED else x


# ---- TensorIterator pieces ----------------------------------------------------------------------

def _same_dtype(operands):
    """check_all_same_dtype: every operand (output first) against the first input's dtype."""
    want = operands[1]._dtype
    for t in operands:
        if t._dtype is not want:
            raise RuntimeError(f"Found dtype {t._dtype._cpp_name} but expected {want._cpp_name}")
    return want


def _promoted(out_dt, inputs):
    """promote_inputs_to_common_dtype with enforce_safe_casting_to_output: the common dtype,
    after checking it may be written into the output's dtype."""
    dt = inputs[0]._dtype
    for t in inputs[1:]:
        dt = promote_types(dt, t._dtype)
    if not can_cast(dt, out_dt):
        raise RuntimeError(f"result type {dt._cpp_name} can't be cast to the desired output "
                           f"type {out_dt._cpp_name}")
    return dt


def _operands(shape, dt, inputs):
    """The inputs in ``dt``'s compute dtype, broadcast to the output's ``shape`` (TensorIterator
    with a given output: a larger broadcast resizes it, as upstream does with its warning)."""
    full = broadcast_shape(shape, *[t._size for t in inputs])
    if tuple(full) != tuple(shape):
        from ..platform.torch_warn import torch_warn

        torch_warn(f"An output with one or more elements was resized since it had shape "
                   f"{list(shape)}, which does not match the required output shape {list(full)}. "
                   "This behavior is deprecated, and in a future PyTorch release outputs will not "
                   "be resized unless they have zero elements. You can explicitly reuse an out "
                   "tensor t by resizing it, inplace, to zero elements with t.resize_(0).")
    return tuple(full), [np.broadcast_to(as_compute(t, dt), full) for t in inputs]


def _contiguous(r, dt):
    # (np.ascontiguousarray makes a 0-d array 1-d)
    return wrap(r if r.flags.c_contiguous else r.copy(order="C"), dt)


def vector_loop_nans(t):
    """A new bfloat16 result of a cpu_kernel_vec loop (AVX2's width in every build: these
    kernels have no AVX512 one) with its NaNs as upstream stores them (simd_lanes.loop_nans)."""
    if t._dtype is BF16:
        loop_nans(t, [t], AVX2_BYTES)
    return t


def _finish_as(r, dt, out_dt):
    """The iterator's result in ``dt`` (compute dtype), cast into a contiguous ``out_dt``."""
    res = _contiguous(np.asarray(r), dt)
    return res if dt is out_dt else to_dtype(res, out_dt)


def _into(result, out):
    """An in-place op's result written back into ``out``'s dtype (the promoted value computed,
    then cast, as TensorIterator does), after upstream's cast check."""
    if not can_cast(result._dtype, out._dtype):
        raise RuntimeError(f"result type {result._dtype._cpp_name} can't be cast to the desired "
                           f"output type {out._dtype._cpp_name}")
    if result._size != out._size:
        raise RuntimeError(f"output with shape {list(out._size)} doesn't match the broadcast "
                           f"shape {list(result._size)}")
    return to_dtype(result, out._dtype)


# ---- mse_loss_backward --------------------------------------------------------------------------

@kernel("mse_loss_backward")
def mse_loss_backward(grad_output, self, target, reduction):
    out_dt = self._dtype
    dt = _promoted(out_dt, (self, target, grad_output))
    check("mse_backward_cpu_out", dt, ALL_H)
    shape, (x, t, g) = _operands(self._size, dt, (self, target, grad_output))
    v = checked(_norm(reduction, self.numel(), 2.0), dt)
    with quiet():
        r = _r(v * _r(x - t, dt), dt)
        r = _r(r * g, dt)
    return vector_loop_nans(_finish_as(r, dt, out_dt))


# ---- binary_cross_entropy_backward --------------------------------------------------------------

def _squeezed(shape):
    return tuple(n for n in shape if n != 1)


@kernel("binary_cross_entropy_backward")
def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=MEAN):
    dt = _same_dtype((self, grad_output, self, target))
    check("binary_cross_entropy_backward", dt, FLOAT_H)
    shape = _squeezed(self._size)
    try:   # the iterator runs over the squeezed operands
        g, x, t = [np.broadcast_to(as_compute(a, dt).reshape(_squeezed(a._size)), shape)
                   for a in (grad_output, self, target)]
    except ValueError:
        broadcast_shape(shape, *[_squeezed(a._size) for a in (grad_output, target)])
        raise
    eps = _EPS32.astype(np.float32 if dt in REDUCED else D.numpy_dtype(dt))
    if dt in REDUCED:
        eps = _rounded(np.asarray(eps), dt)
    with quiet():
        num = _r(g * _r(x - t, dt), dt)
        den = _r(_r(1 - x, dt) * x, dt)
        den = np.where(den < eps, eps, den)   # std::max keeps a NaN first argument
        r = _r(num / den, dt)
    gi = finish(np.asarray(r).reshape(self._size), dt, self)   # empty_like(input)
    if dt is BF16 and gi._np is not None:
        scalar_nans(gi._np)   # cpu_kernel's scalar loop stores c10's NaN
    if weight is not None:
        gi = vector_loop_nans(_into(KERNELS["mul.Tensor"](gi, weight), gi))
    if reduction == MEAN:
        gi = KERNELS["div.Tensor"](gi, self.numel())
    return gi

