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

from ..platform import cpu_capability
from ..random.fpmath import contracted32, contracted64, fma32
from .pointwise_base import quiet
from .simd_lanes import lanes

_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128,
          np.dtype(np.float16): np.float64}


def exact(fn, x: np.ndarray, *rest):
    """fn(x, *rest) computed in float64/complex128 and rounded once to x's dtype."""
    wide = _WIDER.get(x.dtype)
    if wide is None:
        return fn(x, *rest)
    if not rest and x.size > CHUNK and x.dtype == np.float32 and fn in _REAL_UFUNCS and \
            x.flags.c_contiguous:
        return _exact_chunks(fn, x)
    r = fn(x.astype(wide), *(np.asarray(a).astype(wide) for a in rest))
    if r.dtype.kind != "c" and x.dtype.kind == "c":  # abs/angle of complex64 -> float32
        return r.astype(np.float32)
    return r.astype(x.dtype)


# Elements per chunk of a large float32 evaluation: its float64 buffers (2 x 128 KiB) stay in
# the L2 cache and are reused, where whole-array float64 temporaries are fresh pages every call.
CHUNK = 16384

# float64 -> float64 functions of one argument, elementwise: chunks give the same bits
_REAL_UFUNCS = frozenset((np.exp, np.exp2, np.expm1, np.log, np.log1p, np.log2, np.log10,
                          np.tanh, np.sinh, np.cosh, np.sin, np.cos, np.tan, np.arcsin,
                          np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh, np.sqrt,
                          np.cbrt))


def _exact_chunks(fn, x: np.ndarray) -> np.ndarray:
    """``exact(fn, x)`` of a C-contiguous float32 array, CHUNK elements at a time: each widened
    into one buffer and evaluated into another (never in place, so numpy takes the loop it takes
    for fresh arrays), then rounded into the result."""
    out = np.empty(x.shape, np.float32)
    xf, of = x.reshape(-1), out.reshape(-1)
    wide, val = np.empty(CHUNK, np.float64), np.empty(CHUNK, np.float64)
    for i in range(0, xf.size, CHUNK):
        xs = xf[i:i + CHUNK]
        n = xs.size
        w, v = wide[:n], val[:n]
        np.copyto(w, xs)
        fn(w, out=v)
        np.copyto(of[i:i + n], v, casting="same_kind")
    return out


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


def _small(x):  # |x| < 0.84375: erf = x + x * y
    z = x * x
    return _poly(z, _PP) / _poly(z, _QQ)


def _mid(ax):  # 0.84375 <= |x| < 1.25: erf = erx + P/Q
    s = ax - 1.0
    return _poly(s, _PA) / _poly(s, _QA)


