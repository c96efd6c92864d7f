"""float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) against upstream torch 2.13.0, bit for bit.

Casts: every one of the 256 bit patterns of each type to every dtype, and a dense sweep into
each type from float32 (all float16 values, every midpoint between neighbouring float8 values and
the float32 values either side of it, the overflow boundaries, NaNs with payloads, random bit
patterns), float64 (double rounding: values a hair off the midpoints), float16, bfloat16,
int64, bool and complex64. Operators: what upstream computes on these dtypes agrees, what it
refuses raises its error. Controls: a rounding that breaks ties the wrong way, a negative zero
kept in the fnuz types and a missing e4m3fn saturation are each caught by the same comparison.
"""

from __future__ import annotations

import numpy as np
import pytest

import bit_stored_programs as P
from torchnative.csrc.core import float8
from torchnative.testing import upstream

pytestmark = [pytest.mark.golden,
              pytest.mark.skipif(not upstream.available(), reason="no upstream environment")]

NAMES = float8.NAMES
TARGETS = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
           "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "complex32", *NAMES]


def _float32_sweep() -> np.ndarray:
    """Every float16 value, each float8 type's midpoints (and their float32 neighbours), the
    overflow boundaries, NaN payloads and random float32 bit patterns."""
    parts = [np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)]
    for n in NAMES:
        v = float8.decode(np.arange(256, dtype=np.uint8).view(float8.STORAGE[n]), n)
        v = np.unique(v[np.isfinite(v)].astype(np.float64))
        top = v[-1] + (v[-1] - v[-2])  # the next value the format would have
        mids = np.concatenate([(v[:-1] + v[1:]) / 2, [(v[-1] + top) / 2, top]]).astype(np.float32)
        for m in (mids, -mids):
            parts += [m, np.nextafter(m, np.float32(np.inf)), np.nextafter(m, np.float32(-np.inf))]
    return np.concatenate(parts + [P.float32_edges(0)])


def _inputs():
    x32 = _float32_sweep()
    x64 = x32.astype(np.float64)
    nudge = x64 * 2.0 ** -40  # just off every float32 value: rounding once differs from twice
    f64 = np.concatenate([x64, x64 + nudge, x64 - nudge, [1e300, -1e300, 1e-300]])
    ints = np.array([0, 1, -1, 7, 240, 241, 448, 449, 480, 57344, 61440, 65536, 2 ** 31, -2 ** 40,
                     2 ** 62, 123456789], dtype=np.int64)
    inputs = {"f32": x32, "f64": f64, "f16": np.arange(65536, dtype=np.uint16).view(np.float16),
              "as_bfloat16": np.arange(65536, dtype=np.uint16).view(np.int16), "i64": ints,
              "b": np.array([True, False]), "c64": (x32[:20000] + 1j * x32[-20000:]).astype(np.complex64)}
    for n in NAMES:
        inputs["bits_" + n] = np.arange(256, dtype=np.uint8)
    return inputs


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    inputs = _inputs()
    ours, theirs = P.run_conversions(tmp_path_factory.mktemp("float8"), NAMES, inputs, TARGETS)
    return inputs, ours, theirs


def test_every_cast_bit_for_bit(sides):
    _, ours, theirs = sides
    assert len(theirs) == len(NAMES) * (7 + len(TARGETS))
    assert P.byte_mismatches(ours, theirs) == {}


def test_control_wrong_tie_breaking_is_caught(sides):
    """Ties rounded toward zero instead of to even: only the midpoints differ, and they are found."""
    inputs, ours, theirs = sides
    for n in NAMES:
        key = f"f32->{n}"
        wrong = dict(ours)
        toward_zero = np.nextafter(inputs["f32"], np.float32(0))
        wrong[key] = float8.encode(np.where(np.isnan(inputs["f32"]), inputs["f32"], toward_zero), n).view(np.uint8)
        assert key in P.byte_mismatches(wrong, theirs), n


def test_control_fnuz_negative_zero_and_e4m3fn_saturation_are_caught(sides):
    inputs, ours, theirs = sides
    x = inputs["f32"]
    for n in ("float8_e4m3fnuz", "float8_e5m2fnuz"):
        wrong = dict(ours)
        bits = ours[f"f32->{n}"].copy()
        bits[(bits == 0) & np.signbit(x)] = 0x80  # -0 kept as the sign bit: the NaN pattern
        wrong[f"f32->{n}"] = bits
        assert f"f32->{n}" in P.byte_mismatches(wrong, theirs), n
    wrong = dict(ours)
    bits = ours["f32->float8_e4m3fn"].copy()
    bits[(np.abs(x) > 464) & np.isfinite(x)] |= 0x7F  # overflow to NaN instead of +-448
    wrong["f32->float8_e4m3fn"] = bits
    assert "f32->float8_e4m3fn" in P.byte_mismatches(wrong, theirs)


@pytest.fixture(scope="module")
def outcomes():
    return P.run_outcomes(NAMES)


def test_operators_agree_or_raise_upstreams_error(outcomes):
    ours, theirs = outcomes
    differ, refused = P.outcome_mismatches(ours, theirs)
    assert differ == {}
    # what ours refuses by name where upstream computes: only DLPack export (numpy has no code)
    assert sorted({k.split(" ", 1)[1] for k in refused}) == ["dlpack"]


def test_operators_cover_computing_and_refusing(outcomes):
    """The operator list exercises both sides of upstream's support on every type."""
    _, theirs = outcomes
    for n in NAMES:
        got = {k.split(" ", 1)[1]: v[0] for k, v in theirs.items() if k.startswith(n + " ")}
        assert got["mul"] == got["abs"] == got["cat"] == got["mm"] == "ok"
        assert got["add"] == got["sum"] == got["flip"] == got["mul_scalar"] == "err"


def test_control_a_wrong_operator_result_is_caught(outcomes):
    ours, theirs = outcomes
    wrong = dict(ours)
    status, (tag, dtype, shape, bits) = ours["float8_e4m3fn mul"]
    wrong["float8_e4m3fn mul"] = [status, [tag, dtype, shape, [b ^ 1 for b in bits]]]
    differ, _ = P.outcome_mismatches(wrong, theirs)
    assert list(differ) == ["float8_e4m3fn mul"]
