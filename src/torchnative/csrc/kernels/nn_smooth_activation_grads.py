"""Gradients of the smooth activations upstream writes in C++: gelu_backward (cpu/Activation.cpp,
GeluBackwardKernelImpl), softplus_backward, hardswish_backward, mish_backward (Activation.cpp)
and logit_backward (BinaryOpsKernel.cpp).

Each is a promoting binary TensorIterator op whose loop computes in the compute dtype (float32
for float16/bfloat16) and rounds once -- except logit_backward, which computes float16/bfloat16
in their own type, one rounding per operation. SIMD lanes (``simd_lanes``) take SLEEF's exp and
tanhf/log1pf and ATen's polynomial erf, the scalar loop glibc's functions; where upstream's build
contracts an ``a * b + c`` it is one rounding (``fma``; which ones, measured per loop).

Left on upstream's Python decomposition, from inside the kernel: gelu_backward's exact form
where upstream hands it to oneDNN (contiguous input: float32, and bfloat16/float16 where oneDNN
computes them natively), whose jit backward is not reproduced; and float64 (SLEEF's erf and tanh
in double in SIMD lanes, and glibc's erf/exp in the scalar loop, not matched yet).
mish_backward's float64 likewise (SLEEF's double log1p and tanh), and its float16 where x
holds a NaN or infinity (which NaN each lane keeps depends on its place in the loop: not
reproduced).
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import dtypes as D
from ..core.cast import BF16_SCALAR_NAN
from ..platform import cpu_capability
from ..random.fpmath import fma32, libmf
from .exp_lanes import _ldexp2, _quotient, loop_exp, sleef_expf
from .nn_activation_grads import (binary, blend, nan_values, run_positions, scalar_of,
                                  simd_lanes)
from .pointwise_base import (BF16, F16, F32, F64, FLOAT_H, REDUCED, arr, check, checked, operand,
                             result_type)
from .pointwise_math import fma
from .copy import copy_into
from .factories import empty_like
from ..ops.kernel_registry import kernel

_F32 = np.float32
_ALL_ONES = np.array(0xFFFFFFFF, np.uint32).view(_F32)[()]  # a NaN with every bit set


def _decomposed(name: str):
    """The door's decomposition of ``name`` (what served every call before this kernel)."""
    fn = _DECOMPOSED.get(name)
    if fn is None:
        from ..dispatch.boxing import normalized
        from ..dispatch.call import op
        from ..dispatch.door import _decomposition, _guarded_decomposition

        handle = op(name)
        fn = _DECOMPOSED[name] = _guarded_decomposition(handle,
                                                        normalized(handle, _decomposition(handle)))
    return fn


_DECOMPOSED: dict = {}


def _promoted(ops):
    """The iterator's operands: one not of the common dtype is replaced by its copy in it, laid
    out as ``.to()`` lays it out (dense strides kept, else contiguous) -- which decides the SIMD
    lanes of a strided operand of another dtype."""
    dt = result_type(*ops)
    out = []
    for t in ops:
        if t._dtype is not dt and t.dim() and not t._non_overlapping_and_dense():
            c = empty_like(t, dtype=dt)
            copy_into(c, t)
            t = c
        out.append(t)
    return tuple(out)


_AS = [_F32(v) for v in (0.3275911, 0.254829592, -0.284496736, 1.421413741, -1.453152027,
                         1.061405429)]


def _vec_erf(x):
    """Vectorized<float>::erf: Abramowitz-Stegun 7.1.26 in fused multiply-adds, with SLEEF's
    expf (``pointwise_math.erf_vec32`` takes the correctly rounded exp instead)."""
    p, p1, p2, p3, p4, p5 = _AS
    one = _F32(1)
    t = one / fma32(p, np.abs(x), one)
    r = fma32(fma32(fma32(fma32(p5, t, p4), t, p3), t, p2), t, p1)
    y = fma32(-sleef_expf(-(x * x)) * t, r, one)
    return np.where(np.signbit(x), -y, y)


