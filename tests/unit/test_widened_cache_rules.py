"""The widened-copy cache's own rules (csrc/kernels/support/widened_cache.py): what it keeps,
its memory bound, and what it never caches."""

from __future__ import annotations

import gc

import pytest
import torch

from torchnative.csrc.kernels.support import widened_cache as wc


@pytest.fixture(autouse=True)
def fresh_cache():
    wc.clear()
    yield
    wc.set_limit(1024 << 20)
    wc.clear()


def _weight(rows=128, cols=256):
    return torch.randn(rows, cols).to(torch.bfloat16)


def _use(w, times=3):
    """Products with ``w`` on the left: they read its widened copy (linear reads it in place)."""
    x = torch.ones(w.shape[1], 1, dtype=w.dtype)
    for _ in range(times):
        y = torch.mm(w, x)
    return y


def test_linear_keeps_no_copy():
    w, x = _weight(), torch.ones(3, 1, 256, dtype=torch.bfloat16)
    before = wc.stats["widened"]
    for rows in (x, x[0], x[:, 0]):
        for _ in range(3):
            torch.nn.functional.linear(rows, w)
    assert wc.held_bytes() == 0 and wc.stats["widened"] == before


def test_a_weight_is_widened_on_its_second_use_and_read_afterwards():
    w = _weight()
    before = dict(wc.stats)
    _use(w, 1)
    assert wc.held_bytes() == 0  # seen once: an activation would stop here
    _use(w, 3)
    assert wc.stats["widened"] - before["widened"] == 1
    assert wc.stats["hits"] - before["hits"] == 2
    assert wc.held_bytes() == w.numel() * 4


def test_small_operands_are_not_cached():
    w = _weight(8, 16)
    _use(w)
    assert wc.held_bytes() == 0


def test_a_full_cache_keeps_what_it_holds():
    a, b = _weight(), _weight()
    one = a.numel() * 4
    wc.set_limit(one + one // 2)
    _use(a)
    _use(b)
    assert wc.held_bytes() == one and wc.stats["full"] > 0
    entry = next(e for e in wc._entries.values() if e.array is not None)
    assert entry.storage() is a.untyped_storage()  # b is widened per product, a still served


def test_lowering_the_bound_drops_least_recently_used():
    a, b = _weight(), _weight()
    _use(a)
    _use(b)
    _use(a, 1)  # a is now the most recently used
    wc.set_limit(a.numel() * 4)
    held = [e.storage() for e in wc._entries.values() if e.array is not None]
    assert held == [a.untyped_storage()]


def test_zero_turns_it_off():
    wc.set_limit(0)
    _use(_weight())
    assert wc.held_bytes() == 0


def test_a_dead_weight_leaves_the_cache():
    w = _weight()
    _use(w)
    assert wc.held_bytes() > 0
    del w
    gc.collect()
    assert wc.held_bytes() == 0


def test_cached_copies_are_read_only():
    w = _weight()
    _use(w)
    entry = next(e for e in wc._entries.values() if e.array is not None)
    assert not entry.array.flags.writeable


@pytest.mark.parametrize("make", [
    lambda w: w.share_memory_(),
    lambda w: torch.from_numpy(w.view(torch.int16).numpy().copy()).view(torch.bfloat16),
    lambda w: (w.view(torch.int16).numpy(), w)[1],
])
def test_storages_written_out_of_sight_are_never_cached(make):
    w = make(_weight())
    _use(w)
    assert wc.held_bytes() == 0
