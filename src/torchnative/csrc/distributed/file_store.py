"""FileStore: a store in a file that processes on one machine (or a shared filesystem) share.

The file is an append-only log of records (key, value) under an exclusive ``flock``; a reader
replays what it has not seen yet. A deletion is a record with a marker value. When
``numWorkers`` stores have been released, the file is removed, as upstream's FileStore does.
"""

from __future__ import annotations

import fcntl
import os
import struct
import time
from datetime import timedelta

from .errors import _DistQueueEmptyError
from .kv import KeyValueTable
from .store import DEFAULT_TIMEOUT, NO_TIMEOUT, Store, as_bytes, as_timedelta, wait_timeout_error

LEN = struct.Struct("<Q")
DELETED = b"\x00torchnative-deleted\x00"
REFCOUNT = "cleanup/"


class FileStore(Store):
    def __init__(self, path: str, numWorkers: int = -1):
        super().__init__(DEFAULT_TIMEOUT)
        self._path = path
        self._num_workers = numWorkers
        self._kv = KeyValueTable()
        self._offset = 0
        self._closed = False
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        os.close(fd)
        self._refcount_key = REFCOUNT

    @property
    def path(self) -> str:
        return self._path

    # -- the log -----------------------------------------------------------------------------
    def _locked(self, fn):
        with open(self._path, "r+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                self._f = f
                self._replay()
                return fn()
            finally:
                self._f = None
                fcntl.flock(f, fcntl.LOCK_UN)

    def _replay(self) -> None:
        f = self._f
        f.seek(self._offset)
        data = f.read()
        pos = 0
        while pos + 8 <= len(data):
            (klen,) = LEN.unpack_from(data, pos)
            (vlen,) = LEN.unpack_from(data, pos + 8 + klen)
            key = data[pos + 8:pos + 8 + klen].decode()
            value = data[pos + 16 + klen:pos + 16 + klen + vlen]
            pos += 16 + klen + vlen
            if value == DELETED:
                self._kv.delete(key)
            else:
                self._kv.set(key, value)
        self._offset += pos

    def _append(self, key: str, value: bytes) -> None:
        k = key.encode()
        f = self._f
        f.seek(0, os.SEEK_END)
        f.write(LEN.pack(len(k)) + k + LEN.pack(len(value)) + value)
        f.flush()
        self._replay()

    def _int(self, key: str) -> int:
        v = self._kv.data.get(key)
        return int(v) if v is not None else 0

    def _refresh(self) -> None:
        self._locked(lambda: None)

    # -- operations --------------------------------------------------------------------------
    def set(self, key, value):
        self._locked(lambda: self._append(key, as_bytes(value)))

    def _wait(self, keys, timeout: timedelta) -> None:
        deadline = None if timeout == NO_TIMEOUT else time.monotonic() + timeout.total_seconds()
        delay = 0.001
        while True:
            self._refresh()
            if all(k in self._kv.data for k in keys):
                return
            if deadline is not None and time.monotonic() >= deadline:
                raise wait_timeout_error(timeout, keys)
            time.sleep(delay)
            delay = min(delay * 2, 0.01)

    def get(self, key):
        self._wait([key], self._timeout)
        return self._kv.data[key]

    def add(self, key, value):
        def op():
            n = self._int(key) + int(value)
            self._append(key, str(n).encode())
            return n

        return self._locked(op)

    def compare_set(self, key, expected_value, desired_value):
        exp, des = as_bytes(expected_value), as_bytes(desired_value)

        def op():
            cur = self._kv.data.get(key)
            if (cur is None and exp == b"") or cur == exp:
                self._append(key, des)
                return des
            return exp if cur is None else cur

        return self._locked(op)

    def check(self, keys):
        self._refresh()
        return all(k in self._kv.data for k in keys)

    def delete_key(self, key):
        def op():
            if key not in self._kv.data:
                return False
            self._append(key, DELETED)
            return True

        return self._locked(op)

    def num_keys(self):
        self._refresh()
        return len([k for k in self._kv.data if k != self._refcount_key])

    def wait(self, keys, timeout=None):
        self._wait(list(keys), self._timeout if timeout is None else as_timedelta(timeout))

    def append(self, key, value):
        v = as_bytes(value)
        self._locked(lambda: self._append(key, self._kv.data.get(key, b"") + v))

    def multi_get(self, keys):
        self._wait(list(keys), self._timeout)
        return [self._kv.data[k] for k in keys]

    def has_extended_api(self):
        return True

    def list_keys(self):
        self._refresh()
        return [k for k in self._kv.data if k != self._refcount_key]

    def queue_push(self, key, value):
        raise NotImplementedError("FileStore does not support queues (upstream's neither)")

    queue_pop = queue_len = queue_push

    def clone(self):
        return FileStore(self._path, self._num_workers)

    def __del__(self):
        if getattr(self, "_closed", True) or not os.path.exists(self._path):
            return
        self._closed = True
        try:
            done = self._locked(lambda: (self._append(self._refcount_key, str(
                self._int(self._refcount_key) + 1).encode()), self._int(self._refcount_key))[1])
            if self._num_workers > 0 and done >= self._num_workers:
                os.remove(self._path)
        except OSError:
            pass


FileStore.__module__ = "torch._C._distributed_c10d"
