"""The row-sum plan (reduction_sum_rows) gives the general cascade loop's bits on every sum it
takes: trailing dims of dense float32/float64 tensors, row lengths around the vector width, ILP
and the cascade's levels (the direct sum of rows shorter than ILP vectors included), special
values; sums it must not take keep the general path. A control shows the comparison sees
another order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import reduction, reduction_sum_rows
from torchnative.csrc.kernels.support import cascade_rows
from sum_plan_checks import assert_sums_as_general, general as _general, values as _values


ROWS = [1, 2, 3, 5, 16, 64, 97, 130]
LENGTHS = [4, 5, 7, 8, 9, 10, 12, 15, 16, 17, 23, 24, 31, 32, 33, 40, 63, 64, 65, 100, 127,
           128, 129, 300, 513, 1030]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_plan_matches_general_loop(dt):
    rng = np.random.default_rng(21)
    taken = 0
    vs = 32 // np.dtype(dt).itemsize
    for R in ROWS:
        for n in LENGTHS:
            t = _values(rng, (R, n), dt)
            for dim, keepdim in (([1], True), (1, False), ((-1,), False), ([-1], True)):
                got = torch.ops.aten.sum.dim_IntList(t, dim, keepdim)
                want = _general(t, dim, keepdim)
                assert got.shape == want.shape and got.numpy().tobytes() == want.tobytes(), \
                    (dt, R, n, dim, keepdim)
            taken += bool(reduction_sum_rows.sum_rows_plan(t, [1], False))
    assert taken == len(ROWS) * sum(n >= vs for n in LENGTHS)


@pytest.mark.parametrize("shape,dim", [((4, 5, 33), [1, 2]), ((3, 2, 7, 10), [2, 3]),
                                       ((2, 6, 1, 9), [-1]), ((16, 8, 8, 8), [1, 2, 3]),
                                       ((64, 10), [1]), ((5, 7, 9), [0, 2]), ((8, 12), [0])])
def test_other_shapes_and_dims(shape, dim):
    assert_sums_as_general(shape, dim, 22)


def test_special_values():
    rng = np.random.default_rng(23)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38,
                         1e-40, 1.0, -1.0])
    for dt in (np.float32, np.float64):
        for R, n in ((64, 10), (64, 8), (5, 20), (17, 30), (3, 129)):
            for _ in range(20):
                x = rng.choice(specials, (R, n)).astype(dt)
                x[0] = -0.0                      # a row of negative zeros sums to +0
                x[1, : n // 2] = -0.0            # lanes of -0.0 against a +0.0 start
                t = torch.from_numpy(x)
                got = torch.ops.aten.sum.dim_IntList(t, [1], False).numpy()
                assert got.tobytes() == _general(t, [1], False).tobytes(), (dt, R, n)
                assert not np.signbit(got[0])


def test_short_rows_against_row_sums_before_the_final_zero():
    """The direct sum equals row_sums as values (only a zero's sign may differ before + 0)."""
    rng = np.random.default_rng(24)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, 2.5, -2.5])
    for dt, vs in ((np.float32, 8), (np.float64, 4)):
        for n in range(vs, 4 * vs):
            X = rng.choice(specials, (40, n)).astype(dt)
            with np.errstate(all="ignore"):      # inf - inf: a NaN value, as the kernel's
                a = reduction_sum_rows.short_rows(n, vs)(X)
                b = cascade_rows.row_sums(X, vs)
            np.testing.assert_array_equal(a, b)
            assert (a + dt(0)).tobytes() == (b + dt(0)).tobytes()


def test_not_taken():
    rng = np.random.default_rng(25)
    x = _values(rng, (40, 24), np.float32)
    for t, dim, kw in ((x.t(), [1], {}),                          # strided rows
                       (x, [0], {}),                              # columns
                       (x, [1], {"dtype": torch.float64}),        # a dtype argument
                       (x[:, :20], [1], {}),                      # rows with gaps
                       (x[:, :5].contiguous(), [1], {}),          # shorter than a vector
                       (x.to(torch.float16), [1], {})):
        reduction_sum_rows.ROW_SUM_PLANS.clear()
        got = torch.ops.aten.sum.dim_IntList(t, dim, False, **kw)
        assert not any(reduction_sum_rows.ROW_SUM_PLANS.values()), (t.shape, t.stride(), dim)
        want = reduction.sum_values(t, got.dtype, reduction.reduce_axes(t, dim), False)
        assert got.numpy().tobytes() == want.astype(got.numpy().dtype).tobytes()
    # a negative view reaches the kernel resolved: the plan sums its values
    n = x._neg_view()
    assert torch.ops.aten.sum.dim_IntList(n, [1], False).numpy().tobytes() == \
        (-_general(x, [1], False)).tobytes()


def test_control_other_order_is_seen():
    rng = np.random.default_rng(26)
    differ = 0
    for n in (10, 12, 100, 513):
        t = _values(rng, (64, n), np.float32)
        want = _general(t, [1], False).tobytes()
        differ += np.add.accumulate(t.numpy(), axis=1)[:, -1].tobytes() != want
        differ += np.add.reduce(t.numpy()[:, ::-1], axis=1).tobytes() != want
    assert differ >= 6, differ


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_whole_tensor_sums_and_means(dt):
    """``sum()``, ``sum(all dims)``, ``sum([])`` and ``mean()`` take the plan as one row, with
    the general path's bits, the divided count included; one row past the grain size, which
    intra-op threads would split, is left to the general path."""
    from torchnative.csrc.kernels.reduction_mean_plan import MEAN_PLANS

    rng = np.random.default_rng(27)
    for shape in ((8,), (9,), (31,), (64,), (100,), (257,), (16, 256), (3, 5, 7), (2, 1, 33)):
        t = _values(rng, shape, dt)
        t.view(-1)[1] = -0.0
        every = list(range(t.dim()))
        want = _general(t, None, False)
        reduction_sum_rows.ROW_SUM_PLANS.clear()
        for got in (t.sum(), torch.ops.aten.sum.dim_IntList(t, None, False),
                    torch.ops.aten.sum.dim_IntList(t, [], False), t.sum(every)):
            assert got.shape == () and got.numpy().tobytes() == want.tobytes(), shape
        assert any(reduction_sum_rows.ROW_SUM_PLANS.values()), shape
        kept = t.sum(every, keepdim=True)
        assert kept.shape == (1,) * t.dim() and kept.numpy().tobytes() == \
            _general(t, None, True).tobytes()
        MEAN_PLANS.clear()
        assert t.mean().numpy().tobytes() == (want / want.dtype.type(t.numel())).tobytes()
        assert any(MEAN_PLANS.values()), shape
    big = _values(rng, (40000,), dt)
    reduction_sum_rows.ROW_SUM_PLANS.clear()
    assert big.sum().numpy().tobytes() == _general(big, None, False).tobytes()
    assert not any(reduction_sum_rows.ROW_SUM_PLANS.values())
