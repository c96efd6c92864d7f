"""_softmax_backward_data as upstream's CPU kernel (below); _log_softmax_backward_data as a
kernel: ``grad - exp(output) * grad.sum(dim, keepdim=True)``, computed in the inputs' opmath
dtype and cast to ``input_dtype``, exactly as the decomposition it replaces (upstream's
torch/_decomp) computes it, but calling the exp, sum, mul, sub and cast kernels directly instead of
going through the door for each (a fifth of a small MLP's backward).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty, from_result
from ..core.device import CPU
from ..core.tensor import wrap_dim
from ..ops.kernel_registry import KERNELS, kernel
from ..platform.float_state import quiet
from ..platform import cpu_capability
from ..random.fpmath import _any_recheck, contracted32, contracted64
from .pointwise_math import SIMD_MATH, VEC_BYTES, exact
from .reduction import dense_sum_plan
from .support.cascade_sum import in_order
from .support.common import as_compute, int_list, result_type, wrap
from .support.nn_util import not_implemented

_F32 = D.BY_NAME["float32"]
_C64 = D.BY_NAME["complex64"]
_exp, _mul, _sub = np.exp, np.multiply, np.subtract


def computation_dtype(*tensors):
    """elementwise_dtypes(..., DEFAULT)'s computation dtype: the promoted dtype, with float16
    and bfloat16 (and complex32) computed in their opmath type."""
    dt = result_type(*tensors)
    if dt in D.REDUCED_FLOATING:
        return _F32
    if dt is D.BY_NAME.get("complex32"):
        return _C64
    return dt


def to_dtype(t, dt):
    """``t.to(dt)``: ``t`` itself when it has that dtype already, else the casting copy."""
    return t if t._dtype is dt else KERNELS["_to_copy"](t, dtype=dt)


_NATIVE = frozenset((_F32, D.BY_NAME["float64"]))


def _dense_lane(grad_output, output, dim, input_dtype):
    """The steps below on the arrays themselves, when both operands are C-contiguous arrays of
    one float32/float64 dtype and shape and the result keeps it: the sum kernel's own plan, the
    exp kernel's once-rounded exp, numpy's product and difference in that dtype (the bits of the
    kernels they stand for). None otherwise."""
    dt = grad_output._dtype
    if dt not in _NATIVE or output._dtype is not dt or input_dtype is not dt or \
            output._math_bits or output._size != grad_output._size or not output._size:
        return None
    g, o = grad_output._np, output._np
    if g is None or o is None or not (g.size and o.flags.c_contiguous):
        return None
    total = dense_sum_plan(grad_output, [dim], True)
    if total is None:
        return None
    r = _mul(exact(_exp, o), total(g))   # (the door's quiet float state)
    _sub(g, r, r)
    return from_result(r, dt)


@kernel("_log_softmax_backward_data")
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    fast = _dense_lane(grad_output, output, dim, input_dtype)
    if fast is not None:
        return fast
    comp = computation_dtype(grad_output, output)
    grad, out = to_dtype(grad_output, comp), to_dtype(output, comp)
    total = KERNELS["sum.dim_IntList"](grad, [dim], True)
    grad_input = KERNELS["sub.Tensor"](grad, KERNELS["mul.Tensor"](KERNELS["exp"](out), total))
    return to_dtype(grad_input, input_dtype)


# ---- _softmax_backward_data (SoftMax.cpp, cpu/SoftMaxKernel.cpp) ------------------------------
# grad_input = (grad - sum(grad * output)) * output along dim, each row's sum in upstream's order:
# * last dim: map2_reduce_all over Vectorized lanes (VEC_BYTES wide; float16/bfloat16 in two
#   float vectors per reduced vector), products rounded before they are added (not contracted),
#   the partial vector added into the first lanes, then the lanes folded: float by the AVX
#   shuffle tree, double and the DEFAULT build left to right. The sum stays in opmath.
# * any other dim: one accumulator per inner position, ``acc += grad * output`` down the dim,
#   contracted into a fused multiply-add where the build contracts (cpu_capability).
_SOFTMAX_TYPES = frozenset(D.BY_NAME[n] for n in ("float32", "float64", "float16", "bfloat16"))
_F16 = D.BY_NAME["float16"]


def _lanes_tree(acc):
    """Vectorized<float>'s vec_reduce_all in the AVX2/AVX512 builds: halves folded onto each
    other (256/128-bit, then 64-bit, then 32-bit shuffles), down to lane 0."""
    while acc.shape[-1] > 2:
        h = acc.shape[-1] // 2
        acc = acc[..., :h] + acc[..., h:]
    return acc[..., 0] + acc[..., 1]


def _lanes_in_order(acc):
    return in_order(acc, 1)


def _row_dot(p, lanes, halves, fold):
    """map2_reduce_all's sum of the products ``p`` (rows, n) over ``lanes``-wide vectors; with
    ``halves``, a reduced-float vector of 2 * lanes elements read as two float vectors."""
    n = p.shape[1]
    width = lanes * (2 if halves else 1)
    if n < width:  # one partial vector, its live lanes added left to right
        if halves and n > lanes:
            first = p[:, :lanes].copy()
            first[:, :n - lanes] += p[:, lanes:]
            return in_order(first, 1)
        return in_order(p, 1)
    full = n // width * width
    blocks = p[:, :full].reshape(p.shape[0], -1, width)
    acc = in_order(blocks, 1) if blocks.shape[1] > 1 else blocks[:, 0].copy()
    tail = n - full
    if tail:
        acc[:, :tail] += p[:, full:]
    if halves:
        acc = acc[:, :lanes] + acc[:, lanes:]
    return fold(acc)


def _softmax_grad_rows(g, o, halves):
    """The last-dim kernel over (rows, n) arrays in opmath (``halves``: read from 16-bit
    floats)."""
    lanes = VEC_BYTES // g.dtype.itemsize
    fold = _lanes_tree if g.dtype == np.float32 and SIMD_MATH else _lanes_in_order
    s = _row_dot(g * o, lanes, halves, fold)
    r = g - s[:, None]
    r *= o
    return r


def _softmax_grad_cols(g, o):
    """The other-dim kernel over (outer, dim, inner) arrays in opmath: acc += g * o per column."""
    acc = _fused_sums32(g, o) if g.dtype == np.float32 and cpu_capability.CONTRACTS_FMA \
        else None
    if acc is None:
        fused = contracted32 if g.dtype == np.float32 else contracted64
        acc = np.zeros((g.shape[0], g.shape[2]), g.dtype)
        for j in range(g.shape[1]):
            acc = fused(g[:, j], o[:, j], acc)
    r = g - acc[:, None, :]
    r *= o
    return r


def _fused_sums32(g, o):
    """float32 ``acc = fma(g[:, j], o[:, j], acc)`` down axis 1, two numpy passes a step: the
    exact float64 product plus the float32 accumulator, rounded once (fma32's reasoning), the
    sums kept; None when some step's sum could have rounded twice (fpmath's recheck, rare): the
    caller then takes the exact multiply-add step by step."""
    p = np.multiply(g, o, dtype=np.float64)
    acc = np.zeros((g.shape[0], g.shape[2]), np.float32)
    for j in range(g.shape[1]):
        s = p[:, j]
        np.add(s, acc, out=s)
        acc[...] = s
    return None if _any_recheck(p.reshape(-1)) else acc


def _same_size(grad, output):
    if grad._size != output._size:
        raise RuntimeError("Expected tensor for argument #1 'grad' to have same size as tensor "
                           f"for argument #2 'output'; but {int_list(grad._size)} does not equal "
                           f"{int_list(output._size)} (while checking arguments for "
                           "softmax_backward)")


@kernel("_softmax_backward_data")
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    _same_size(grad_output, output)
    nd = grad_output.dim()
    d = wrap_dim(dim, nd)
    gdt = grad_output._dtype
    # the meta function's one dtype change (CUDA's half-to-float case); the CPU kernel then reads
    # every tensor as grad's dtype and refuses a mismatch
    out_dt = _F16 if gdt is _F32 and input_dtype is _F16 else gdt
    size = grad_output._size
    if grad_output.numel() == 0:
        return empty(size, out_dt, CPU)
    last = d == max(nd, 1) - 1
    if gdt not in _SOFTMAX_TYPES:
        raise not_implemented("softmax_backward_lastdim_kernel_impl" if last else
                              "softmax_backward_kernel_impl", gdt)
    for t_dt in (out_dt, output._dtype):
        if t_dt is not gdt:
            raise RuntimeError(f"expected scalar type {gdt._cpp_name} but found {t_dt._cpp_name}")
    g = np.ascontiguousarray(as_compute(grad_output, gdt))
    o = np.ascontiguousarray(as_compute(output, gdt))
    shape = size or (1,)
    with quiet():
        if last:
            n = shape[-1]
            r = _softmax_grad_rows(g.reshape(-1, n), o.reshape(-1, n), gdt in D.REDUCED_FLOATING)
        else:
            outer, inner = math.prod(shape[:d]), math.prod(shape[d + 1:])
            r = _softmax_grad_cols(g.reshape(outer, shape[d], inner),
                                   o.reshape(outer, shape[d], inner))
    return wrap(r.reshape(size), gdt)
