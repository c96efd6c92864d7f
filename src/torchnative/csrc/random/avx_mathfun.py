"""Upstream's float Box-Muller on 16 values, as its x86 build executes it.

``NormalFill16<float>`` (aten/src/ATen/native/cpu/DistributionTemplates.h) uses the Cephes-style
``log256_ps`` and ``sincos256_ps`` of ``avx_mathfun.h`` under CPU_CAPABILITY_AVX2. Upstream
dispatches ``normal_stub`` on AVX512 machines to that AVX2 kernel too (measured: identical bits
with ATEN_CPU_CAPABILITY=avx2), while the DEFAULT (scalar, glibc logf/sinf/cosf) kernel differs by
hundreds of ulp near zero. So the AVX2 sequence is the one to reproduce.

GCC contracted many of the header's separate ``_mm256_mul_ps``/``_mm256_add_ps`` into FMAs; the
exact pairing below was read from the shipped libtorch_cpu.so (objdump of
``NormalFill16<float,true>::operator()`` in the AVX2 namespace) and every fused step is written
as ``fma32``. Constants are the bit patterns found in the binary. This is the reference, every
fused step rounded once; ``normal_fill32`` computes the same bits at numpy speed.
"""

from __future__ import annotations

import numpy as np

from .fpmath import F32, fma32, f32_from_bits as _c

ONE, HALF, MINUS_ONE, MINUS_TWO = _c(0x3F800000), _c(0x3F000000), _c(0xBF800000), _c(0xC0000000)
TWO_PI = _c(0x40C90FDB)  # (float)(2.0f * c10::pi<double>)
MIN_NORM_POS = _c(0x00800000)
SQRTHF = _c(0x3F3504F3)
LOG_P = [_c(b) for b in (0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F, 0x3E11E9BF,
                         0xBE2AAE50, 0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA)]
LOG_Q1, LOG_Q2 = _c(0xB95E8083), _c(0x3F318000)
FOPI = _c(0x3FA2F983)
DP1, DP2, DP3 = _c(0xBF490000), _c(0xB97DA000), _c(0xB3222169)  # minus_cephes_DP1..3
COS_P = [_c(0x37CCF5CE), _c(0xBAB6061A), _c(0x3D2AAAA5)]
SIN_P = [_c(0xB94CA1F9), _c(0x3C08839E), _c(0xBE2AAAA3)]
_SIGN = np.uint32(0x80000000)


def log256_ps(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, F32)
    invalid = x <= 0
    x = np.maximum(x, MIN_NORM_POS)
    bits = x.view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 127).astype(F32) + ONE
    x = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(F32)
    mask = x < SQRTHF
    tmp = np.where(mask, x, F32(0))
    x = x + MINUS_ONE
    e = e - np.where(mask, ONE, F32(0))
    x = x + tmp
    z = x * x
    y = fma32(LOG_P[0], x, LOG_P[1])
    for p in LOG_P[2:]:
        y = fma32(y, x, p)
    y = fma32(x * y, z, e * LOG_Q1)
    y = fma32(-z, HALF, y)
    x = fma32(e, LOG_Q2, x + y)
    return np.where(invalid, np.array(0xFFFFFFFF, np.uint32).view(F32), x)


def sincos256_ps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, F32)
    sign_sin = x.view(np.uint32) & _SIGN
    x = np.abs(x)
    j = (x * FOPI).astype(np.int32) + 1  # cvttps2dq truncates; values here are small and >= 0
    yf = (j & ~1).astype(F32)
    sign_sin = sign_sin ^ ((j & 4).astype(np.uint32) << np.uint32(29))
    poly_mask = (j & 2) == 0
    x = fma32(yf, DP1, x)
    x = fma32(DP2, yf, x)
    x = fma32(yf, DP3, x)
    sign_cos = ((~((j & ~1) - 2)) & 4).astype(np.uint32) << np.uint32(29)
    z = x * x
    yc = fma32(COS_P[0], z, COS_P[1])
    yc = fma32(yc, z, COS_P[2])
    yc = fma32(z, z * yc, -(z * HALF)) + ONE
    ys = fma32(SIN_P[0], z, SIN_P[1])
    ys = fma32(ys, z, SIN_P[2])
    ys = fma32(x, z * ys, x)
    zero = F32(0)
    ysin2, ysin1 = np.where(poly_mask, ys, zero), np.where(poly_mask, zero, yc)
    s = (ysin2 + ysin1).view(np.uint32) ^ sign_sin
    c = ((ys - ysin2) + (yc - ysin1)).view(np.uint32) ^ sign_cos
    return s.view(F32), c.view(F32)


def normal_fill16_f32_reference(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Box-Muller on rows of 16 float32 uniforms: lanes 0-7 give cos, 8-15 sin."""
    mean, std = F32(mean), F32(std)
    u1 = ONE - blocks[:, :8]
    u2 = blocks[:, 8:]
    radius = np.sqrt(log256_ps(u1) * MINUS_TWO)
    s, c = sincos256_ps(TWO_PI * u2)
    out = np.empty_like(blocks)
    out[:, :8] = fma32(radius * c, std, mean)
    out[:, 8:] = fma32(radius * s, std, mean)
    return out
