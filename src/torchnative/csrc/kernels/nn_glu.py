"""glu and glu_backward (GatedLinearUnit.cpp, cpu/Activation.cpp's glu kernels).

glu(x, dim) = a * sigmoid(b) for the halves a, b of ``dim``, as the loop computes it:
``a * (1 / (1 + exp(-b)))``, each step rounded in float32/float64, float16/bfloat16 computed in
float32 and rounded once; the result laid out as TensorIterator lays out a binary op of the two
halves. glu_backward writes a contiguous grad_input: its first half sigmoid(b) (sigmoid's own
kernel, rounded to the dtype) times grad, its second half ``(1 - s) * s * a * grad`` left to
right with that rounded s.

exp is the one each lane of upstream's loop calls (exp_lanes.py: SLEEF's in the vectorized op,
glibc's elsewhere).

bfloat16 results store a NaN as the loop that wrote it does: 0xFFFF from the vectorized
converter, 0x7FC0 from c10's scalar one (the scalar tail, non-contiguous loops, DEFAULT).
"""

from __future__ import annotations

import numpy as np

from ..core.cast import cast_array, scalar_nans
from ..core.construct import empty
from ..core.tensor import wrap_dim
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .pointwise_base import (BF16, F32, FLOAT_H, REDUCED, check, compute_dtype, finish,
                             iter_strides, operand)
from .exp_lanes import loop_exp
from .pointwise_math import VEC_BYTES
from .simd_lanes import broadcast_strides, lanes
from .support.broadcast import broadcast_shape
from .support.common import arr
from .views import slice_


def _halves(self, dim):
    """GatedLinearUnit's checks: the wrapped dim and half its size."""
    if not self._size:
        raise RuntimeError("glu does not support 0-dimensional tensors")
    d = wrap_dim(dim, len(self._size))
    n = self._size[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    return d, n // 2


def _split(t, d, half):
    return slice_(t, d, 0, half), slice_(t, d, half, 2 * half)


# ---- exp as upstream's loops evaluate it ---------------------------------------------------------
_F32 = np.float32


def _gate(a, b, lanes):
    """a * (1 / (1 + exp(-b))) in the compute dtype."""
    one = a.dtype.type(1)
    return a * (one / (one + loop_exp(-b, lanes)))


def vector_lanes(shape, operands, itemsize: int, output_given: bool = False,
                 vec_bytes: int = VEC_BYTES):
    """Which elements cpu_kernel_vec's SIMD op computes where it differs from the scalar op
    (None: none, as in the DEFAULT build). ``operands``: the output's and the inputs' strides
    in elements, broadcast to ``shape`` (the output's take part only when ``output_given``).
    ``vec_bytes``: the vector width of the kernel's build (simd_lanes.build_bytes)."""
    if cpu_capability.CAPABILITY == cpu_capability.DEFAULT:
        return None
    out, ins = (operands[0], operands[1:]) if output_given else (None, operands[1:] or operands)
    run = lanes(shape, ins, itemsize, out, vec_bytes)
    return None if run is None else run.mask


def to_bf16(r, lanes):
    """float32 results as bfloat16 storage, each NaN as the converter of its lane stores it."""
    return scalar_nans(cast_array(r, F32, BF16), lanes)


@kernel("glu")
def glu(self, dim=-1):
    d, half = _halves(self, dim)
    first, second = _split(self, d, half)
    dt = self._dtype
    check("glu_cpu", dt, FLOAT_H)
    cdt = compute_dtype(dt)
    a, b = operand(first, dt, cdt), operand(second, dt, cdt)
    shape = first._size
    lanes = vector_lanes(shape, [iter_strides(shape, [first, second]), first._stride,
                                 second._stride], dt.itemsize)
    with np.errstate(all="ignore"):
        r = np.asarray(_gate(np.broadcast_to(a, shape), np.broadcast_to(b, shape), lanes))
    if dt is BF16:
        r = to_bf16(r, lanes)
    return finish(r, dt, first, second)


@kernel("glu_backward")
def glu_backward(grad_output, self, dim):
    d, half = _halves(self, dim)
    dt = self._dtype
    check_sigmoid_out(dt)
    first, second = _split(self, d, half)
    shape = tuple(broadcast_shape(first._size, grad_output._size))
    if grad_output._dtype is not dt:   # TensorIterator's same-dtype check
        raise RuntimeError(f"Found dtype {grad_output._dtype._cpp_name} but expected "
                           f"{dt._cpp_name}")
    out = empty(self._size, dt, self.device)
    check("glu_backward_cpu", dt, FLOAT_H)
    if not out.numel():
        return out
    cdt = compute_dtype(dt)
    a, g = operand(first, dt, cdt), operand(grad_output, dt, cdt)
    glo, ghi = _split(out, d, half)
    one = cdt.type(1)
    with np.errstate(all="ignore"):
        # sigmoid_out into the first half (its own loop), stored in the dtype
        b = np.broadcast_to(operand(second, dt, cdt), shape)
        s = _gate(np.ones(shape, cdt), b, vector_lanes(shape, [glo._stride, second._stride],
                                                        dt.itemsize, True))
        if dt in REDUCED:
            s = s.astype(arr(out).dtype).astype(cdt)
        rest = np.broadcast_to((one - s) * s * a * g, shape)
        gate = np.broadcast_to(s * g, shape)
    if dt is BF16:   # two loops (the fused one, then mul_), each over its own operands
        grad = broadcast_strides(grad_output, shape)
        rest = to_bf16(rest, vector_lanes(shape, [ghi._stride, glo._stride, first._stride,
                                                  grad], 2, True))
        gate = to_bf16(gate, vector_lanes(shape, [glo._stride, glo._stride, grad], 2, True))
    o = arr(out)
    o[(slice(None),) * d + (slice(half, 2 * half),)] = rest
    o[(slice(None),) * d + (slice(0, half),)] = gate
    return out


def check_sigmoid_out(dt):
    """sigmoid_out into a tensor of self's dtype: integral results refuse the float result."""
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{dt._cpp_name}")


@kernel("glu_backward.grad_input")
def glu_backward_out(grad_output, self, dim, *, grad_input):
    """glu_backward_cpu_out: grad_input resized (silently) to self's shape and written through
    its own strides; its dtype must be self's (the fused loop's check, after sigmoid_out's)."""
    from ..dispatch.call import call
    from ..dispatch.structured import write_into

    _halves(self, dim)
    dt = grad_input._dtype
    check_sigmoid_out(dt)
    if dt is not self._dtype:
        raise RuntimeError(f"Found dtype {self._dtype._cpp_name} but expected {dt._cpp_name}")
    result = glu_backward(grad_output, self, dim)
    if tuple(grad_input._size) != tuple(self._size):
        call("resize_", grad_input, list(self._size))
    write_into(grad_input, result)
    return grad_input
