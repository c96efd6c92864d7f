"""How many threads numpy's BLAS may use for one product.

``torch.set_num_threads(n)`` sets the budget. Small products (a matrix-vector product, as in
decoding one token) run on one thread: OpenBLAS's threads spin while they wait, so on a shared
2-core machine a second thread turns a 0.2 ms gemv into several milliseconds whenever another
process holds the other core. Large products use the budget. Switching costs under a
microsecond (a direct call into the BLAS library).
"""

from __future__ import annotations

import functools

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


def for_product(m: int, k: int, n: int) -> None:
    """Set the thread count for an (m x k) @ (k x n) product about to run."""
    budget = _state["budget"]
    if budget is None:
        ctl = _controller()
        budget = _state["budget"] = ctl.num_threads if ctl is not None else 1
    _apply(1 if m * k * n < SMALL_FLOPS or budget == 1 else budget)
