"""How many threads numpy's BLAS may use for one product.

``torch.set_num_threads(n)`` sets the budget. The choice is a fixed rule of the product's size,
never a measurement: OpenBLAS partitions a product differently for another thread count, so the
count can change the result's last bits (SmolLM2's logits move by up to 4.5e-5 between one and two
threads). A choice made by timing would let the machine's load decide the bits. Small products
(a matrix-vector product, as in decoding one token) run on one thread: a second thread spins while
it waits and turns a 0.2 ms gemv into milliseconds when the other core is busy. Larger products use
the budget. Switching costs under a microsecond (a direct call into the BLAS library).
"""

from __future__ import annotations

from ...platform.blas_kernels import controller as _controller

SMALL_FLOPS = 1 << 22  # below this a product runs single-threaded (a 1x576 @ 576x1536 is ~1.8e6)

_state = {"budget": None, "current": None}


def set_budget(n: int) -> None:
    _state["budget"] = n
    _apply(n)


def _apply(n: int) -> None:
    ctl = _controller()
    if ctl is None or _state["current"] == n:
        return
    ctl.set_num_threads(n)
    _state["current"] = n


def _budget() -> int:
    budget = _state["budget"]
    if budget is None:
        ctl = _controller()
        budget = _state["budget"] = ctl.num_threads if ctl is not None else 1
    return budget


def for_product(m: int, k: int, n: int) -> None:
    """Set the thread count for an (m x k) @ (k x n) product about to run."""
    budget = _budget()
    _apply(1 if budget == 1 or m * k * n < SMALL_FLOPS else budget)


def single() -> None:
    """One thread, whatever the budget: for per-row dot products (gemv.py), whose sums a second
    thread would split differently."""
    if _state["current"] != 1:  # already one: a decode step asks this before every product
        _budget()  # read before the first change, or the budget would be read as this 1
        _apply(1)
