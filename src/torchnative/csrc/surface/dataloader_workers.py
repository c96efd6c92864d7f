"""The worker bookkeeping behind torch.utils.data's multiprocessing DataLoader
(torch/csrc/DataLoader.cpp): which worker processes each loader iterator owns, the check that
reports a worker that died, and the signal set-up of a worker process.

torch/utils/data/_utils/signal_handling.py installs the SIGCHLD handler in Python and calls
``_error_if_any_worker_fails`` from it; the check looks at the registered workers without reaping
them (``waitid`` with ``WNOWAIT``), so multiprocessing still collects their exit status.

In a worker, upstream installs C handlers that print a line and re-raise SIGBUS/SIGSEGV/SIGFPE
(so the parent sees which signal killed it) and that make a SIGTERM from the parent a clean exit.
Python cannot run its own code on a synchronous fault, so faulthandler stands in for the first
three: it prints the worker's traceback and re-raises the signal with its default action.
A Python handler does not learn who sent a SIGTERM; every SIGTERM ends the worker with exit
status 0, which the loader still notices as a worker that stopped (it checks ``is_alive``).
"""

from __future__ import annotations

import faulthandler
import os
import signal

_worker_pids: dict[int, set[int]] = {}


def _int(value, what: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{what}: expected an int, got {type(value).__name__}")
    return value.__index__()


def set_worker_pids(*args) -> None:
    if len(args) != 2:
        raise TypeError("_set_worker_pids expects exactly 2 arguments.")
    key = _int(args[0], "_set_worker_pids")
    if key in _worker_pids:
        raise ValueError(
            "_set_worker_pids should be called only once for each _BaseDataLoaderIter.")
    child_pids = args[1]
    if not isinstance(child_pids, tuple):
        raise TypeError("_set_worker_pids expects a tuple for child_pids, but got "
                        f"{type(child_pids).__name__}.")
    _worker_pids[key] = {_int(p, "_set_worker_pids") for p in child_pids}


def remove_worker_pids(loader_id) -> None:
    key = _int(loader_id, "_remove_worker_pids")
    if key not in _worker_pids:
        raise ValueError(
            f"Cannot find worker information for _BaseDataLoaderIter with id {key}")
    del _worker_pids[key]


def error_if_any_worker_fails() -> None:
    for pids in _worker_pids.values():
        for pid in sorted(pids):
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                continue  # not (or no longer) our child: nothing to report
            if info is None or info.si_pid == 0:
                continue  # still running
            if info.si_code == os.CLD_EXITED and info.si_status != 0:
                pids.clear()  # else the error tears the other workers down and fires again
                raise RuntimeError(
                    f"DataLoader worker (pid {pid}) exited unexpectedly with exit code "
                    f"{info.si_status}. Details are lost due to multiprocessing. Rerunning with "
                    "num_workers=0 may give better error trace.")
            if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
                msg = (f"DataLoader worker (pid {pid}) is killed by signal: "
                       f"{signal.strsignal(info.si_status)}. ")
                if info.si_status == signal.SIGBUS:
                    msg += ("It is possible that dataloader's workers are out of shared memory. "
                            "Please try to raise your shared memory limit.")
                pids.clear()
                raise RuntimeError(msg)


def _exit_quietly(signum, frame):
    os._exit(0)


def set_worker_signal_handlers() -> None:
    faulthandler.enable()
    signal.signal(signal.SIGTERM, _exit_quietly)


TORCH_C = {
    "torch._C._set_worker_pids": set_worker_pids,
    "torch._C._remove_worker_pids": remove_worker_pids,
    "torch._C._error_if_any_worker_fails": error_if_any_worker_fails,
    "torch._C._set_worker_signal_handlers": set_worker_signal_handlers,
}
