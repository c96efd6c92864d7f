"""glu and glu_backward (GatedLinearUnit.cpp, cpu/Activation.cpp's glu kernels).

glu(x, dim) = a * sigmoid(b) for the halves a, b of ``dim``, as the loop computes it:
``a * (1 / (1 + exp(-b)))``, each step rounded in float32/float64, float16/bfloat16 computed in
float32 and rounded once; the result laid out as TensorIterator lays out a binary op of the two
halves. glu_backward writes a contiguous grad_input: its first half sigmoid(b) (sigmoid's own
kernel, rounded to the dtype) times grad, its second half ``(1 - s) * s * a * grad`` left to
right with that rounded s.

exp is the one each lane of upstream's loop calls: SLEEF's expf/exp (u10) in the AVX2/AVX512
builds' vectorized op, glibc's in the scalar tail, in non-contiguous loops and in the DEFAULT
build (element-wise std::exp); neither is always correctly rounded, so both are reproduced.

bfloat16 results store a NaN as the loop that wrote it does: 0xFFFF from the vectorized
converter, 0x7FC0 from c10's scalar one (the scalar tail, non-contiguous loops, DEFAULT).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.cast import BF16_SCALAR_NAN, bf16_nans, cast_array
from ..core.construct import empty
from ..core.tensor import wrap_dim
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .pointwise_base import (BF16, F32, FLOAT_H, REDUCED, check, compute_dtype, finish,
                             iter_strides, operand)
from .pointwise_math import SIMD_MATH, VEC_BYTES
from ..random.fpmath import _any_recheck, _needs_recheck, fma32, fma64, libmf, safe_libm
from .support.broadcast import broadcast_shape
from .support.common import arr
from .support.iteration import ti_perm
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
_F32, _F64 = np.float32, np.float64
_R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931
_EXPF_POLY = (0.00139304355252534151077271, 0.00833336077630519866943359,
              0.0416664853692054748535156, 0.166666671633720397949219, 0.5)
_EXP_POLY = (0.2081276378237164457e-8, 0.2511210703042288022e-7, 0.2755762628169491192e-6,
             0.2755723402025388239e-5, 0.2480158687479686264e-4, 0.1984126989855865850e-3,
             0.1388888888914497797e-2, 0.8333333333314938210e-2, 0.4166666666666602598e-1,
             0.1666666666666669072e+0)


def _quotient(u, bits):
    """SLEEF's vrint to int32 (the out-of-range and NaN lanes become INT_MIN, as cvtps does)."""
    ok = np.isfinite(u) & (np.abs(u) < 2.0 ** 31)
    return np.where(ok, u, -2.0 ** 31).astype(np.int32 if bits == 32 else np.int64)


def _ldexp2(u, q, bias, shift, fdt):
    """SLEEF's vldexp2: u * 2^(q >> 1) * 2^(q - (q >> 1)), two roundings."""
    h = q >> 1
    idt = np.int32 if fdt is _F32 else np.int64
    return (u * ((h + bias).astype(idt) << shift).view(fdt)) * \
        ((q - h + bias).astype(idt) << shift).view(fdt)


def sleef_expf(d):
    """Sleef_expf*_u10 (FMA builds) of a float32 array. Each fused step is computed in float64 (the
    product of two floats is exact there) and rounded to float32; where one of those float64 sums
    could have rounded twice (``fpmath._needs_recheck``: rare) those lanes are redone with
    ``fma32``."""
    if not d.size:
        return np.empty(d.shape, _F32)
    sums: list = []

    def lean(a, b, c):
        w = np.multiply(a, b, dtype=_F64)
        w += c
        sums.append(w)
        return w.astype(_F32)

    with np.errstate(all="ignore"):
        r = _expf_steps(d, lean)
        if sums and _any_recheck(np.concatenate([w.reshape(-1) for w in sums])):
            redo = np.logical_or.reduce([_needs_recheck(w) for w in sums])
            r[redo] = _expf_steps(d[redo], fma32)
    return r


def _expf_steps(d, fused):
    qf = np.rint(d * _F32(_R_LN2))
    q, qv = _quotient(qf, 32), qf.astype(_F32)
    s = fused(qv, _F32(-0.693145751953125), d)
    s = fused(qv, _F32(-1.428606765330187045e-06), s)
    u = np.full(d.shape, _F32(0.000198527617612853646278381), _F32)
    for c in _EXPF_POLY:
        u = fused(u, s, _F32(c))
    u = _F32(1) + fused(s * s, u, s)
    u = _ldexp2(u, q, 0x7F, 23, _F32)
    return np.where(d > 100, _F32(np.inf), np.where(d < -104, _F32(0), u)).astype(_F32)


def sleef_exp(d):
    """Sleef_expd*_u10 (FMA builds) of a float64 array: the degree-10 Estrin polynomial."""
    with np.errstate(all="ignore"):
        return _exp_steps(d)


