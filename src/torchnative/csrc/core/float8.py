"""The float8 formats (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) as numpy holds them: their bit patterns.

numpy has no 8-bit float, so each format is stored in a one-byte structured dtype of its own (one
``u1`` field named after the format). The bytes are exactly upstream's, so storage, views,
copies, indexing and checkpoints need nothing else; a distinct numpy dtype per format keeps
``dtype_from_numpy`` unambiguous, and numpy's ufuncs refuse it (no arithmetic on raw bits by
accident). Values are reached only through ``decode``/``encode``:

* ``encode`` is c10's ``fp8*_from_fp32_value`` (c10/util/Float8_*.h) on float32 bits: round to
  nearest even by a biased add, subnormals by a float32 add of a "denorm mask", overflow to
  inf (e5m2), NaN (e4m3fn at 480 and above; the fnuz types' single NaN 0x80 at 2**8 / 2**16 and
  above, also reached by rounding up into the sign bit). e4m3fn is clamped to +-448 first:
  upstream's Float8_e4m3fn saturates on every CPU path (inf included), measured on torch 2.13.0.
  The fnuz types have no negative zero: a result that rounds to zero is +0.
* ``decode`` is exact; NaNs widen to the float32 patterns upstream's converters give them, since
  their payloads survive later casts (e5m2 by shifting into float16 bits and widening those
  quietly, e4m3fn to sign | 0x7FF00000, the fnuz NaN to 0x7F800001).
"""

from __future__ import annotations

import numpy as np

NAMES = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
STORAGE = {n: np.dtype([(n, "u1")]) for n in NAMES}

_U32 = np.uint32


def _u32(v: int) -> np.uint32:
    return _U32(v % 2 ** 32)  # C's unsigned wrap-around for the negative bias terms


class _Format:
    """The constants of one c10 ``fp8*_from_fp32_value`` routine."""

    __slots__ = ("mant_bits", "bias", "max_bits", "normal_min_bits", "denorm_bits", "fnuz",
                 "saturate", "nan_f32")

    def __init__(self, mant_bits, bias, max_bits, normal_min_bits, fnuz, saturate, nan_f32):
        self.mant_bits = mant_bits
        self.bias = bias
        self.max_bits = _U32(max_bits)  # |x| bits at and above which the result is NaN/inf
        self.normal_min_bits = _U32(normal_min_bits)  # below: the subnormal path
        # ((127 - bias) + (23 - mant_bits) + 1) << 23: adding it as a float rounds to a subnormal
        self.denorm_bits = _U32(((127 - bias) + (23 - mant_bits) + 1) << 23)
        self.fnuz = fnuz
        self.saturate = saturate  # largest finite value e4m3fn clamps to, else None
        self.nan_f32 = nan_f32


_FORMATS = {
    "float8_e4m3fn": _Format(3, 7, 1087 << 20, 121 << 23, False, 448.0, 0x7FF00000),
    "float8_e4m3fnuz": _Format(3, 8, 0x87 << 23, 121 << 23, True, None, 0x7F800001),
    "float8_e5m2": _Format(2, 15, 143 << 23, 113 << 23, False, None, None),
    "float8_e5m2fnuz": _Format(2, 16, 0x8F << 23, 7 << 27, True, None, 0x7F800001),
}


def _decode_table(name: str) -> np.ndarray:
    """float32 value of each of the 256 bit patterns, NaNs as upstream widens them."""
    bits = np.arange(256, dtype=np.uint16)
    if name == "float8_e5m2":  # the top byte of a float16, widened as x86's F16C does it
        out = (bits << np.uint16(8)).view(np.float16).astype(np.float32)
        u = out.view(np.uint32)
        u[np.isnan(out)] |= np.uint32(0x00400000)  # a signalling NaN comes out quiet
        return out
    f = _FORMATS[name]
    sign = np.where(bits & 0x80, -1.0, 1.0)
    exp = (bits >> f.mant_bits) & ((0x7F >> f.mant_bits))
    mant = bits & ((1 << f.mant_bits) - 1)
    scale = 2.0 ** f.mant_bits
    val = np.where(exp == 0, mant / scale * 2.0 ** (1 - f.bias),
                   (1 + mant / scale) * 2.0 ** (exp.astype(np.int64) - f.bias))
    out = (sign * val).astype(np.float32)
    u = out.view(np.uint32)
    if f.fnuz:
        out[0x80] = 0.0
        u[0x80] = f.nan_f32  # the one NaN (the bit pattern of negative zero)
    else:  # e4m3fn: all exponent and mantissa bits set, either sign
        u[0x7F] = f.nan_f32
        u[0xFF] = f.nan_f32 | 0x80000000
    return out


_DECODE = {n: _decode_table(n) for n in NAMES}


def bits(a: np.ndarray) -> np.ndarray:
    """The uint8 bit patterns of a float8-stored array (a view)."""
    return a.view(np.uint8)


def decode(a: np.ndarray, name: str) -> np.ndarray:
    """float32 values of a float8-stored array (exact)."""
    return _DECODE[name][bits(a)]


def encode(x: np.ndarray, name: str) -> np.ndarray:
    """float32 values rounded to the float8 format ``name``, as a float8-stored array."""
    f = _FORMATS[name]
    x = np.asarray(x, dtype=np.float32)
    if f.saturate is not None:
        x = np.clip(x, -f.saturate, f.saturate)  # NaN passes through
    with np.errstate(all="ignore"):
        fb = np.ascontiguousarray(x).view(_U32)
        sign = fb & _U32(0x80000000)
        mag = fb ^ sign
        denorm = _U32(f.denorm_bits).view(np.float32)
        sub = ((mag.view(np.float32) + denorm).view(_U32) - f.denorm_bits) & _U32(0xFF)
        shift = _U32(23 - f.mant_bits)
        odd = (mag >> shift) & _U32(1)
        rounding = _u32(((f.bias - 127) << 23) + (1 << (22 - f.mant_bits)) - 1)
        normal = ((mag + rounding + odd) >> shift) & _U32(0xFF)
        out = np.where(mag < f.normal_min_bits, sub, normal)
        if f.fnuz:
            out = np.where(mag >= f.max_bits, _U32(0x80), out | (sign >> _U32(24)))
            out = np.where((mag < f.normal_min_bits) & (sub == 0), _U32(0), out)
        else:
            if name == "float8_e5m2":
                over = np.where(mag > _U32(0x7F800000), _U32(0x7F), _U32(0x7C))
            else:
                over = _U32(0x7F)
            out = np.where(mag >= f.max_bits, over, out) | (sign >> _U32(24))
    return out.astype(np.uint8).view(STORAGE[name]).reshape(x.shape)


def is_storage(npdt) -> bool:
    return npdt in _BY_STORAGE


_BY_STORAGE = {v: k for k, v in STORAGE.items()}


def name_of(npdt) -> str:
    """The float8 format a storage dtype holds."""
    return _BY_STORAGE[npdt]
