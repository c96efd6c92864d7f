"""torch._C.Future: a value that arrives later, with callbacks (the base of torch.futures.Future).

Completion happens once, from any thread; ``wait`` blocks on a condition. An error recorded with
``set_exception`` (through the unwrap function upstream's Python installs) or raised by a ``then``
callback is raised again by ``wait``/``value`` of that future.
"""

from __future__ import annotations

import threading


class Future:
    def __init__(self, devices=()):
        for d in devices:
            if getattr(d, "type", "cpu") != "cpu":
                raise ValueError(f"torch.futures.Future: only cpu devices exist here, got {d}")
        self._devices = list(devices)
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error: BaseException | None = None
        self._callbacks: list = []
        self._unwrap = None

    # -- completion ---------------------------------------------------------------------------
    def _complete(self, value=None, error: BaseException | None = None) -> None:
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def set_result(self, result) -> None:
        self._complete(value=result)

    def _set_error(self, error: BaseException) -> None:
        self._complete(error=error)

    def _set_unwrap_func(self, fn) -> None:
        self._unwrap = fn

    # -- observation --------------------------------------------------------------------------
    def done(self) -> bool:
        return self._done

    def _result(self):
        if self._error is not None:
            raise self._error
        if self._unwrap is not None:
            self._unwrap(self._value)
        return self._value

    def wait(self):
        with self._cond:
            while not self._done:
                self._cond.wait()
        return self._result()

    def value(self):
        if not self._done:
            raise RuntimeError("Future.value(): the future is not completed yet")
        return self._result()

    def add_done_callback(self, callback) -> None:
        def run(fut):
            try:
                callback(fut)
            except Exception:  # upstream logs and drops errors of done-callbacks
                import logging

                logging.getLogger("torch.futures").exception("Future done-callback raised")

        self._add(run)

    def _add(self, fn) -> None:
        with self._cond:
            if not self._done:
                self._callbacks.append(fn)
                return
        fn(self)

    def then(self, callback):
        child = Future(self._devices)

        def run(fut):
            try:
                value = callback(fut)
            except BaseException as e:  # the child carries the callback's error
                child._set_error(e)
                return
            child.set_result(value)

        self._add(run)
        return child


Future.__module__ = "torch._C"


def collect_all(futures):
    """A future completed with the list of ``futures`` once all of them are."""
    out = Future()
    futures = list(futures)
    if not futures:
        out.set_result([])
        return out
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)

    for f in futures:
        f._add(one_done)
    return out
