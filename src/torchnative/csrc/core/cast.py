"""Element casts between dtypes, as upstream's CPU copy kernel does them (``tensor.to(dtype)``).

numpy's ``astype`` agrees with upstream where C++ defines the result. Where it does not, upstream's
x86-64 build has concrete answers, measured on torch 2.13.0 and reproduced here:

* float -> integer truncates toward zero. NaN, inf and out-of-range values follow the x86
  ``cvtt*2si`` instructions, which return the "integer indefinite" (the most negative value):
  int32 gets -2**31, int64 gets -2**63. int8/int16/uint16 are computed through int32 and wrap
  (so NaN -> 0, 300.7 -> int8 44, 1e10 -> int16 0); uint8 goes through int64 on purpose (c10's
  ``static_cast_with_inter_type<uint8_t>``), as does uint32 (300.7 -> 44, -1.5 -> 255,
  1e10 -> uint32 1410065408); uint64 is ``x >= 2**63 ? cvtt64(x - 2**63) ^ 2**63 : cvtt64(x)``
  (NaN -> 2**63, inf -> 0, -1.5 -> 2**64 - 1).
  Known divergence: for *contiguous* float -> uint32 runs upstream's auto-vectorized loop answers
  out-of-range and NaN elements differently (NaN -> 2**31, 1e10 -> 0) except in the loop's scalar
  tail; we give the scalar answer everywhere (it is also what single elements and strided tensors
  get upstream). In-range values agree on every path.
* float -> bool is ``x != 0`` (NaN -> True); complex -> bool is ``real != 0 or imag != 0``.
* complex -> real takes the real part and warns once per process, like upstream's
  ``TORCH_WARN_ONCE`` (its "(Triggered internally at ...)" suffix names a C++ file we do not have).
* float16/bfloat16/float8 targets are reached through float32, as c10's constructors take a float:
  float64 -> float16 therefore rounds twice (1 + 2**-11 + 2**-40 -> 1.0), as upstream does, and
  int64 -> bfloat16 too. Rounding is to nearest even. bfloat16 NaN is stored as 0xFFFF from
  float32/float64 arrays (upstream's vectorized converter) and 0x7FC0 from a single value or
  another dtype (c10's scalar one); the copy kernel then settles which of its elements took which
  converter (kernels/simd_lanes.py, copy_nans), and a Python sequence converts value by value.
* float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) is encoded and decoded by ``float8.py`` (c10's
  routines on the bit patterns); float8_e8m0fnu ignores the sign and stores 0 (and -0) as 2**-127.
* complex32 is reached through complex64 (c10's complex<Half> takes each part through float):
  float64 -> complex32 rounds twice, like float64 -> float16; complex32 widens exactly.
* NaN payloads, bit for bit as upstream's contiguous path: float -> float16 behaves like x86 F16C
  (quiet, keep the top payload bits; numpy's software conversion differs for signalling NaNs);
  float8 NaNs widen to upstream's patterns (e5m2 by a shift into float16 bits, e4m3fn to
  0x7FF00000, the fnuz types and e8m0 to the signalling 0x7F800001), and NaN from the fnuz types
  or e8m0 becomes 0 in integer types where other NaNs give the integer indefinite.
"""

from __future__ import annotations

import numpy as np

from . import complex_half, float8
from . import dtypes as D
from ..platform.torch_warn import torch_warn_once

_B = D.BY_NAME
_BOOL, _F32, _F64 = _B["bool"], _B["float32"], _B["float64"]
_F16, _C32, _C64 = _B["float16"], _B["complex32"], _B["complex64"]
_BF16 = _B["bfloat16"]
_F32_NP = np.dtype(np.float32)
_BF16_NP = D.numpy_dtype(_BF16) if D.has_storage(_BF16) else None
_MAX = np.maximum.reduce
_VIA_INT32 = frozenset(_B[n] for n in ("int8", "int16", "uint16", "int32"))
_LOWP = frozenset(d for d in D.FLOATING if d not in (_F32, _F64))  # f16, bf16, float8 (, float4)
# float8_e8m0fnu's NaN decodes to this float32 bit pattern upstream (its payload survives).
_E8M0_NAN_BITS = 0x7F800001

_COMPLEX_WARNING = "Casting complex values to real discards the imaginary part"


def _warn_complex_to_real():
    torch_warn_once(_COMPLEX_WARNING)


