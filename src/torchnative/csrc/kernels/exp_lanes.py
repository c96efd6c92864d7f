"""exp as each lane of upstream's CPU loops computes it.

The AVX2/AVX512 builds' vectorized ops call SLEEF's expf/exp (u10); the scalar tail,
non-contiguous loops and the DEFAULT build call glibc's (element-wise std::exp). Neither is
always correctly rounded (SLEEF's float32 exp differs from the correctly rounded value in about
9% of elements), so both are reproduced: SLEEF's algorithm step by step (its fused multiply-adds
exact), glibc's as the correctly rounded value except within a hair of a midpoint, where glibc
itself is asked.
"""

from __future__ import annotations

import math

import numpy as np

from .pointwise_math import SIMD_MATH
from ..random.fpmath import _any_recheck, _needs_recheck, fma32, fma64, libmf, safe_libm

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
