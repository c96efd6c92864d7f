"""csrc/platform/libm_arrays.py: the C library's bits over arrays on every CPU, whichever loop
numpy picked for it (on an AVX-512 CPU numpy's float64 exp, acos, pow ... are its own)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from torchnative.csrc.platform import libm, libm_arrays as C

X = np.concatenate([np.linspace(-30, 30, 4001), [0.0, -0.0, 1e-300, 0.5, 1.0, -1.0, 700.0, 710.0,
                                                  np.inf, -np.inf, np.nan]])
DOMAIN = {"log": np.abs(X) + 1e-3, "log1p": np.abs(X), "arccos": X / 30.5}
PY = {"exp": math.exp, "expm1": math.expm1, "log": math.log, "log1p": math.log1p,
      "sin": math.sin, "cos": math.cos, "tan": math.tan, "arccos": math.acos}


def _c_double(name, *xs):
    return libm.function({"arccos": "acos"}.get(name, name), nargs=len(xs))(*xs)


@pytest.mark.parametrize("name", sorted(PY))
def test_float64_is_the_c_librarys(name):
    x = DOMAIN.get(name, X)
    got = getattr(C, name)(x)
    want = np.array([_c_double(name, float(v)) for v in x])
    assert got.dtype == np.float64 and got.shape == x.shape
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (x[~same][:5], got[~same][:5], want[~same][:5])


@pytest.mark.parametrize("name", ["exp", "log", "arccos", "cos", "sin"])
def test_float32_is_the_c_librarys_float_function(name):
    x = DOMAIN.get(name, X).astype(np.float32)
    got = getattr(C, name)(x)
    f = libm.function({"arccos": "acos"}.get(name, name) + "f", single=True)
    want = np.array([f(float(v)) for v in x], np.float32)
    assert got.dtype == np.float32
    assert ((got == want) | (np.isnan(got) & np.isnan(want))).all()


def test_power_broadcasts_and_keeps_cs_special_values():
    base = np.array([[0.0], [2.0], [-8.0], [1.5]])
    expo = np.array([-1.0, 0.5, 1 / 3, 7.25])
    got = C.power(base, expo)
    want = np.array([[_c_double("pow", float(b), float(e)) for e in expo] for b in base[:, 0]])
    assert got.shape == (4, 4)
    assert ((got == want) | (np.isnan(got) & np.isnan(want))).all()
    assert got[0, 0] == np.inf and np.isnan(got[2, 1])


def test_scalars_give_numpy_scalars_of_the_operands_dtype():
    assert isinstance(C.exp(1.0), np.float64) and C.exp(1.0) == math.exp(1.0)
    assert isinstance(C.cos(np.float32(2)), np.float32)
    assert C.log(np.zeros((0, 3))).shape == (0, 3)
