"""The column-sum plan (reduction_cols) gives the general cascade loop's bits on every sum it
takes: leading dims of dense float32/float64 tensors, column counts around the vector blocks,
row counts around the cascade's levels and ILP, special values; sums it must not take keep the
general path. Upstream itself is compared in tests/differential/test_sum_order.py; here the plan
is held to the loop it replaces, and a control shows the comparison sees another order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import reduction, reduction_cols
from torchnative.csrc.kernels.support import cascade_sum as cs
from sum_plan_checks import assert_sums_as_general, general as _general, values as _values


ROWS = [2, 3, 4, 5, 7, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1025]
COLS = [2, 3, 4, 5, 7, 8, 9, 10, 16, 31, 32, 33, 64, 100, 128, 130]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_plan_matches_general_loop(dt):
    rng = np.random.default_rng(11)
    taken = 0
    for R in ROWS:
        for C in COLS:
            t = _values(rng, (R, C), dt)
            for dim, keepdim in (([0], True), (0, False), ((0,), False), ([-2], True)):
                got = torch.ops.aten.sum.dim_IntList(t, dim, keepdim)
                want = _general(t, dim, keepdim)
                assert got.shape == want.shape and got.numpy().tobytes() == want.tobytes(), \
                    (dt, R, C, dim, keepdim)
            taken += bool(reduction_cols.col_plan(t, [0], False))
    assert taken == len(ROWS) * len(COLS)


@pytest.mark.parametrize("shape,dim", [((4, 5, 33), [0, 1]), ((3, 1, 7, 40), [0, 1, 2]),
                                       ((2, 6, 1, 9), [0, 1]), ((16, 8, 8, 8), [0]),
                                       ((64, 1), [0]), ((1, 64), [0]), ((5, 7, 9), [0, 2]),
                                       ((5, 7, 9), [1]), ((8, 12), [1])])
def test_other_shapes_and_dims(shape, dim):
    assert_sums_as_general(shape, dim, 12)


def test_special_values():
    rng = np.random.default_rng(13)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38,
                         1e-40, 1.0, -1.0])
    for dt in (np.float32, np.float64):
        # (256, 128), (1025, 33): cascade levels with no rows of their own (left out of the
        # plan's sums); (3, 10): fewer rows than row_sum's four partial sums
        for R, C in ((64, 128), (64, 10), (5, 33), (17, 3), (256, 128), (1025, 33), (3, 10)):
            x = rng.choice(specials, (R, C)).astype(dt)
            x[:, 0] = -0.0                         # a column of negative zeros sums to +0
            t = torch.from_numpy(x)
            got = torch.ops.aten.sum.dim_IntList(t, [0], False).numpy()
            assert got.tobytes() == _general(t, [0], False).tobytes(), (dt, R, C)
            assert not np.signbit(got[0])


def test_not_taken():
    rng = np.random.default_rng(14)
    x = _values(rng, (40, 24), np.float32)
    for t, dim, kw in ((x.t(), [0], {}),                          # strided columns
                       (x, [1], {}),                              # rows
                       (x, [0], {"dtype": torch.float64}),        # a dtype argument
                       (x[:, :20], [0], {}),                      # rows with gaps
                       (x.to(torch.float16), [0], {})):
        reduction_cols.COL_PLANS.clear()
        got = torch.ops.aten.sum.dim_IntList(t, dim, False, **kw)
        assert not any(reduction_cols.COL_PLANS.values()), (t.shape, t.stride(), dim, kw)
        want = reduction.sum_values(t, got.dtype, reduction.reduce_axes(t, dim), False)
        assert got.numpy().tobytes() == want.astype(got.numpy().dtype).tobytes()
    # a negative view reaches the kernel resolved: the plan sums its values
    n = x._neg_view()
    assert torch.ops.aten.sum.dim_IntList(n, [0], False).numpy().tobytes() == \
        (-_general(x, [0], False)).tobytes()


# (rows, columns) of at least GRAIN_SIZE elements: ranges of whole 128-byte groups, a last range
# narrower than a vector (36 columns over 8 threads: [32, 36)), fewer columns than threads
SPLIT = [(512, 128), (40, 1536), (1024, 36), (911, 37), (3000, 11), (4096, 8), (257, 130),
         (33, 1000)]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [2, 3, 8])
def test_threads_split_the_columns_as_the_general_path(dt, threads, monkeypatch):
    rng = np.random.default_rng(15)
    calls = []
    real = cs.CascadeSum.run
    monkeypatch.setattr(cs.CascadeSum, "run", lambda self, a: calls.append(1) or real(self, a))
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for R, C in SPLIT:
            t = _values(rng, (R, C), dt)
            got = torch.ops.aten.sum.dim_IntList(t, [0], False).numpy()
            assert not calls, (R, C)                    # the plan, not the general path
            want = _general(t, [0], False)
            calls.clear()
            assert got.tobytes() == want.tobytes(), (dt, threads, R, C)
    finally:
        torch.set_num_threads(old)


def test_control_a_split_summed_whole_is_seen():
    """Summing every column as one block (the serial loop) differs from the split somewhere: the
    columns of a narrow last range take multi_row_sum's groups of four, not row_sum."""
    rng = np.random.default_rng(17)
    t = _values(rng, (1024, 36), np.float32)
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(8)
        split = torch.ops.aten.sum.dim_IntList(t, [0], False).numpy()
        torch.set_num_threads(1)
        whole = torch.ops.aten.sum.dim_IntList(t, [0], False).numpy()
    finally:
        torch.set_num_threads(old)
    assert split[:32].tobytes() == whole[:32].tobytes()
    assert split[32:].tobytes() != whole[32:].tobytes()


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_column_means_take_the_plan(threads):
    """mean over leading dims: the column plan's sum divided by the count in the sum's dtype,
    as the general path (an (A, B, C) mean over dim 0 counts A, over (0, 1) A * B)."""
    from torchnative.csrc.kernels.reduction_mean_plan import MEAN_PLANS

    rng = np.random.default_rng(18)
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for shape, dim in (((64, 10), 0), ((512, 128), [0]), ((4, 5, 33), 0),
                           ((4, 5, 33), (0, 1)), ((1024, 36), 0), ((3000, 11), (0,))):
            for dt in (np.float32, np.float64):
                t = _values(rng, shape, dt)
                for keepdim in (False, True):
                    MEAN_PLANS.clear()
                    got = t.mean(dim, keepdim)
                    assert any(MEAN_PLANS.values()), (shape, dim)
                    axes = reduction.reduce_axes(t, dim)
                    s = _general(t, dim, keepdim)
                    want = s / s.dtype.type(reduction.reduced_numel(t, axes))
                    assert got.shape == want.shape
                    assert got.numpy().tobytes() == want.tobytes(), (shape, dim, dt, keepdim)
    finally:
        torch.set_num_threads(old)


def test_control_other_order_is_seen():
    rng = np.random.default_rng(16)
    differ = 0
    for R in (65, 257, 1025):
        t = _values(rng, (R, 64), np.float32)
        differ += np.add.reduce(t.numpy(), axis=0).tobytes() != _general(t, [0], False).tobytes()
        differ += (np.add.accumulate(t.numpy(), axis=0)[-1].tobytes() !=
                   _general(t, [0], False).tobytes())
    assert differ >= 5, differ