# ---- SLEEF's tanhf (Sleef_tanhf*_u10, FMA builds): what Vectorized<float>::tanh computes ---------
# exp(|x|) as a float-float pair (expk2f), then (e - 1/e) / (e + 1/e) in float-float arithmetic;
# every fused step is one fma32. Measured against upstream's SIMD lanes (glibc's tanhf, which the
# scalar loop calls, is another function: not correctly rounded).
_R_LN2F = _F32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = _F32(0.693145751953125), _F32(1.428606765330187045e-06)
_EXPK2F_POLY = [_F32(c) for c in (0.1394256484e-2, 0.8333456703e-2, 0.4166637361e-1)]


def _df_add2(x, y):
    """dfadd2 of a pair and a pair or a float (Knuth's two-sum of the heads)."""
    y0, y1 = y if isinstance(y, tuple) else (y, None)
    s = x[0] + y0
    v = s - x[0]
    t = (x[0] - (s - v)) + (y0 - v)
    return s, t + (x[1] if y1 is None else x[1] + y1)


def _df_mul(x, y, fused):
    """dfmul of a pair and a pair or a float."""
    if not isinstance(y, tuple):
        s = x[0] * y
        return s, fused(x[1], y, fused(x[0], y, -s))
    s = x[0] * y[0]
    return s, fused(x[0], y[1], fused(x[1], y[0], fused(x[0], y[0], -s)))


def _expk2f(y, fused):
    u = y * _R_LN2F
    q = _quotient(np.rint(u), 32)
    qf = q.astype(_F32)
    s = _df_add2(_df_add2((y, np.zeros_like(y)), qf * -_L2U), qf * -_L2L)
    u = np.full(y.shape, _F32(0.1980960224e-3), _F32)
    for c in _EXPK2F_POLY:
        u = fused(u, s[0], c)
    t = _df_add2(_df_mul(s, u, fused), _F32(0.166666659414234244790680580464))
    t = _df_add2(_df_mul(s, t, fused), _F32(0.5))
    sq = s[0] * s[0]
    t = _df_add2(s, _df_mul((sq, fused(s[0] + s[0], s[1], fused(s[0], s[0], -sq))), t, fused))
    h = _F32(1) + t[0]  # dfadd(1, t)
    t = h, ((_F32(1) - h) + t[0]) + t[1]
    return tuple(_ldexp2(v, q, 0x7F, 23, _F32) for v in t)


def _tanhf_steps(x, fused):
    y = np.abs(x)
    d = _expk2f(y, fused)
    r = _F32(1) / d[0]  # dfrec
    e = r, r * fused(-d[1], r, fused(-d[0], r, _F32(1)))
    n = d[0] - e[0]  # dfadd(d, -e), dfadd(d, e): |d| >= |e|
    n = n, (((d[0] - n) - e[0]) + d[1]) - e[1]
    m = d[0] + e[0]
    m = m, (((d[0] - m) + e[0]) + d[1]) + e[1]
    t = _F32(1) / m[0]  # dfdiv(n, m)
    q = n[0] * t
    w = fused(-m[1], t, fused(-m[0], t, _F32(1)))
    y = q + fused(q, w, fused(n[1], t, fused(t, n[0], -q)))
    y = np.where((np.abs(x) > _F32(8.664339742)) | (y != y), _F32(1), y)
    # a NaN x: all bits set (vor with the isnan mask)
    return np.where(x != x, _ALL_ONES, np.copysign(y, x)).astype(_F32)


def sleef_tanhf(x):
    """Sleef_tanhf_u10 of a float32 array."""
    with np.errstate(all="ignore"):
        return _tanhf_steps(x, fma32)


