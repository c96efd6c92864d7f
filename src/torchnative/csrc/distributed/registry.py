"""Module-level state of c10d: named process groups, registered works, the debug level."""

from __future__ import annotations

import os
import threading
from datetime import timedelta

MODULE = "torch._C._distributed_c10d"

_groups: dict[str, object] = {}
_works: dict[int, object] = {}
_lock = threading.Lock()
_state = {"debug": 0, "thread_isolation": False, "inflight": False, "global_rank": -1,
          "current": None}


def _register_process_group(group_name, group) -> None:
    with _lock:
        if group_name in _groups:
            raise RuntimeError(f"Process group name {group_name} is already registered")
        _groups[group_name] = group


def _resolve_process_group(group_name):
    with _lock:
        if group_name not in _groups:
            raise RuntimeError(f"Could not resolve the process group registered under the name "
                               f"{group_name}")
        return _groups[group_name]


def _unregister_process_group(group_name) -> None:
    with _lock:
        _groups.pop(group_name, None)


def _unregister_all_process_groups() -> None:
    with _lock:
        _groups.clear()


def _set_process_group(group) -> None:
    _state["current"] = group


def _current_process_group():
    return _state["current"]


def _register_work(tensor, work) -> None:
    with _lock:
        _works[id(tensor)] = work


def _get_work_registry_size() -> int:
    return len(_works)


def _wait_registered(tensor):
    with _lock:
        work = _works.pop(id(tensor), None)
    if work is not None:
        work.wait()
    return tensor


def _set_thread_isolation_mode(enable: bool) -> None:
    _state["thread_isolation"] = bool(enable)


def _allow_inflight_collective_as_graph_input() -> bool:
    return _state["inflight"]


def _set_allow_inflight_collective_as_graph_input(value: bool) -> None:
    _state["inflight"] = bool(value)


def _set_global_rank(rank: int) -> None:
    _state["global_rank"] = int(rank)


_profiling_names: dict[int, str] = {}


def _get_comm_profiling_name(group) -> str:
    return _profiling_names.get(id(group), "")


def _set_comm_profiling_name(group, name: str) -> None:
    _profiling_names[id(group)] = name


def _debug_level_enum():
    from ..core.enums import ENUMS

    return ENUMS[f"{MODULE}.DebugLevel"]


def get_debug_level():
    return _debug_level_enum()(_state["debug"])


def set_debug_level(level) -> None:
    _state["debug"] = int(_debug_level_enum()(level))


def set_debug_level_from_env() -> None:
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    levels = {"OFF": 0, "INFO": 1, "DETAIL": 2}
    if value not in levels:
        raise ValueError(f"The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL, "
                         f"but got {value}")
    _state["debug"] = levels[value]


def _hash_tensors(tensors) -> int:
    import hashlib

    h = hashlib.blake2b(digest_size=8)
    for t in tensors:
        h.update(t.detach().contiguous().reshape(-1).view(__import__("torch").uint8).numpy().tobytes())
    return int.from_bytes(h.digest(), "little", signed=True)


def _test_python_store(store) -> None:
    """Exercises a Python Store subclass the way C++ code calls it (upstream's self-test)."""
    store.set("key0", "value0")
    store.set("key1", b"value1")
    if bytes(store.get("key0")) != b"value0" or bytes(store.get("key1")) != b"value1":
        raise RuntimeError("_test_python_store: get returned the wrong value")
    if store.add("counter", 5) != 5 or store.add("counter", 2) != 7:
        raise RuntimeError("_test_python_store: add returned the wrong value")
    store.wait(["key0"], timedelta(seconds=1))


class _ControlCollectives:
    def _unsupported(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}: abstract control collective")

    barrier = broadcast_send = broadcast_recv = gather_send = gather_recv = _unsupported
    scatter_send = scatter_recv = all_gather = all_sum = _unsupported


class _StoreCollectives(_ControlCollectives):
    """Small collectives of strings/ints through a store (used by elastic agents)."""

    def __init__(self, store, rank: int, world_size: int):
        self._store, self._rank, self._world = store, rank, world_size

    def _wait(self, keys, timeout):
        self._store.wait(keys, timeout)

    def barrier(self, key, timeout, blocking=True):
        n = self._store.add(f"{key}/num", 1)
        if n == self._world:
            self._store.set(f"{key}/done", "1")
        if blocking:
            self._wait([f"{key}/done"], timeout)

    def broadcast_send(self, key, data, timeout):
        self._store.set(key, data)

    def broadcast_recv(self, key, timeout):
        self._wait([key], timeout)
        return self._store.get(key)

    def gather_send(self, key, data, timeout):
        self._store.set(f"{key}/{self._rank}", data)

    def gather_recv(self, key, data, timeout):
        self.gather_send(key, data, timeout)
        keys = [f"{key}/{r}" for r in range(self._world)]
        self._wait(keys, timeout)
        return self._store.multi_get(keys)

    def scatter_send(self, key, data, timeout):
        for r, d in enumerate(data):
            self._store.set(f"{key}/{r}", d)
        return data[self._rank]

    def scatter_recv(self, key, timeout):
        k = f"{key}/{self._rank}"
        self._wait([k], timeout)
        return self._store.get(k)

    def all_gather(self, key, data, timeout):
        self._store.set(f"{key}/{self._rank}", data)
        keys = [f"{key}/{r}" for r in range(self._world)]
        self._wait(keys, timeout)
        return self._store.multi_get(keys)

    def all_sum(self, key, data, timeout):
        self._store.add(f"{key}/sum", int(data))
        self.barrier(f"{key}/barrier", timeout)
        return int(self._store.get(f"{key}/sum"))


for _c in (_ControlCollectives, _StoreCollectives):
    _c.__module__ = MODULE
