"""Elementwise math numpy lacks (erf, erfc, erfinv), and correctly rounded float32 evaluation.

numpy's float32 SIMD loops for exp/log/sin/... are allowed a few ulp of error; upstream's
(SLEEF's u10 functions, glibc's scalar ones) are within one ulp and nearly always correctly
rounded. ``exact`` evaluates a float32 (or complex64) function in float64 and rounds once, which
reproduces upstream's bits in the overwhelming majority of elements.

``erf``/``erfc`` follow the classic fdlibm (Sun, 1993) piecewise rational approximations, which
are accurate to under one ulp in float64 -- the accuracy of the C library functions upstream
calls; ``erfinv`` is upstream's own algorithm (calc_erfinv: a rational first guess and two
Newton steps), evaluated in the working precision as upstream does.
"""

from __future__ import annotations

import numpy as np

_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128,
          np.dtype(np.float16): np.float64}


def exact(fn, x: np.ndarray, *rest):
    """fn(x, *rest) computed in float64/complex128 and rounded once to x's dtype."""
    wide = _WIDER.get(x.dtype)
    if wide is None:
        return fn(x, *rest)
    r = fn(x.astype(wide), *(np.asarray(a).astype(wide) for a in rest))
    return r.astype(x.dtype)


def _poly(z, coeffs):
    r = np.full_like(z, coeffs[-1])
    for c in coeffs[-2::-1]:
        r = r * z + c
    return r