def sleef_log1pf(d):
    """Sleef_log1pf_u10 of a float32 array: 2 atanh(m / (2 + m)) of the reduced argument in
    float-float steps, plus e ln 2."""
    one = _F32(1)
    with np.errstate(all="ignore"):
        e = (np.frexp((d + one) * _F32(1 / 0.75))[1] - 1).astype(np.int32)  # ilogb / getexp
        t = np.ldexp(np.ones_like(d), -e).astype(_F32)
        m = fma32(d, t, t - one)
        ef = e.astype(_F32)
        s = _df_mul((_LN2_HI, _LN2_LO), ef, fma32)
        a = _F32(2) + m
        den = a, (_F32(2) - a) + m
        r = one / den[0]  # dfdiv((m, 0), den)
        q = m * r
        x = q, fma32(q, fma32(-den[1], r, fma32(-den[0], r, one)), fma32(r, m, -q))
        x2 = x[0] * x[0]
        p = fma32(fma32(np.full_like(d, _F32(0.3027294874)), x2, _F32(0.3996108174)), x2,
                  _F32(0.6666694880))
        h = s[0] + x[0] * _F32(2)  # dfadd(s, 2x), then dfadd(s, x^3 p)
        s = h, (((s[0] - h) + x[0] * _F32(2)) + s[1]) + x[1] * _F32(2)
        y = (x2 * x[0]) * p
        h = s[0] + y
        r = h + (((s[0] - h) + y) + s[1])
        r = np.where(d > _F32(1e38), _F32(np.inf), r)
        r = np.where(d < -one, _ALL_ONES, np.where(d == -one, _F32(-np.inf), r))
        return np.where((d == 0) & np.signbit(d), d, r).astype(_F32)


_LN2_HI, _LN2_LO = _F32(0.69314718246459960938), _F32(-1.904654323148236017e-09)


def _spread(ops, dt, dy, x):
    """x broadcast to the result's shape, and the SIMD lanes (``simd_lanes``) likewise."""
    mask = simd_lanes(ops, dt.itemsize)
    x = np.broadcast_to(x, np.broadcast_shapes(dy.shape, x.shape))
    return x, None if mask is None else np.broadcast_to(mask, x.shape)


def _lanes(z, mask, simd, glibc: str):
    """A function as each lane computes it: ``simd`` (SLEEF's) in the SIMD lanes of an
    AVX2/AVX512 build, glibc's ``glibc`` (element by element) elsewhere."""
    if mask is None or not cpu_capability.SIMD_MATH:
        return libmf(glibc, z)
    if mask.all():
        return simd(z)
    r = libmf(glibc, z)
    r[mask] = simd(z[mask])
    return r

# ---- gelu: dy * (cdf + x * pdf), cdf = (1 + erf(x / sqrt 2)) / 2, pdf = exp(-x^2 / 2) / sqrt(2 pi)
_SQRT1_2 = 0.70710678118654752440
_SQRT2 = 1.41421356237309504880
_2_SQRTPI = 1.12837916709551257390


