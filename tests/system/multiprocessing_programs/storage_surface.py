"""The storage-sharing and DataLoader-worker entry points of torch._C, called directly: values,
errors and messages (one JSON document)."""
import json
import multiprocessing as mp
import os
import signal

import torch


def tr(f, pid=None):
    """``f()``, or its exception's type and message cut to 150 characters; ``pid`` is written
    PID before the cut (its digit count would move the cut otherwise)."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        msg = str(e) if pid is None else str(e).replace(str(pid), "PID")
        return f"{type(e).__name__}: {msg[:150]}"


def die(sig):
    os.kill(os.getpid(), sig)


def exit_with(code):
    os._exit(code)


if __name__ == "__main__":
    out = {}
    out["empty"] = list(torch.UntypedStorage(0)._share_fd_cpu_())
    out["new_empty"] = torch.UntypedStorage._new_using_fd_cpu(0).size()
    s = torch.UntypedStorage(8)
    out["fresh"] = s.is_shared()
    a, b = s._share_fd_cpu_(), s._share_fd_cpu_()
    out["fd"] = [type(a[0]).__name__, a[1], a == b, s.is_shared(), s.resizable()]
    n = torch.UntypedStorage._new_using_fd_cpu(16)
    out["new"] = [n.is_shared(), n.size(), n.resizable(), tr(lambda: n.resize_(32))]
    w = s._weak_ref()
    out["weak"] = [type(w).__name__, torch.UntypedStorage._expired(w),
                   torch.UntypedStorage._new_with_weak_ptr(w) is s]
    out["refs"] = [s._shared_decref() is s, s._shared_incref()]
    t = torch.arange(4.)
    v = t[1:]
    t.share_memory_()
    v[0] = 9
    out["views"] = [t.tolist(), t.is_shared(), v.is_shared(),
                    t.data_ptr() == t.untyped_storage().data_ptr(),
                    v.data_ptr() - t.data_ptr()]
    out["meta"] = tr(lambda: torch.UntypedStorage(8, device="meta")._share_fd_cpu_())
    C = torch._C
    out["pids"] = [tr(lambda: C._set_worker_pids(1, [2])), tr(lambda: C._remove_worker_pids(5)),
                   tr(lambda: C._set_worker_pids(1, (2,))), tr(lambda: C._set_worker_pids(1, (3,))),
                   tr(lambda: C._remove_worker_pids(1)), tr(lambda: C._set_worker_pids(1))]
    verdicts = []
    for target, arg in ((die, signal.SIGKILL), (die, signal.SIGBUS), (exit_with, 3),
                        (exit_with, 0)):
        p = mp.get_context("fork").Process(target=target, args=(arg,))
        p.start()
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped
        C._set_worker_pids(10, (p.pid,))
        verdicts.append(str(tr(C._error_if_any_worker_fails, p.pid)))
        C._remove_worker_pids(10)
        p.join()
        verdicts.append(p.exitcode)
    out["worker_fails"] = verdicts
    defaults = [torch.Storage.__name__]
    torch.set_default_dtype(torch.float64)
    defaults.append(torch.Storage.__name__)
    defaults.append(tr(lambda: torch.set_default_dtype(torch.float8_e5m2)))
    defaults.append(torch.Storage.__name__)
    out["default_storage"] = defaults
    print(json.dumps(out))