_ERX = 8.45062911510467529297e-01
_EFX8 = 1.02703333676410069053e+00
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
       1.32494738004321644526e-04, -3.96022827877536812320e-06)
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _erf_parts(x: np.ndarray):
    """Float64 pieces shared by erf and erfc: (|x|, small-range y, mid P/Q, large-range tail)."""
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        z = x * x
        y = _poly(z, _PP) / _poly(z, _QQ)                    # |x| < 0.84375: erf = x + x*y
        s = ax - 1.0
        pq = _poly(s, _PA) / _poly(s, _QA)                   # 0.84375 <= |x| < 1.25
        s2 = 1.0 / (ax * ax)
        rs = np.where(ax < 1 / 0.35, _poly(s2, _RA) / _poly(s2, _SA), _poly(s2, _RB) / _poly(s2, _SB))
        zt = (ax.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
        tail = np.exp(-zt * zt - 0.5625) * np.exp((zt - ax) * (zt + ax) + rs) / ax  # erfc(|x|)
    return ax, y, pq, tail


def erf64(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    ax, y, pq, tail = _erf_parts(x)
    with np.errstate(all="ignore"):
        r = np.where(ax < 2.0 ** -28, (8 * x + _EFX8 * x) / 8, x + x * y)
        mid = np.copysign(_ERX + pq, x)
        big = np.copysign(1.0 - tail, x)
        r = np.where(ax < 0.84375, r, np.where(ax < 1.25, mid, np.where(ax < 6, big,
                                                                        np.copysign(1.0, x))))
    return np.where(np.isnan(x), x, r)


def erfc64(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    ax, y, pq, tail = _erf_parts(x)
    with np.errstate(all="ignore"):
        small = np.where(x < 0.25, 1.0 - (x + x * y), 0.5 - (x - 0.5 + x * y))
        mid = np.where(x >= 0, 1.0 - _ERX - pq, 1.0 + (_ERX + pq))
        big = np.where(x > 0, tail, 2.0 - tail)
        r = np.where(ax < 0.84375, small, np.where(ax < 1.25, mid, big))
        r = np.where(ax >= 28, np.where(x > 0, 0.0, 2.0), r)
        r = np.where((x < 0) & (ax >= 6), 2.0, r)
    return np.where(np.isnan(x), x, r)


def erf(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float64:
        return erf64(x)
    return erf64(x.astype(np.float64)).astype(x.dtype)


def erfc(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float64:
        return erfc64(x)
    return erfc64(x.astype(np.float64)).astype(x.dtype)


_EI_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_EI_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_EI_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_EI_D = (3.543889200, 1.637067800)


def erfinv(y: np.ndarray) -> np.ndarray:
    """calc_erfinv in y's precision (float32 or float64): every step rounds as upstream's do."""
    t = y.dtype.type
    a = [t(v) for v in _EI_A]
    b = [t(v) for v in _EI_B]
    c = [t(v) for v in _EI_C]
    d = [t(v) for v in _EI_D]
    one = t(1)
    with np.errstate(all="ignore"):
        ay = np.abs(y)
        z = y * y
        num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0]
        dem = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + one
        central = y * num / dem
        z2 = np.sqrt(-exact(np.log, (one - ay) / t(2)))
        num2 = ((c[3] * z2 + c[2]) * z2 + c[1]) * z2 + c[0]
        dem2 = (d[1] * z2 + d[0]) * z2 + one
        outer = np.copysign(num2, y) / dem2
        x = np.where(ay <= t(0.7), central, outer)
        k = t(2.0 / np.sqrt(np.pi)) if y.dtype == np.float64 else t(t(2.0) / np.float32(np.sqrt(np.pi)))
        for _ in range(2):
            x = x - (erf(x) - y) / (k * exact(np.exp, -x * x))
        x = np.where(ay == one, np.copysign(t(np.inf), y), x)
        return np.where(ay > one, t(np.nan), x).astype(y.dtype, copy=False)


def _fma32(a, b, c):
    """float32 fused multiply-add: the float64 product of two float32 values is exact."""
    return (a.astype(np.float64) * b + c).astype(np.float32)


_AS = [np.float32(v) for v in (0.3275911, 0.254829592, -0.284496736, 1.421413741, -1.453152027,
                               1.061405429)]


def erf_vec32(x: np.ndarray) -> np.ndarray:
    """Upstream's Vectorized<float>::erf (AVX2/AVX512): the Abramowitz-Stegun 7.1.26 polynomial
    evaluated with fused multiply-adds, |error| <= 1.5e-7 -- what upstream's vectorized loops
    (gelu, reduced-precision erf) compute, not the correctly rounded erf."""
    p, p1, p2, p3, p4, p5 = _AS
    one = np.float32(1)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        t = one / _fma32(p, ax, one)
        r = _fma32(_fma32(_fma32(_fma32(p5, t, p4), t, p3), t, p2), t, p1)
        e = exact(np.exp, -(x * x))
        tmp6 = -e * t
        y = _fma32(tmp6, r, one)
    return np.where(np.signbit(x), -y, y)


def _vec_bytes() -> int:
    """Upstream's SIMD width on this machine: AVX512 (64 bytes) where the CPU has the subsets
    ATen's dispatch requires, else AVX2/NEON-sized (32 bytes)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        return 32
    need = ("avx512f", "avx512bw", "avx512vl", "avx512dq")
    return 64 if all(n in flags for n in need) else 32


VEC_BYTES = _vec_bytes()


def vectorized_mask(shape, strides, itemsize: int):
    """Which elements upstream's ``vectorized_loop`` computes with its SIMD op (the others go
    through the scalar op): along each contiguous inner run of n elements, the first
    ``n // (2 * lanes) * (2 * lanes)``. Returns None when no element is vectorized.

    ``strides`` are in elements. A dense tensor is one run in memory order; otherwise runs are
    the innermost (stride-1) dimension's rows. Runs split across threads (>= 32768 elements) are
    not modelled.
    """
    step = 2 * VEC_BYTES // itemsize
    n = int(np.prod(shape)) if shape else 1
    dims = [(st, sz) for sz, st in zip(shape, strides) if sz != 1]
    dense = True
    expected = 1
    for st, sz in sorted(dims):
        if st != expected:
            dense = False
            break
        expected *= sz
    if dense:
        cut = (n // step) * step
        if cut == 0:
            return None
        if not shape:
            return np.ones((), bool)
        pos = np.zeros(shape, dtype=np.int64)  # each element's place in memory order
        for d in range(len(shape)):
            if shape[d] != 1:
                idx = np.arange(shape[d]).reshape([-1 if i == d else 1 for i in range(len(shape))])
                pos = pos + idx * strides[d]
        return pos < cut
    inner = [d for d, (sz, st) in enumerate(zip(shape, strides)) if st == 1 and sz != 1]
    if not inner:
        return None
    d = inner[-1]
    m = shape[d]
    if m < step:
        return None
    along = np.arange(m) < (m // step) * step
    return np.broadcast_to(along.reshape([-1 if i == d else 1 for i in range(len(shape))]), shape)