def _tail(ax):  # 1.25 <= |x| < 28: erfc(|x|)
    s2 = 1.0 / (ax * ax)
    rs = np.where(ax < 1 / 0.35, _poly(s2, _RA) / _poly(s2, _SA),
                  _poly(s2, _RB) / _poly(s2, _SB))
    zt = (ax.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
    return np.exp(-zt * zt - 0.5625) * np.exp((zt - ax) * (zt + ax) + rs) / ax


def _pieces(x, small, mid, tail, other):
    """Evaluate each range only on its own elements (the tail's two exps are the costly part)."""
    shape = x.shape
    x = x.reshape(-1)
    out = np.empty_like(x)
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        for mask, fn in ((ax < 0.84375, small), ((ax >= 0.84375) & (ax < 1.25), mid),
                         ((ax >= 1.25) & (ax < 28), tail), (~(ax < 28), other)):
            if fn is None:
                continue
            sel = np.flatnonzero(mask)
            if sel.size:
                out[sel] = fn(x[sel])
    return out.reshape(shape)


def erf64(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)

    def small(v):
        return np.where(np.abs(v) < 2.0 ** -28, (8 * v + _EFX8 * v) / 8, v + v * _small(v))

    def mid(v):
        return np.copysign(_ERX + _mid(np.abs(v)), v)

    def tail(v):
        ax = np.abs(v)
        return np.copysign(np.where(ax < 6, 1.0 - _tail(ax), 1.0), v)

    def rest(v):  # |x| >= 28, inf and NaN
        return np.where(np.isnan(v), v, np.copysign(1.0, v))

    return _pieces(x, small, mid, tail, rest)


def erfc64(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)

    def small(v):
        y = _small(v)
        return np.where(v < 0.25, 1.0 - (v + v * y), 0.5 - (v - 0.5 + v * y))

    def mid(v):
        pq = _mid(np.abs(v))
        return np.where(v >= 0, 1.0 - _ERX - pq, 1.0 + (_ERX + pq))

    def tail(v):
        t = _tail(np.abs(v))
        return np.where(v > 0, t, np.where(v < -6, 2.0, 2.0 - t))

    def rest(v):
        return np.where(np.isnan(v), v, np.where(v > 0, 0.0, 2.0))

    return _pieces(x, small, mid, tail, rest)


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
        num = fma(fma(fma(np.full_like(z, a[3]), z, a[2]), z, a[1]), z, a[0])
        dem = fma(fma(fma(fma(np.full_like(z, b[3]), z, b[2]), z, b[1]), z, b[0]), z, one)
        central = y * num / dem
        z2 = np.sqrt(-exact(np.log, (one - ay) / t(2)))
        num2 = fma(fma(fma(np.full_like(z2, c[3]), z2, c[2]), z2, c[1]), z2, c[0])
        dem2 = fma(fma(np.full_like(z2, d[1]), z2, d[0]), z2, one)
        outer = np.copysign(num2, y) / dem2
        x = np.where(ay <= t(0.7), central, outer)
        k = t(2.0) / t(np.sqrt(np.pi))  # static_cast<T>(2) / static_cast<T>(sqrt(pi))
        for _ in range(2):
            x = x - (erf(x) - y) / (k * exact(np.exp, -x * x))
        x = np.where(ay == one, np.copysign(t(np.inf), y), x)
        return np.where(ay > one, t(np.nan), x).astype(y.dtype, copy=False)


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
        t = one / fma32(p, ax, one)
        r = fma32(fma32(fma32(fma32(p5, t, p4), t, p3), t, p2), t, p1)
        e = exact(np.exp, -(x * x))
        tmp6 = -e * t
        y = fma32(tmp6, r, one)
    return np.where(np.signbit(x), -y, y)


# Upstream's SIMD width and oneDNN's choices in this process (see cpu_capability).
VEC_BYTES = cpu_capability.VEC_BYTES
ONEDNN_AVX512 = cpu_capability.ONEDNN_AVX512
ONEDNN_AVX2 = cpu_capability.ONEDNN_AVX2
ONEDNN_SSE41 = cpu_capability.ONEDNN_SSE41
ONEDNN_BF16 = cpu_capability.ONEDNN_BF16
ONEDNN_FP16 = cpu_capability.ONEDNN_FP16
SIMD_MATH = cpu_capability.SIMD_MATH


def vectorized_mask(shape, strides, itemsize: int):
    """Which elements of a one-input loop over a tensor of ``strides`` (in elements) upstream's
    ``vectorized_loop`` computes with its SIMD op (simd_lanes.lanes; ``itemsize``: the type its
    vectors hold); None when none is."""
    run = lanes(shape, [strides], itemsize)
    return None if run is None else run.mask


# oneDNN's eltwise_gelu_erf on AVX512 (what upstream's gelu calls for contiguous float32, and
# bfloat16 on CPUs with AVX512-BF16 support): erf(x/sqrt 2) as a degree-5 minimax polynomial in
# |x|, picked from 25 intervals by the float's exponent and top mantissa bits. Coefficients are
# oneDNN's (jit_uni_eltwise_injector), as float32 bit patterns, by degree then interval.
_GELU_POLY = np.array([
    [0xa6f2cb94, 0x32827792, 0x3381cc0c, 0x34523d4a, 0x351ac44d, 0x35f36d88, 0x36ee8229,
     0x37b8a3bb, 0x3867a213, 0x3940033b, 0x3a2a5a1d, 0x3ae35863, 0x3b7828f2, 0x3c08b14b,
     0x3c515ed3, 0xbb503236, 0xbd8d8e5e, 0xbe8abcd9, 0xbf0c19a2, 0xbeccb328, 0x3e176ced,
     0x3f470d99, 0x3f7abb28, 0x3f800000, 0x00000000],
    [0x3f4c422a, 0x3f4c421f, 0x3f4c4207, 0x3f4c41cb, 0x3f4c413b, 0x3f4c3fad, 0x3f4c3a2f,
     0x3f4c2d40, 0x3f4c146a, 0x3f4bc341, 0x3f4ad08c, 0x3f48f8cf, 0x3f45fac7, 0x3f404e07,
     0x3f3b980f, 0x3f48dff3, 0x3f78b21b, 0x3fbb0704, 0x40019c32, 0x3fe536d6, 0x3f81331e,
     0x3e6c8684, 0x3c98f936, 0x00000000, 0x3f800000],
    [0xb62173f4, 0x3735e4cf, 0x37f2ff89, 0x388c23be, 0x3917535c, 0x39ab2ab0, 0x3a60fadb,
     0x3af9b960, 0x3b6e5491, 0x3c0a4ec5, 0x3ca5aa8c, 0x3d2138d9, 0x3d8737d4, 0x3ddfb660,
     0x3e0f27ab, 0x3d94004b, 0xbe0efdeb, 0xbf1d96c3, 0xbf89db58, 0xbf6d9897, 0xbef69fb8,
     0xbdc4f8a8, 0xbbde6422, 0x00000000, 0x00000000],
    [0xbe081a19, 0xbe084570, 0xbe08639b, 0xbe089837, 0xbe08f409, 0xbe09ab95, 0xbe0b66d0,
     0xbe0e400a, 0xbe124df8, 0xbe1bde02, 0xbe2f19c9, 0xbe4931bf, 0xbe685fbc, 0xbe89c95f,
     0xbe96cbca, 0xbe8044aa, 0xbe0550f2, 0x3dcfd6a1, 0x3e94c826, 0x3e79345f, 0x3decec91,
     0x3ca46568, 0x3aa1e00a, 0x00000000, 0x00000000],
    [0xba3d61db, 0x39f097a3, 0x3a5845dc, 0x3ab1fa35, 0x3b0cefb8, 0x3b653ab6, 0x3bcae527,
     0x3c221712, 0x3c6c5840, 0x3cc0a703, 0x3d1dcc19, 0x3d63656d, 0x3d955907, 0x3dbf9910,
     0x3dd53f69, 0x3db7dcef, 0x3d639ebe, 0xba6ede48, 0xbd22be69, 0xbd041cf1, 0xbc64f5ab,
     0xbb097a32, 0xb8ebf380, 0x00000000, 0x00000000],
    [0x3cb7d80c, 0x3c9b6050, 0x3c978d11, 0x3c92e850, 0x3c8d058b, 0x3c848454, 0x3c6cd623,
     0x3c4c824b, 0x3c2a7935, 0x3be0b390, 0x3b0651ac, 0xbb232f53, 0xbbd42fa0, 0xbc2c5366,
     0xbc492c9e, 0xbc2a7aa6, 0xbbd55d04, 0xba823a76, 0x3b102aa8, 0x3ae25a7e, 0x3a31f792,
     0x38b84375, 0x3689bb5a, 0x00000000, 0x00000000],
], dtype=np.uint32).view(np.float32)
_GELU_RBOUND = np.array(0x40b15cee, dtype=np.uint32).view(np.float32)


_GELU_ROWS = np.ascontiguousarray(_GELU_POLY.astype(np.float64).T)  # (interval, degree)


def gelu_onednn(x: np.ndarray) -> np.ndarray:
    """oneDNN's AVX512 gelu_erf on float32 values: each fused multiply-add of the polynomial is
    evaluated exactly in float64 and rounded to float32, as the hardware does."""
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        idx = ax.view(np.int32) + np.int32(0xc21fffff - (1 << 32))  # wraps, as vpaddd does
        np.right_shift(idx, 21, out=idx)
        np.clip(idx, 1, 24, out=idx)
        np.putmask(idx, ax > _GELU_RBOUND, 23)
        a64 = ax.astype(np.float64)
        coef = _GELU_ROWS[idx]  # one gather of all six coefficients per element
        pol = coef[..., 5].copy()
        for deg in range(4, -1, -1):
            np.multiply(pol, a64, out=pol)
            np.add(pol, coef[..., deg], out=pol)
            pol = pol.astype(np.float32).astype(np.float64)
        pol = pol.astype(np.float32)
        np.negative(pol, out=pol, where=np.signbit(x))
        pol += np.float32(1)
        pol *= x
        pol *= np.float32(0.5)
        return pol


def _bits32(*words):
    return np.array(words, dtype=np.uint32).view(np.float32)


_EXP_LN_MIN, _EXP_LN_MAX, _EXP_LOG2E, _LN2 = _bits32(0xc2aeac50, 0x42b17218, 0x3fb8aa3b, 0x3f317218)
_EXP_POL = _bits32(0x3f7ffffb, 0x3efffee3, 0x3e2aad40, 0x3d2b9d0d, 0x3c07cfce)  # p1 .. p5
_AS_P, _AS_RSQRT2 = _bits32(0x3ea7ba05, 0x3f3504f3)
_AS_POL = np.array([0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429], np.float32)


def _mul_add32(a, b, c):
    """oneDNN's uni_vfmadd below AVX (SSE4.1): a multiply and an add, rounded apart."""
    with np.errstate(all="ignore"):
        return (np.float32(a) * b if np.isscalar(a) else a * b) + c


def _exp_onednn(x: np.ndarray, fmadd=fma32) -> np.ndarray:
    """oneDNN's jit exp on float32 (exp_compute_vector_fwd): 2^n times a degree-5 polynomial in
    the reduced argument, zero below ln(FLT_MIN)."""
    one, half = np.float32(1), np.float32(0.5)
    with np.errstate(all="ignore"):
        under = x < _EXP_LN_MIN
        x = np.maximum(np.minimum(x, _EXP_LN_MAX), _EXP_LN_MIN)
        n = np.floor(x * _EXP_LOG2E + half)
        r = fmadd(-n, _LN2, x)
        scale = ((np.rint(n - one).astype(np.int32) + 127) << 23).view(np.float32)
        scale = np.where(under, np.float32(0), scale)
        p = np.full_like(x, _EXP_POL[4])
        for c in _EXP_POL[3::-1]:
            p = fmadd(p, r, c)
        p = fmadd(p, r, one)
        return (p * scale) * np.float32(2)


def gelu_onednn_avx2(x: np.ndarray, fused: bool = True) -> np.ndarray:
    """oneDNN's gelu_erf below AVX512 (jit avx2): the Abramowitz-Stegun erf with oneDNN's own
    exp, every multiply-add fused as its vfmadd instructions are (``fused=False``: its SSE4.1
    build, where each is a multiply and an add)."""
    one = np.float32(1)
    fmadd = fma32 if fused else _mul_add32
    with np.errstate(all="ignore"):
        xs = x * _AS_RSQRT2
        t = one / fmadd(_AS_P, np.abs(xs), one)
        q = -_exp_onednn(-(xs * xs), fmadd) * t
        r = np.full_like(x, _AS_POL[4])
        for c in _AS_POL[3::-1]:
            r = fmadd(r, t, c)
        erf = fmadd(q, r, one)
        erf = np.where(np.signbit(x), -erf, erf)
        s = x * np.float32(0.5)
        return fmadd(erf, s, s)


# ---- fused multiply-add --------------------------------------------------------------------------
# Upstream's AVX2/AVX512 builds contract ``a * b + c`` into one fused multiply-add wherever the
# compiler sees it (vectorized and scalar loops alike), so ``addcmul``, ``add(alpha=)``, ``lerp``,
# polynomial evaluations... round once; the DEFAULT build rounds twice. The emulation of one
# rounding lives once, in random/fpmath.py (the random engine needs it too).

def fma(a, b, c, out=None, wide=None):
    """Upstream's compiled ``a * b + c`` in the dtype of ``a``: rounded once where its build
    contracts it into a fused multiply-add (float32/float64), twice where it does not (the
    DEFAULT capability; complex and reduced-precision types always). ``out``: an array of the
    result's shape and dtype to write it into (an in-place kernel's own). ``wide``: a float32
    ``a`` already widened to float64, which the computation may overwrite (``fpmath.fma32``)."""
    a = np.asarray(a)
    with quiet():
        if a.dtype == np.float32:
            return contracted32(a, b, c, out, wide)
        if a.dtype == np.float64:
            shape = np.broadcast_shapes(a.shape, np.shape(b), np.shape(c))
            r = np.asarray(contracted64(a, b, c)).reshape(shape)
        else:
            r = a * b + c
    if out is None:
        return r
    np.copyto(out, r)
    return out