def _exp_steps(d):
    u = np.rint(d * _R_LN2)
    q = _quotient(u, 64)
    s = fma64(u, -.69314718055966295651160180568695068359375, d)
    s = fma64(u, -.28235290563031577122588448175013436025525412068e-12, s)
    s2 = s * s
    s4 = s2 * s2
    c9, c8, c7, c6, c5, c4, c3, c2, c1, c0 = _EXP_POLY

    def p2(hi, lo):
        return fma64(s, hi, lo)

    def p4(c3, c2, c1, c0):
        return fma64(s2, p2(c3, c2), p2(c1, c0))

    u = fma64(s4 * s4, p2(c9, c8), fma64(s4, p4(c7, c6, c5, c4), p4(c3, c2, c1, c0)))
    for c in (0.5, 1.0, 1.0):
        u = fma64(u, s, c)
    u = np.asarray(_ldexp2(u, q, 0x3FF, 52, _F64), _F64).reshape(d.shape)
    return np.where(d > 709.78271114955742909217217426, np.inf, np.where(d < -1000, 0.0, u))


def libm_exp(x):
    """glibc's expf/exp: the correctly rounded value (from a wider exp) except within a hair of a
    rounding midpoint, where glibc (within 0.51 ulp) may round either way: asked there."""
    wide = np.exp(x.astype(np.longdouble if x.dtype == _F64 else _F64))
    r = wide.astype(x.dtype)
    fin = np.isfinite(r) & (r != 0)
    ulp = np.spacing(np.abs(np.where(fin, r, 1)).astype(x.dtype))
    off = np.abs(wide - r) / ulp
    near = fin & (np.abs(off - 0.5) < 0.02)
    if near.any():
        xs = x[near]
        r[near] = libmf("expf", xs) if x.dtype == _F32 else safe_libm(math.exp, xs)
    return r


def loop_exp(x, lanes):
    """exp of the compute-dtype array ``x`` as each lane of the loop computes it (``lanes``: the
    SIMD op's elements, None for none)."""
    if lanes is None or not SIMD_MATH:
        return libm_exp(x)
    vec = sleef_expf if x.dtype == _F32 else sleef_exp
    if lanes.all():
        return vec(x)
    r = libm_exp(x)
    r[lanes] = vec(x[lanes])
    return r


def _gate(a, b, lanes):
    """a * (1 / (1 + exp(-b))) in the compute dtype."""
    one = a.dtype.type(1)
    return a * (one / (one + loop_exp(-b, lanes)))


def vector_lanes(shape, operands, itemsize: int, output_given: bool = False,
                 vec_bytes: int = VEC_BYTES):
    """Which elements cpu_kernel_vec's SIMD op computes (None: none). ``operands``: the output's
    and the inputs' strides in elements, broadcast to ``shape`` (the output's take part in
    TensorIterator's dimension order only when ``output_given``). The inner loop is vectorized
    where every operand steps by one element along the fastest dimension; it runs on through the
    next dimensions while they continue every operand's memory (coalescing), and its first
    multiple of two vectors go through the SIMD op. ``vec_bytes``: the vector width of the
    kernel's build (an AVX512 process runs the AVX2 build of kernels registered without
    ALSO_REGISTER_AVX512_DISPATCH)."""
    if cpu_capability.CAPABILITY == cpu_capability.DEFAULT:
        return None
    key = (tuple(shape), *map(tuple, operands), itemsize, output_given, vec_bytes)
    hit = _LANES.get(key, _MISS)
    if hit is _MISS:
        if len(_LANES) >= 512:
            _LANES.clear()
        hit = _LANES[key] = _lanes(shape, operands, itemsize, output_given, vec_bytes)
    return hit


_LANES: dict = {}
_MISS = object()


def _lanes(shape, operands, itemsize, output_given, vec_bytes):
    nd = len(shape)
    ops = [tuple(0 if n == 1 else s for n, s in zip(shape, st)) for st in operands]
    perm = [d for d in ti_perm(shape, ops if output_given else ops[1:]) if shape[d] != 1]
    if not perm or any(o[perm[0]] != 1 for o in ops):
        return None
    run = [perm[0]]
    m = shape[perm[0]]
    for d in perm[1:]:
        if any(o[d] != m for o in ops):
            break
        run.append(d)
        m *= shape[d]
    step = 2 * vec_bytes // itemsize
    if m < step:
        return None
    pos = np.zeros([shape[d] if d in run else 1 for d in range(nd)], np.int64)
    scale = 1
    for d in run:
        pos = pos + np.arange(shape[d]).reshape([-1 if i == d else 1 for i in range(nd)]) * scale
        scale *= shape[d]
    return np.broadcast_to(pos < m // step * step, shape)


def to_bf16(r, lanes):
    """float32 results as bfloat16 storage, each NaN as the converter of its lane stores it."""
    out = cast_array(r, F32, BF16)
    nan = bf16_nans(out)
    if lanes is not None:
        nan &= ~lanes
    out.view(np.uint16)[nan] = BF16_SCALAR_NAN
    return out


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
        grad = _broadcast_strides(grad_output, shape)
        rest = to_bf16(rest, vector_lanes(shape, [ghi._stride, glo._stride, first._stride,
                                                  grad], 2, True))
        gate = to_bf16(gate, vector_lanes(shape, [glo._stride, glo._stride, grad], 2, True))
    o = arr(out)
    o[(slice(None),) * d + (slice(half, 2 * half),)] = rest
    o[(slice(None),) * d + (slice(0, half),)] = gate
    return out


def _broadcast_strides(t, shape):
    lead = len(shape) - len(t._size)
    return [0] * lead + [0 if n == 1 else st for n, st in zip(t._size, t._stride)]


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
