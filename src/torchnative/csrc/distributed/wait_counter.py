"""torch._C._monitor._WaitCounter: named counters of waits, which c10d's Python wraps calls in.

Upstream publishes them to a monitoring backend; here they are kept in-process (count and total
seconds per name), readable with ``snapshot()``.
"""

from __future__ import annotations

import threading
import time

_totals: dict[str, list] = {}
_lock = threading.Lock()


class _Guard:
    def __init__(self, name: str):
        self._name = name

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        elapsed = time.perf_counter() - self._start
        with _lock:
            entry = _totals.setdefault(self._name, [0, 0.0])
            entry[0] += 1
            entry[1] += elapsed
        return False


class _WaitCounter:
    def __init__(self, name: str):
        self._name = str(name)

    def guard(self) -> _Guard:
        return _Guard(self._name)


_WaitCounter.__module__ = "torch._C._monitor"


def snapshot() -> dict[str, tuple[int, float]]:
    with _lock:
        return {k: (v[0], v[1]) for k, v in _totals.items()}