@kernel("gelu_backward")
def gelu_backward(grad_output, self, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    dt = result_type(grad_output, self)
    check("GeluBackwardKernelImpl", dt, FLOAT_H)
    if dt is F64 or (approximate == "none" and _onednn(self)):
        return _decomposed("gelu_backward")(grad_output, self, approximate=approximate)
    ops = _promoted((grad_output, self))
    if approximate == "tanh":
        return binary("GeluBackwardKernelImpl", FLOAT_H, ops,
                      lambda dt, dy, x: _gelu_tanh(ops, dt, dy, x))

    def fn(dt, dy, x):
        t = x.dtype.type
        x, mask = _spread(ops, dt, dy, x)
        # (the reduced types' scalar loop multiplies float constants: the same float)
        beta = t(_2_SQRTPI * _SQRT1_2 * 0.5)
        cdf = t(0.5) * (t(1) + _lanes(np.array(x * t(_SQRT1_2)), mask, _vec_erf, "erff"))
        pdf = beta * loop_exp(np.array(x * x * t(-0.5)), mask)
        # float32's SIMD loop contracts cdf + x * pdf where its build fuses; its scalar loop and
        # the float16/bfloat16 loops do not (measured)
        plain = dy * (cdf + x * pdf)
        if dt in REDUCED:
            r = plain
        else:
            r = blend(mask, lambda: dy * fma(x, pdf, cdf), lambda: plain)
        return nan_values(r, *_gelu_nans(ops, dt, mask, dy, x))

    return binary("GeluBackwardKernelImpl", FLOAT_H, ops, fn)


_KAPPA = 0.044715


def _gelu_tanh(ops, dt, dy, x):
    """dy * (left' + right'), left = x / 2, right = 1 + tanh(inner), inner = beta (x + kappa x^3);
    both loops contract inner's, 1 - tanh^2's and inner''s multiply-adds (measured), not the sum."""
    t = x.dtype.type
    x, mask = _spread(ops, dt, dy, x)
    beta, kappa = t(_SQRT2 * _2_SQRTPI * 0.5), t(_KAPPA)
    x_sq = x * x
    th = _lanes(np.array(beta * fma(np.full_like(x, kappa), x_sq * x, x)), mask, sleef_tanhf,
                "tanhf")
    tanh_d = fma(-th, th, t(1))
    inner_d = beta * fma(np.full_like(x, t(3) * kappa), x_sq, t(1))
    r = dy * (t(0.5) * (t(1) + th) + t(0.5) * x * tanh_d * inner_d)
    return nan_values(r, *_gelu_nans(ops, dt, mask, dy, x, tanh=True))


def _gelu_nans(ops, dt, mask, dy, x, tanh=False):
    """Which NaN gelu_backward's loops keep (``nan_values``; measured): x's, then the invalid
    inf * 0 of an infinite x, then dy's -- except that float16's scalar loop in FMA builds keeps
    dy's first (and so does the AVX512 build's SIMD loop of the tanh form, in a quarter of its
    lanes), and that SLEEF's tanhf makes a NaN x's SIMD lanes all ones."""
    # (x * 0 of an infinite x: the invalid operation's NaN, as the loop's own)
    rules = [(x != x, x), (np.isinf(x), x * x.dtype.type(0)), (dy != dy, dy)]
    simd = mask is not None and cpu_capability.SIMD_MATH
    if tanh and simd:
        rules.insert(0, ((x != x) & mask, _ALL_ONES))
    if dt is F16 and cpu_capability.CONTRACTS_FMA:
        first = dy != dy
        if simd:
            keep = ~mask
            if tanh and cpu_capability.CAPABILITY == cpu_capability.AVX512:
                # the first float quarter of each 64-element step (its compiled operand order)
                pos = np.broadcast_to(run_positions(ops, 2)[0], mask.shape)
                keep = keep | (pos % 64 < 16)
            first = first & keep
        rules.insert(0, (first, dy))
    return rules



def _onednn(self) -> bool:
    """Activation.cpp's use_mkldnn: upstream's gelu_backward (exact form) runs oneDNN's."""
    import torch

    return (self._dtype in _ONEDNN and self.numel() > 1 and self.is_contiguous() and
            torch._C._get_mkldnn_enabled())


_ONEDNN = frozenset([F32] + [BF16] * cpu_capability.ONEDNN_BF16 +
                    [F16] * cpu_capability.ONEDNN_FP16)

# what ideep's itensor_view_from_dense takes; an out= of another dtype that the iterator's cast
# rule lets through (float64, complex) reaches it on the oneDNN path and is refused there
_ITENSOR = frozenset((F32, BF16, F16))


@functools.cache
def _gelu_iterator_out():
    """The out= kernel the door derives for gelu_backward (its checks, resize and cast)."""
    from ..dispatch.call import op
    from ..dispatch.structured import out_wrapper

    return out_wrapper(gelu_backward, op("gelu_backward.grad_input"), op("gelu_backward"))


@kernel("gelu_backward.grad_input")
def gelu_backward_out(grad_output, self, *, approximate="none", grad_input):
    """The TensorIterator out= kernel, then Activation.cpp's oneDNN path refusing an out it
    cannot view, after the meta function resized it."""
    result = _gelu_iterator_out()(grad_output, self, approximate=approximate,
                                  grad_input=grad_input)
    if approximate == "none" and _onednn(self) and grad_input._dtype not in _ITENSOR:
        raise RuntimeError("itensor_view_from_dense expects float/bfloat16/half/int8/fp8 tensor "
                           f"input{grad_input._dtype._cpp_name}")
    return result


# ---- mish: dy * (t + x s (1 - t^2)), t = tanh(log1p(exp(x))), s = 1 / (1 + exp(-x)) ---------
# (a CPU kernel upstream, which a CPU tensor reaches before mish_backward's composite)
@kernel("mish_backward")
def mish_backward(grad_output, self):
    dt = result_type(grad_output, self)
    check("mish_backward_cpu", dt, FLOAT_H)
    if dt is F64 or (F16 in (dt, self._dtype) and not np.isfinite(arr(self)).all()):
        # (float16's NaN or infinite x: which NaN each lane keeps depends on its place there)
        return _decomposed("mish_backward")(grad_output, self)
    ops = _promoted((grad_output, self))

    def fn(dt, dy, x):
        t = x.dtype.type
        x, mask = _spread(ops, dt, dy, x)
        sig = t(1) / (t(1) + loop_exp(np.array(-x), mask))
        ts = _lanes(_lanes(loop_exp(np.array(x), mask), mask, sleef_log1pf, "log1pf"), mask,
                    sleef_tanhf, "tanhf")
        # both loops contract 1 - t * t and t + (x s)(1 - t * t) (measured)
        r = dy * fma(x * sig, fma(-ts, ts, t(1)), ts)
        return nan_values(r, *_mish_nans(ops, dt, mask, dy, x))

    out = binary("mish_backward_cpu", FLOAT_H, ops, fn)
    if out._dtype is not self._dtype:  # the iterator's output is made like the input
        cast = empty_like(out, dtype=self._dtype)
        copy_into(cast, out)
        return cast
    return out


def _mish_nans(ops, dt, mask, dy, x):
    """Which NaN mish_backward's loops keep (``nan_values``; measured): a NaN x's -- negated
    (exp(-x)'s) in FMA builds' scalar loop and DEFAULT's element-wise vectors, as it is in
    DEFAULT's scalar loop, all ones in FMA builds' SIMD lanes
    (SLEEF's tanhf) --, then the invalid inf * 0 of an infinite x, then dy's."""
    fused = cpu_capability.CONTRACTS_FMA
    own = -x if fused else x
    if mask is not None:
        own = np.where(mask, _ALL_ONES if fused else -x, own)
    return [(x != x, own), (np.isinf(x), x * x.dtype.type(0)), (dy != dy, dy)]


# ---- softplus: grad where x * beta > threshold, else grad * z / (z + 1), z = exp(x * beta) ------
@kernel("softplus_backward")
def softplus_backward(grad_output, self, beta, threshold):
    ops = _promoted((grad_output, self))

    def fn(dt, a, b):
        beta_, th = scalar_of(beta, dt), scalar_of(threshold, dt)
        xb = b * beta_
        z = loop_exp(np.array(np.broadcast_to(xb, np.broadcast_shapes(a.shape, xb.shape))),
                     simd_lanes(ops, dt.itemsize))
        return np.where(xb > th, a, a * z / (z + z.dtype.type(1)))

    out = binary("softplus_backward_cpu", FLOAT_H, ops, fn)
    if out._dtype in REDUCED:
        _passed_through(out, ops, lambda x: x * scalar_of(beta, out._dtype) >
                        scalar_of(threshold, out._dtype))
    return out


def _passed_through(out, ops, keeps):
    """A float16/bfloat16 result where the scalar loop returned grad itself (``keeps(x)``, x in
    float32): grad's bits there, as that loop passes them on (the SIMD loop's lanes took grad
    through float and back, as ``binary`` stores them)."""
    g, x = ops
    a = out._np
    if a is None or not a.size or g._dtype is not out._dtype:
        return
    lanes = simd_lanes(ops, 2)
    xs = np.broadcast_to(operand(x, out._dtype, np.dtype(_F32)), a.shape)
    with np.errstate(invalid="ignore"):
        keep = np.asarray(keeps(xs))
    if lanes is not None:
        keep = keep & ~lanes
    if keep.any():
        a.view(np.uint16)[keep] = np.broadcast_to(arr(g), a.shape).view(np.uint16)[keep]


# ---- hardswish: 0 up to -3, grad from 3, grad * (x / 3 + 1/2) between ----------------------------
@kernel("hardswish_backward")
def hardswish_backward(grad_output, self):
    ops = _promoted((grad_output, self))

    def fn(dt, g, x):
        t = x.dtype.type
        mid = g * (x / t(3) + t(0.5))
        mask = simd_lanes(ops, dt.itemsize)
        # a NaN x: the SIMD loop computes the middle formula, the scalar loop returns grad
        return blend(mask, lambda: np.where(x <= -3, t(0), np.where(x >= 3, g, mid)),
                     lambda: np.where(x <= -3, t(0), np.where(x < 3, mid, g)))

    out = binary("hardswish_backward_cpu", FLOAT_H, ops, fn)
    if out._dtype in REDUCED:
        _passed_through(out, ops, lambda x: ~(x < 3))
    return out


# ---- logit: dy / (x (1 - x)) inside [lo, hi]; float16/bfloat16 round every operation ---------
@kernel("logit_backward")
def logit_backward(grad_output, self, eps=None):
    ops = _promoted((grad_output, self))
    dt = result_type(*ops)
    check("logit_backward_cpu", dt, FLOAT_H)
    e = -1.0 if eps is None else eps
    lo = checked(e, dt)  # Scalar.to<scalar_t>(): the tensor's own type
    reduced = dt in REDUCED
    npdt = D.numpy_dtype(dt)

    def rnd(v):
        return np.asarray(v).astype(npdt).astype(_F32) if reduced else v

    def fn(dt, dy, x):
        t = x.dtype.type
        x = np.broadcast_to(x, np.broadcast_shapes(dy.shape, x.shape))
        mask = simd_lanes(ops, dt.itemsize)
        grad = rnd(dy / rnd(x * rnd(t(1) - x)))
        if lo < 0:
            inside, fill = (x >= 0) & (x <= 1), t(np.nan)
            # the scalar loop: NaN only outside [0, 1], so a NaN x computes
            scalar_out = (x < 0) | (x > 1)
        else:
            hi = rnd(t(1) - lo)
            inside, fill = (x >= lo) & (x <= hi), t(0)
            scalar_out = (x < lo) | (x > hi)
        edge = rnd(dy * t(np.inf))
        scalar = np.where(scalar_out, fill, np.where((x == 0) | (x == 1), edge, grad))
        return blend(mask, lambda: np.where(inside, grad, fill), lambda: scalar)

    out = binary("logit_backward_cpu", FLOAT_H, ops, fn, computed=False)
    if dt is BF16:
        _logit_bf16_nans(out, ops, lo < 0)
    return out


def _logit_bf16_nans(out, ops, nan_fill):
    """bfloat16 NaNs as logit's loops store them: the fill (quiet_NaN, 0x7FC0) unconverted;
    a computed NaN as its lane's converter stores it (SIMD 0xFFFF outside DEFAULT)."""
    a = out._np
    if a is None or not a.size:
        return
    bits = a.view(np.uint16)
    nans = (bits & np.uint16(0x7FFF)) > np.uint16(0x7F80)
    if not nans.any():
        return
    vector = cpu_capability.CAPABILITY != cpu_capability.DEFAULT
    lanes = simd_lanes(ops, 2)
    lanes = np.zeros(a.shape, bool) if lanes is None else np.broadcast_to(lanes, a.shape)
    x = ops[1]
    xs = np.broadcast_to(operand(x, out._dtype, np.dtype(_F32)), a.shape)
    with np.errstate(invalid="ignore"):
        fill = ((xs < 0) | (xs > 1)) if nan_fill else np.zeros(a.shape, bool)
        if nan_fill:
            fill = fill | (lanes & (xs != xs))
    v = np.where(fill | ~lanes | (not vector), BF16_SCALAR_NAN, np.uint16(0xFFFF))
    bits[nans] = v[nans]
