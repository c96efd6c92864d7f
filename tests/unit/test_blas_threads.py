"""The BLAS thread policy is a fixed rule of the product's size, never a measurement: OpenBLAS
partitions a product differently for another thread count, which can change its last bits, so a
choice made by timing would let the machine's load decide results. Checked with a recording
stand-in for the BLAS library's thread setting, and on real products: the same product gives the
same bits however busy the machine is made while it runs."""

from __future__ import annotations

import threading

import numpy as np

from torchnative.csrc.kernels.support import blas_threads as bt


def test_small_products_run_on_one_thread(applied):
    bt.for_product(1, 576, 1536)  # a decode step's matrix-vector product
    assert applied == [1]


def test_large_products_use_the_budget(applied):
    bt.for_product(128, 576, 1536)
    assert applied == [2]


def test_a_single_thread_budget_is_kept(applied):
    bt._state["budget"] = 1
    bt.for_product(512, 512, 512)
    assert applied == [1]


def test_single_switches_to_one_thread_once(applied):
    bt.single()
    bt.single()          # BLAS already runs one thread: nothing to ask again
    assert applied == [1]


def test_the_choice_ignores_time(applied, monkeypatch):
    """The same sizes get the same counts in the same order, whatever the clock says."""
    import time

    for shape in [(1, 576, 1536), (64, 576, 1536), (1, 576, 1536)]:
        bt.for_product(*shape)
    first = list(applied)
    applied.clear()
    monkeypatch.setattr(time, "perf_counter", lambda: 1e9)
    for shape in [(1, 576, 1536), (64, 576, 1536), (1, 576, 1536)]:
        bt.for_product(*shape)
    assert applied == first == [1, 2, 1]


def test_results_do_not_depend_on_load():
    import torch

    torch.manual_seed(0)
    a, b = torch.randn(64, 576), torch.randn(576, 1536)
    quiet = (a @ b).numpy().copy()
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            np.sqrt(np.arange(200_000.0)).sum()

    workers = [threading.Thread(target=busy) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        # past the first hundred products: a timing-based choice would have explored by then
        loaded = [(a @ b).numpy().copy() for _ in range(120)]
    finally:
        stop.set()
        for w in workers:
            w.join()
    for r in loaded:
        assert np.array_equal(r, quiet)
