"""Work: the handle of a collective (wait, is_completed, exception, get_future)."""

from __future__ import annotations

import threading
from datetime import timedelta

from .errors import _DistBackendError
from .future import Future

MODULE = "torch._C._distributed_c10d"


class Work:
    """Base of every work handle; Python backends subclass it, as upstream's allow."""

    def __init__(self, *args, **kwargs):
        pass

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return self.exception() is None

    def exception(self):
        return None

    def wait(self, timeout: timedelta = timedelta(0)) -> bool:
        return True

    def block_current_stream(self) -> None:
        self.wait()

    def synchronize(self) -> None:
        self.wait()

    def get_future(self):
        fut = Future()
        fut.set_result(self.result())
        return fut

    def source_rank(self) -> int:
        raise RuntimeError(
            "sourceRank() may only be called on work objects that correspond to a recv or "
            "recv-from-any call.")

    def _source_rank(self) -> int:
        return self.source_rank()

    def result(self) -> list:
        return []

    def boxed(self):
        return self

    @staticmethod
    def unbox(obj):
        return obj

    def _get_duration(self) -> float:
        raise NotImplementedError("Work._get_duration: timing is not recorded by torchnative")


Work.__module__ = MODULE


class AsyncWork(Work):
    """Work run by a backend's worker thread; completes once, with outputs or an error."""

    def __init__(self, outputs=None, source_rank: int = -1):
        self._event = threading.Event()
        self._outputs = outputs if outputs is not None else []
        self._error: BaseException | None = None
        self._future = Future()
        self._source_rank_value = source_rank

    def _finish(self, error: BaseException | None = None) -> None:
        self._error = error
        self._event.set()
        if error is None:
            self._future.set_result(self._outputs)
        else:
            self._future._set_error(error)

    def is_completed(self) -> bool:
        return self._event.is_set()

    def exception(self):
        return self._error

    def wait(self, timeout: timedelta = timedelta(0)) -> bool:
        seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else 0
        if not self._event.wait(seconds if seconds > 0 else None):
            raise _DistBackendError(f"Work.wait: timed out after {int(seconds * 1000)}ms")
        if self._error is not None:
            raise self._error
        return True

    def get_future(self):
        return self._future

    def result(self) -> list:
        self.wait()
        return self._outputs

    def source_rank(self) -> int:
        if self._source_rank_value < 0:
            return super().source_rank()
        self.wait()
        return self._source_rank_value


class CompletedWork(Work):
    """A work that is already done (collectives of one rank, coalesced no-ops)."""

    def __init__(self, outputs=None):
        self._outputs = outputs or []

    def result(self):
        return self._outputs


def _create_work_from_future(future):
    work = AsyncWork()

    def done(fut):
        try:
            value = fut.wait()
        except BaseException as e:
            work._finish(e)
            return
        work._outputs = value if isinstance(value, list) else [value]
        work._finish()

    future.add_done_callback(done)
    return work


class PythonCallbackWork(Work):
    def __init__(self, callback):
        self._callback = callback
        self._future = Future()

    def wait(self, timeout: timedelta = timedelta(0)) -> bool:
        ok = self._callback(timeout)
        if not self._future.done():
            self._future.set_result([])
        return ok

    def get_future(self):
        return self._future


PythonCallbackWork.__module__ = MODULE


class FakeWork(Work):
    """The work the fake backend and meta registrations hand out: already complete."""

    def __init__(self):
        self.seq_id = -1

    def wait(self, timeout: timedelta = timedelta(0)) -> bool:
        return True

    def getFuture(self):
        fut = Future()
        fut.set_result([])
        return fut

    get_future = getFuture


FakeWork.__module__ = MODULE
