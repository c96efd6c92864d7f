"""complex32 (ComplexHalf) against upstream torch 2.13.0, bit for bit.

Casts into complex32 from every dtype (a dense float32 sweep: every float16 value, every
midpoint between neighbouring float16 values and the float32 values either side of it, NaN
payloads, random bit patterns; float64 values a hair off those, where rounding through float32
first matters; all float16, bfloat16 and float8 bit patterns; complex64/complex128 pairs) and out
of it (65,536 values whose parts are every float16 value) to every dtype; ``torch.complex`` and
``view_as_complex`` of float16, ``view_as_real``/``real``/``imag`` back. Operators: what upstream
computes on complex32 agrees, what it refuses raises its error. Controls: rounding float64 to
float16 once (not through float32) and swapping the parts are each caught.
"""

from __future__ import annotations

import numpy as np
import pytest

import bit_stored_programs as P
from torchnative.csrc.core import complex_half, float8
from torchnative.testing import upstream

pytestmark = [pytest.mark.golden,
              pytest.mark.skipif(not upstream.available(), reason="no upstream environment")]

TARGETS = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
           "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "complex32",
           *float8.NAMES]
ALL_HALF = np.arange(65536, dtype=np.uint16).view(np.float16)


def _float32_sweep() -> np.ndarray:
    v = np.unique(ALL_HALF[np.isfinite(ALL_HALF)].astype(np.float64))
    mids = np.concatenate([(v[:-1] + v[1:]) / 2, [65520.0]]).astype(np.float32)  # 65520: to inf
    parts = [ALL_HALF.astype(np.float32), mids, np.nextafter(mids, np.float32(np.inf)),
             np.nextafter(mids, np.float32(-np.inf))]
    return np.concatenate(parts + [P.float32_edges(1)])


def _inputs():
    x32 = _float32_sweep()
    with np.errstate(all="ignore"):
        x64 = x32.astype(np.float64)
        nudge = x64 * 2.0 ** -40
        f64 = np.concatenate([x64, x64 + nudge, x64 - nudge, [1e300, -1e300]])
        c128 = (f64 + 1j * f64[::-1]).astype(np.complex128)
    pairs = complex_half.pack(ALL_HALF, ALL_HALF[::-1])  # every float16 value in each part
    inputs = {"f32": x32, "f64": f64, "f16": ALL_HALF, "i64": np.array(
                  [0, 1, -1, 2049, 4097, 65504, 65520, 70000, -2 ** 40, 2 ** 62], dtype=np.int64),
              "as_bfloat16": np.arange(65536, dtype=np.uint16).view(np.int16),
              "b": np.array([True, False]), "c64": (x32 + 1j * x32[::-1]).astype(np.complex64),
              "c128": c128, "bits_complex32": pairs.view(np.int32)}
    for n in float8.NAMES:
        inputs["as_" + n] = np.arange(256, dtype=np.uint8)
    return inputs


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    inputs = _inputs()
    ours, theirs = P.run_conversions(tmp_path_factory.mktemp("complex32"), ["complex32"], inputs,
                                     TARGETS)
    return inputs, ours, theirs


def test_every_cast_bit_for_bit(sides):
    _, ours, theirs = sides
    assert len(theirs) == 12 + len(TARGETS)
    assert P.byte_mismatches(ours, theirs) == {}


def test_control_single_rounding_and_swapped_parts_are_caught(sides):
    inputs, ours, theirs = sides
    wrong = dict(ours)
    with np.errstate(all="ignore"):
        once = inputs["f64"].astype(np.float16)  # numpy rounds float64 -> float16 directly
    wrong["f64->complex32"] = complex_half.pack(once, np.zeros_like(once)).view(np.uint8).reshape(-1)
    swapped = ours["c64->complex32"].reshape(-1, 2, 2)[:, ::-1].reshape(-1)
    wrong["c64->complex32"] = swapped
    bad = P.byte_mismatches(wrong, theirs)
    assert {"f64->complex32", "c64->complex32"} <= set(bad)


COMPOSE = r"""
import json, warnings
import numpy as np, torch
warnings.simplefilter("ignore")
h = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.float16)
out = {}
def raw(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes().hex()
z = torch.complex(h, h.flip(0))
out["complex"] = raw(z)
out["view_as_complex"] = raw(torch.view_as_complex(torch.stack([h, h.flip(0)], -1)))
out["view_as_complex_strided"] = str(torch.view_as_complex(torch.stack([h, h], -1)[::2]).stride())
out["view_as_real"] = raw(torch.view_as_real(z))
out["real"], out["imag"] = raw(z.real), raw(z.imag)
out["imag_stride"] = [z.imag.stride(), z.imag.storage_offset()]
out["chalf"] = {str(dt): raw(torch.linspace(-70000, 70000, 101, dtype=torch.float64).to(dt).chalf())
                for dt in (torch.float64, torch.float32, torch.float16, torch.int64, torch.bool)}
out["chalf_self"] = z.chalf().data_ptr() == z.data_ptr()
out["write_imag"] = raw((lambda w: (w.imag.fill_(2.5), w)[1])(z[:8].clone()))
out["repr"] = repr(z[:6]) + repr(torch.tensor([], dtype=torch.complex32))
try:
    torch.view_as_complex(torch.ones(3, dtype=torch.float16))
except Exception as e:
    out["view_as_complex_err"] = [type(e).__name__, str(e)]
print(json.dumps(out))
"""


def test_composing_and_splitting_complex32_agree():
    ours, theirs = upstream.run_both(COMPOSE, 900)
    assert {k for k in theirs if ours.get(k) != theirs[k]} == set()


@pytest.fixture(scope="module")
def outcomes():
    return P.run_outcomes(["complex32"])


def test_operators_agree_or_raise_upstreams_error(outcomes):
    ours, theirs = outcomes
    differ, refused = P.outcome_mismatches(ours, theirs)
    assert differ == {}
    assert sorted(refused) == ["complex32 dlpack"]  # numpy builds our capsules: no code for it


def test_control_a_wrong_operator_result_is_caught(outcomes):
    ours, theirs = outcomes
    wrong = dict(ours)
    status, (tag, dtype, shape, bits) = ours["complex32 add"]
    wrong["complex32 add"] = [status, [tag, dtype, shape, bits[2:] + bits[:2]]]
    differ, _ = P.outcome_mismatches(wrong, theirs)
    assert list(differ) == ["complex32 add"]
