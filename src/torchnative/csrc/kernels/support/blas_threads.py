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


class _Tuner:
    """The thread choice for one range of product sizes, decided by measurement: products run
    with the current choice for ``every`` calls, then with the other one for a window of
    ``WINDOW`` calls; the window's time per flop against the preceding run's decides. Whole
    windows, not single calls, are compared: the first product after a switch pays for waking
    the BLAS threads, which a single-call comparison would count against every switch."""

    __slots__ = ("choice", "exploring", "left", "every", "seconds", "flops", "rate")

    def __init__(self, choice: int):
        self.choice = choice  # 1: one thread, 0: the budget
        self.exploring = False
        self.every, self.left = EXPLORE_MIN, FIRST_EXPLORE
        self.seconds = self.flops = 0.0
        self.rate = None  # seconds per flop of the last run with the current choice

    def current(self) -> int:
        return (1 - self.choice) if self.exploring else self.choice

    def record(self, seconds: float, flops: int) -> None:
        self.seconds += seconds
        self.flops += flops
        self.left -= 1
        if self.left > 0:
            return
        rate = self.seconds / max(self.flops, 1)
        self.seconds = self.flops = 0.0
        if not self.exploring:
            self.rate, self.exploring, self.left = rate, True, WINDOW
            return
        self.exploring = False
        if self.rate is not None and rate < self.rate * 0.97:  # the other choice won: take it
            self.choice, self.every = 1 - self.choice, EXPLORE_MIN
        else:  # it lost: try it less often
            self.every = min(EXPLORE_MAX, self.every * 2)
        self.left = self.every


# the first exploration comes early; later ones every EXPLORE_MIN..EXPLORE_MAX calls, for
# WINDOW calls (a few per cent of the calls at most)
FIRST_EXPLORE, EXPLORE_MIN, EXPLORE_MAX, WINDOW = 64, 512, 8192, 32
# small products (a matrix-vector product, as in decoding one token) start on one thread,
# large ones on the budget
_tuners = {"small": _Tuner(1), "large": _Tuner(0)}


def for_product(m: int, k: int, n: int):
    """Set the thread count for an (m x k) @ (k x n) product about to run. Returns a token for
    ``done`` (None when there is nothing to choose)."""
    budget = _state["budget"]
    if budget is None:
        ctl = _controller()
        budget = _state["budget"] = ctl.num_threads if ctl is not None else 1
    if budget == 1:
        _apply(1)
        return None
    flops = m * k * n
    tuner = _tuners["small" if flops < SMALL_FLOPS else "large"]
    _apply(1 if tuner.current() == 1 else budget)
    return tuner, flops, time.perf_counter()


def done(token) -> None:
    """Record how long the product announced by ``for_product`` took."""
    if token is not None:
        token[0].record(time.perf_counter() - token[2], token[1])
