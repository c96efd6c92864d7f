"""How many threads numpy's BLAS may use for one product.

``torch.set_num_threads(n)`` sets the budget. Whether a product should use it depends on the
machine: OpenBLAS's threads spin while they wait, so on a shared 2-core machine a second thread
turns a 0.2 ms gemv into several milliseconds whenever another process holds the other core,
while on a quiet machine it nearly halves the time of a memory-bound gemv. So products measure:
per size class, small products (a matrix-vector product, as in decoding one token) start on one
thread and large ones on the budget, the other choice is tried now and then (less often the
worse it did), and the faster of the two recent averages is used. Switching costs under a
microsecond (a direct call into the BLAS library).
"""

from __future__ import annotations

import functools
import time

SMALL_FLOPS = 1 << 22  # below this a product runs single-threaded (a 1x576 @ 576x1536 is ~1.8e6)

_state = {"budget": None, "current": None}


@functools.cache
def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    libs = [c for c in ThreadpoolController().lib_controllers if c.user_api == "blas"]
    return libs[0] if libs else None


def set_budget(n: int) -> None:
    _state["budget"] = n
    _apply(n)


def _apply(n: int) -> None:
    ctl = _controller()
    if ctl is None or _state["current"] == n:
        return
    ctl.set_num_threads(n)
    _state["current"] = n


class _SizeClass:
    """Recent seconds per call with 1 thread and with the budget, for products of one size."""

    __slots__ = ("avg", "preferred", "calls", "every")

    def __init__(self, preferred: int):
        self.avg = {1: None, 0: None}  # 0: the budget
        self.preferred = preferred
        self.calls = 0
        self.every = EXPLORE_MIN


EXPLORE_MIN, EXPLORE_MAX = 32, 4096  # try the other choice every n-th call of a size class
_classes: dict = {}


def for_product(m: int, k: int, n: int):
    """Set the thread count for an (m x k) @ (k x n) product about to run. Returns a token for
    ``done`` (None for products that are not timed)."""
    budget = _state["budget"]
    if budget is None:
        ctl = _controller()
        budget = _state["budget"] = ctl.num_threads if ctl is not None else 1
    if budget == 1:
        _apply(1)
        return None
    flops = m * k * n
    size = flops.bit_length()
    c = _classes.get(size)
    if c is None:  # small products start on one thread, large ones on the budget
        c = _classes[size] = _SizeClass(1 if flops < SMALL_FLOPS else 0)
    c.calls += 1
    choice = c.preferred
    if c.calls % c.every == 0:
        choice = 0 if choice == 1 else 1  # explore the other choice
    _apply(budget if choice == 0 else 1)
    return c, choice, time.perf_counter()


def done(token) -> None:
    """Record how long the product announced by ``for_product`` took."""
    if token is None:
        return
    elapsed = time.perf_counter() - token[2]
    c, choice = token[0], token[1]
    prev = c.avg[choice]
    c.avg[choice] = elapsed if prev is None else 0.75 * prev + 0.25 * elapsed
    other = c.avg[1 - choice]
    if other is None:
        return
    best = choice if c.avg[choice] < other else 1 - choice
    if choice != c.preferred:  # an exploration: back off when it lost, come back when it won
        c.every = max(EXPLORE_MIN, c.every // 2) if best == choice else \
            min(EXPLORE_MAX, c.every * 2)
    c.preferred = best