def _cvtt(x: np.ndarray, bits: int) -> np.ndarray:
    """x86 cvttsd2si (32 or 64 bit) on float64 values: truncate, "integer indefinite" if unrepresentable."""
    itype = np.int32 if bits == 32 else np.int64
    lim = 2.0 ** (bits - 1)
    r = np.trunc(x)
    ok = (r >= -lim) & (r < lim)  # False for NaN as well
    return np.where(ok, np.where(ok, r, 0).astype(itype), itype(np.iinfo(itype).min))


def _float_to_int(x: np.ndarray, dst: D.dtype, dst_np: np.dtype) -> np.ndarray:
    if dst in _VIA_INT32:
        return _cvtt(x, 32).astype(dst_np)
    if dst is _B["uint64"]:
        hi = x >= 2.0 ** 63
        top = _cvtt(x - 2.0 ** 63, 64) ^ np.int64(-(2 ** 63))
        return np.where(hi, top, _cvtt(x, 64)).astype(np.uint64)
    return _cvtt(x, 64).astype(dst_np)  # int64, uint8, uint32: through int64, wrapping


def _float8_to_float32(a: np.ndarray, src: D.dtype) -> np.ndarray:
    """Decode float8 exactly, NaNs with upstream's bit patterns."""
    if src._name in float8.NAMES:
        return float8.decode(a, src._name)
    x = a.astype(np.float32)  # float8_e8m0fnu (ml_dtypes)
    nan = np.isnan(x)
    if nan.any():
        x.view(np.uint32)[...] = np.where(nan, np.uint32(_E8M0_NAN_BITS), x.view(np.uint32))
    return x


def _from_float32(x: np.ndarray, src: D.dtype, dst: D.dtype, dst_np: np.dtype,
                  vector_nans=None) -> np.ndarray:
    """float32 values to a 16- or 8-bit float type, with upstream's overflow and NaN conventions
    (``vector_nans``: see ``cast_array``)."""
    name = dst._name
    if name in float8.NAMES:
        return float8.encode(x, name)
    if name == "float8_e8m0fnu":
        out = np.abs(x).astype(dst_np)
        out.view(np.uint8)[...] = np.where(x == 0, np.uint8(0), out.view(np.uint8))
        return out
    out = x.astype(dst_np)
    nan = np.isnan(x)
    if name == "float16" and nan.any():
        _STORED[0] += 1
        # x86 F16C (upstream's vectorized path): quiet the NaN, keep the top 10 payload bits.
        # numpy's software conversion instead keeps a signalling NaN signalling (0x7c01).
        b = x.view(np.uint32)
        sign = (b >> np.uint32(16)) & np.uint32(0x8000)
        half = sign | np.uint32(0x7E00) | ((b & np.uint32(0x7FFFFF)) >> np.uint32(13))
        out.view(np.uint16)[...] = np.where(nan, half.astype(np.uint16), out.view(np.uint16))
    elif name == "bfloat16" and nan.any():
        _STORED[0] += 1
        # a 0-d array is one value: c10's scalar constructor's NaN
        vector = src in (_F32, _F64) and x.ndim
        bits = BF16_VECTOR_NAN if vector else BF16_SCALAR_NAN
        out.view(np.uint16)[...] = np.where(nan, bits, out.view(np.uint16))
        if vector and vector_nans is not None:
            out = vector_nans(out)
    return out


_STORED = [0]


def nan_stamp() -> int:
    """How many float16/bfloat16 arrays holding a NaN ``cast_array`` has converted so far: a
    computation across which it stays the same converted no NaN (a kernel then need not look
    for one in its result)."""
    return _STORED[0]


BF16_VECTOR_NAN = np.uint16(0xFFFF)  # upstream's vectorized float -> bfloat16 converter's NaN
BF16_SCALAR_NAN = np.uint16(0x7FC0)  # c10's scalar constructor's


def bf16_nans(a: np.ndarray) -> np.ndarray:
    """Where the bfloat16 storage ``a`` holds a NaN (any sign, any payload)."""
    return (a.view(np.uint16) & np.uint16(0x7FFF)) > np.uint16(0x7F80)


def scalar_nans(a: np.ndarray, vector=None) -> np.ndarray:
    """``a`` (bfloat16 storage) with its NaNs stored, in place, as c10's scalar constructor
    stores them: values converted one by one, as from a Python sequence, or by a kernel's scalar
    loop -- except where ``vector`` (a mask over ``a``: the elements the SIMD loop converted)."""
    nans = bf16_nans(a)
    if vector is not None:
        nans &= ~vector
    a.view(np.uint16)[nans] = BF16_SCALAR_NAN
    return a


