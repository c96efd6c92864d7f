"""The rejection samplers' draw cursor and C-arithmetic helpers, against the generator engine
(itself checked bit for bit against upstream in tests/differential)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from torchnative.csrc.random import clibm
from torchnative.csrc.random.distributions import normal_double_stream, uniform_double
from torchnative.csrc.random.rejection import DrawCursor, drawing
from torchnative.csrc.random.state import CPUGeneratorState


def test_uniforms_are_the_engines_and_commit_advances_by_the_words_used():
    gen, ref = CPUGeneratorState(7), CPUGeneratorState(7)
    with drawing(gen, 4) as cur:  # a small first block forces refills
        got = [cur.uniform() for _ in range(1000)]
    assert got == uniform_double(ref, 1000).tolist()
    assert np.array_equal(gen.get_state(), ref.get_state())


def test_normals_and_the_cached_sine_follow_the_engines_double_stream():
    for n in (1, 2, 5, 6):  # odd counts leave a cached sample, even ones consume it
        gen, ref = CPUGeneratorState(3), CPUGeneratorState(3)
        ref.next_double_normal = gen.next_double_normal = 0.25  # a cache from an earlier call
        with drawing(gen, 0) as cur:
            got = [cur.normal() for _ in range(n)]
        assert got == normal_double_stream(ref, n, 0.0, 1.0).tolist()
        assert gen.next_double_normal == ref.next_double_normal
        assert np.array_equal(gen.get_state(), ref.get_state())


def test_an_error_inside_the_kernel_still_commits_the_draws():
    gen, ref = CPUGeneratorState(1), CPUGeneratorState(1)
    with pytest.raises(RuntimeError):
        with drawing(gen, 0) as cur:
            cur.uniform(), cur.uniform()
            raise RuntimeError("invalid rate")
    ref.random64(2)
    assert np.array_equal(gen.get_state(), ref.get_state())


def test_an_uncommitted_cursor_leaves_the_generator_alone():
    """The control for the two tests above: without commit nothing moves, so they can fail."""
    gen, ref = CPUGeneratorState(1), CPUGeneratorState(1)
    cur = DrawCursor(gen)
    cur.uniform()
    assert np.array_equal(gen.get_state(), ref.get_state())


def test_f32_is_cs_double_to_float_conversion():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-40, 40, 2000),
                             [3.5e38, -3.5e38, 1e-46, np.nan, np.inf]])
    with np.errstate(over="ignore"):
        expected = values.astype(np.float32)
    got = np.array([clibm.f32(v) for v in values.tolist()], np.float32)
    assert got.tobytes() == expected.tobytes()


def test_c_semantics_where_python_raises():
    assert clibm.cdiv(1.0, 0.0) == math.inf and clibm.cdiv(-1.0, 0.0) == -math.inf
    assert clibm.cdiv(1.0, -0.0) == -math.inf and math.isnan(clibm.cdiv(0.0, 0.0))
    assert clibm.clog(0.0) == -math.inf
    assert clibm.cpow(0.5, -1e30) == math.inf
    assert clibm.to_int64(math.nan) == clibm.INT64_MIN == clibm.to_int64(1e19)
    assert clibm.to_int64(-2.5) == -2
    assert clibm.cmax(1.0, math.nan) == 1.0 and math.isnan(clibm.cmax(math.nan, 1.0))
    assert clibm.cfloor(-math.inf) == -math.inf and clibm.cceil(2.1) == 3.0


def test_log_of_a_negative_number_is_upstreams_positive_nan():
    """libtorch_cpu imports log@GLIBC_2.2.5, whose wrapper answers +NaN; the current symbol
    (what ctypes and Python reach by default) answers -NaN."""
    bits = struct.pack(">d", clibm.clog(-1.0))
    assert math.isnan(clibm.clog(-1.0)) and bits[0] & 0x80 == 0


def test_the_scalar_normal_stream_is_the_array_one(monkeypatch):
    """A short double normal stream runs Box-Muller on Python floats, a long one on arrays
    (glibc element by element either way): the same values, cache and words for every count,
    with and without a cached sample, through mean and std; swapping the sine and cosine halves
    is caught."""
    from torchnative.csrc.random import distributions

    def streams(n, cached, mean, std, pairs_limit):
        gen = CPUGeneratorState(11)
        gen.random64(3)
        gen.next_double_normal = cached
        monkeypatch.setattr(distributions, "_SCALAR_PAIRS", pairs_limit)
        out = normal_double_stream(gen, n, mean, std)
        return out.tobytes(), gen.next_double_normal, gen.get_state().tobytes()

    for n in (1, 2, 3, 10, 63, 64, 65):
        for cached in (None, -0.75):
            for mean, std in ((0.0, 1.0), (0.3, 2.7)):
                short = streams(n, cached, mean, std, 1 << 20)
                assert short == streams(n, cached, mean, std, 0), (n, cached, mean, std)

    real = distributions.box_muller
    monkeypatch.setattr(distributions, "box_muller", lambda u1, u2: real(u1, u2)[::-1])
    assert streams(4, None, 0.0, 1.0, 1 << 20) != streams(4, None, 0.0, 1.0, 0)
