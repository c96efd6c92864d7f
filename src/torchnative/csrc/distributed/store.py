"""Store (the base Python stores subclass), HashStore and PrefixStore."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from .errors import _DistQueueEmptyError, _DistStoreError
from .kv import KeyValueTable

DEFAULT_TIMEOUT = timedelta(seconds=300)  # upstream's Store::kDefaultTimeout
NO_TIMEOUT = timedelta(0)


def as_bytes(value) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, list):  # upstream accepts a list of byte values (std::vector<uint8_t>)
        return bytes(value)
    raise TypeError(f"store value must be str or bytes, got {type(value).__name__}")


def as_timedelta(timeout) -> timedelta:
    if isinstance(timeout, timedelta):
        return timeout
    raise TypeError(f"timeout must be a datetime.timedelta, got {type(timeout).__name__}")


def timeout_ms(timeout: timedelta) -> int:
    return int(round(timeout.total_seconds() * 1000))


def wait_timeout_error(timeout: timedelta, keys) -> _DistStoreError:
    return _DistStoreError(f"wait timeout after {timeout_ms(timeout)}ms, keys: {', '.join(keys)}")


class Store:
    """Base of every store; Python subclasses override the operations they support."""

    def __init__(self, timeout: timedelta = DEFAULT_TIMEOUT):
        self._timeout = as_timedelta(timeout)

    @property
    def timeout(self) -> timedelta:
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self._timeout = as_timedelta(timeout)

    def _unsupported(self, what: str):
        raise NotImplementedError(f"{type(self).__name__} does not support {what}")

    def set(self, key, value):
        self._unsupported("set")

    def get(self, key):
        self._unsupported("get")

    def add(self, key, value):
        self._unsupported("add")

    def compare_set(self, key, expected_value, desired_value):
        self._unsupported("compare_set")

    def check(self, keys):
        self._unsupported("check")

    def delete_key(self, key):
        self._unsupported("delete_key")

    def num_keys(self):
        self._unsupported("num_keys")

    def wait(self, keys, timeout=None):
        self._unsupported("wait")

    def append(self, key, value):
        # upstream's default: compare_set until the concatenation sticks
        value = as_bytes(value)
        while True:
            current = self.get(key) if self.check([key]) else b""
            if self.compare_set(key, current, current + value) == current + value:
                return

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        if len(keys) != len(values):
            raise ValueError("multi_set: keys and values must have the same length")
        for k, v in zip(keys, values):
            self.set(k, v)

    def has_extended_api(self) -> bool:
        return False

    def queue_push(self, key, value):
        self._unsupported("queue_push")

    def queue_pop(self, key, block: bool = True):
        self._unsupported("queue_pop")

    def queue_len(self, key):
        self._unsupported("queue_len")

    def list_keys(self):
        self._unsupported("list_keys")

    def clone(self):
        self._unsupported("clone")


Store.__module__ = "torch._C._distributed_c10d"


class HashStore(Store):
    """A store in this process's memory, shared by the threads that hold it."""

    def __init__(self):
        super().__init__()
        self._kv = KeyValueTable()
        self._cond = threading.Condition()

    def set(self, key, value):
        with self._cond:
            self._kv.set(key, as_bytes(value))
            self._cond.notify_all()

    def _wait_locked(self, keys, timeout: timedelta):
        deadline = None if timeout == NO_TIMEOUT else time.monotonic() + timeout.total_seconds()
        while not all(self._kv.has(k) for k in keys):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise wait_timeout_error(timeout, keys)
            self._cond.wait(left)

    def get(self, key):
        with self._cond:
            self._wait_locked([key], self._timeout)
            return self._kv.get(key)

    def add(self, key, value):
        with self._cond:
            out = self._kv.add(key, value)
            self._cond.notify_all()
            return out

    def compare_set(self, key, expected_value, desired_value):
        with self._cond:
            out = self._kv.compare_set(key, as_bytes(expected_value), as_bytes(desired_value))
            self._cond.notify_all()
            return out

    def check(self, keys):
        with self._cond:
            return all(self._kv.has(k) for k in keys)

    def delete_key(self, key):
        with self._cond:
            return self._kv.delete(key)

    def num_keys(self):
        with self._cond:
            return self._kv.num_keys()

    def wait(self, keys, timeout=None):
        with self._cond:
            self._wait_locked(list(keys), self._timeout if timeout is None else as_timedelta(timeout))

    def append(self, key, value):
        with self._cond:
            self._kv.append(key, as_bytes(value))
            self._cond.notify_all()

    def multi_get(self, keys):
        with self._cond:
            self._wait_locked(list(keys), self._timeout)
            return [self._kv.get(k) for k in keys]

    def multi_set(self, keys, values):
        if len(keys) != len(values):
            raise ValueError("multi_set: keys and values must have the same length")
        with self._cond:
            for k, v in zip(keys, values):
                self._kv.set(k, as_bytes(v))
            self._cond.notify_all()

    def has_extended_api(self):
        return True

    def queue_push(self, key, value):
        with self._cond:
            self._kv.queue_push(key, as_bytes(value))
            self._cond.notify_all()

    def queue_pop(self, key, block: bool = True):
        with self._cond:
            if block:
                self._wait_locked([key], self._timeout)
            value = self._kv.queue_pop(key)
            if value is None:
                raise _DistQueueEmptyError("queue is empty")
            return value

    def queue_len(self, key):
        with self._cond:
            return self._kv.queue_len(key)

    def list_keys(self):
        with self._cond:
            return self._kv.list_keys()


class PrefixStore(Store):
    """Every key of ``store`` seen through ``prefix/``."""

    def __init__(self, prefix: str, store: Store):
        if not isinstance(store, Store):
            raise TypeError(f"PrefixStore: expected a Store, got {type(store).__name__}")
        super().__init__(store.timeout)
        self._prefix = prefix
        self._store = store

    def _k(self, key: str) -> str:
        return f"{self._prefix}/{key}"

    @property
    def underlying_store(self):
        return self._store

    @property
    def timeout(self):
        return self._store.timeout

    def set_timeout(self, timeout):
        self._store.set_timeout(timeout)

    def set(self, key, value):
        self._store.set(self._k(key), value)

    def get(self, key):
        return self._store.get(self._k(key))

    def add(self, key, value):
        return self._store.add(self._k(key), value)

    def compare_set(self, key, expected_value, desired_value):
        return self._store.compare_set(self._k(key), expected_value, desired_value)

    def check(self, keys):
        return self._store.check([self._k(k) for k in keys])

    def delete_key(self, key):
        return self._store.delete_key(self._k(key))

    def num_keys(self):
        return self._store.num_keys()

    def wait(self, keys, timeout=None):
        keys = [self._k(k) for k in keys]
        if timeout is None:
            return self._store.wait(keys)
        return self._store.wait(keys, timeout)

    def append(self, key, value):
        self._store.append(self._k(key), value)

    def multi_get(self, keys):
        return self._store.multi_get([self._k(k) for k in keys])

    def multi_set(self, keys, values):
        self._store.multi_set([self._k(k) for k in keys], values)

    def has_extended_api(self):
        return self._store.has_extended_api()

    def queue_push(self, key, value):
        self._store.queue_push(self._k(key), value)

    def queue_pop(self, key, block: bool = True):
        return self._store.queue_pop(self._k(key), block)

    def queue_len(self, key):
        return self._store.queue_len(self._k(key))

    def list_keys(self):
        return self._store.list_keys()

    def clone(self):
        return PrefixStore(self._prefix, self._store.clone())


for _cls in (HashStore, PrefixStore):
    _cls.__module__ = "torch._C._distributed_c10d"