def _bfloat16_float32(a, src: D.dtype, dst: D.dtype):
    """The float32 <-> bfloat16 casts of every bfloat16 kernel, without the general path's
    per-call overhead; None for anything else. Widening is exact; narrowing is ml_dtypes'
    round to nearest even (the same bits as upstream's, checked over all 2**32 float32 patterns),
    NaN excepted: an array holding one takes the general path (0xFFFF, as upstream's)."""
    if type(a) is not np.ndarray:
        return None
    if src is _BF16 and dst is _F32 and a.dtype == _BF16_NP:
        return a.astype(np.float32)
    if src is _F32 and dst is _BF16 and a.dtype == _F32_NP and a.size:
        top = _MAX(a, axis=None)  # NaN propagates; no NaN, no warning from the cast below
        if top == top:
            return a.astype(_BF16_NP)
    return None


def cast_array(a, src: D.dtype, dst: D.dtype, vector_nans=None) -> np.ndarray:
    """A new array of ``dst``'s storage holding ``a`` (stored as ``src``) converted as upstream does.

    ``vector_nans``: for float32/float64 -> bfloat16, a function given the result when it holds a
    NaN (each stored 0xFFFF, the vectorized converter's) that returns it with each NaN as the
    caller's loop stores it (the copy kernel's, kernels/simd_lanes.py, copy_nans).

    Refuses by name (TorchnativeNotImplementedError) when either dtype has no numpy storage.
    """
    if (src is _BF16 or dst is _BF16) and (fast := _bfloat16_float32(a, src, dst)) is not None:
        return fast
    dst_np = D.numpy_dtype(dst)
    D.numpy_dtype(src)
    a, orig_src = np.asarray(a), src
    with np.errstate(all="ignore"):  # overflow and NaN casts are defined below, not warnings
        if src is dst:
            return a.astype(dst_np, copy=True)
        if src is _C32:
            if dst is _F16:  # the real part as it is stored (a signalling NaN stays one)
                _warn_complex_to_real()
                return a["real"].copy()
            a, src = complex_half.widen(a), _C64
        if dst is _C32:
            c = cast_array(a, src, _C64)
            return complex_half.pack(_from_float32(c.real.copy(), _F32, _F16, np.dtype(np.float16)),
                                     _from_float32(c.imag.copy(), _F32, _F16, np.dtype(np.float16)))
        if src in D.COMPLEX:
            if dst is _BOOL:
                return np.asarray(a != 0)
            if dst in D.COMPLEX:
                return a.astype(dst_np)  # each part rounds to nearest even
            _warn_complex_to_real()
            a, src = a.real, src.to_real()
            if src is dst:
                return a.astype(dst_np, copy=True)
        if src in D.FLOAT8:
            a, src = _float8_to_float32(a, src), _F32
        if dst is _BOOL:
            return np.asarray((a.astype(np.float32) if src in _LOWP else a) != 0)
        if orig_src in D.FLOAT8:
            if dst in D.INTEGRAL and orig_src._name not in ("float8_e5m2", "float8_e4m3fn"):
                # measured: NaN from the fnuz types and e8m0 becomes 0 in every integer type
                ints = _float_to_int(a.astype(np.float64), dst, dst_np)
                return np.where(np.isnan(a), dst_np.type(0), ints)
        if dst in D.COMPLEX:
            return cast_array(a, src, dst.to_real()).astype(dst_np)
        if dst in D.INTEGRAL:
            if src in D.FLOATING:
                return _float_to_int(a.astype(np.float64), dst, dst_np)
            return a.astype(dst_np)  # integers and bool wrap modulo 2**bits
        if dst is _F64:
            return a.astype(np.float64)
        x32 = a.astype(np.float32)  # float64 and int64 round once, to nearest even
        if dst is _F32:
            return x32
        return _from_float32(x32, orig_src, dst, dst_np, vector_nans)


def readable(a: np.ndarray, d: D.dtype) -> np.ndarray:
    """``a``'s values in a numpy type that holds them exactly: complex64 for complex32, float32
    for float8 (their storage is bit patterns); other arrays as they are."""
    if d not in D.BIT_STORED:
        return a
    return complex_half.widen(a) if d is _C32 else _float8_to_float32(a, d)
