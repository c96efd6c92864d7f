"""FileStore: a store in a file that processes on one machine (or a shared filesystem) share.

The file has upstream's format, so an upstream process and one of ours can share it: an
append-only log of records, each a u32-LE length and the key's bytes, then a u32-LE length and
the value's bytes, written under an exclusive ``flock``; a reader replays what it has not seen
yet. User keys are stored with a ``/`` prefix; a deletion is a record whose key is ``-`` and the
stored key, with an empty value. ``refcount/`` counts the live stores on the file and
``cleanup/`` the finished ones; the last one to finish, once ``numWorkers`` have finished,
removes the file, as upstream's does.
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

LEN = struct.Struct("<I")
REGULAR, DELETE = "/", "-"
REFCOUNT, CLEANUP = "refcount/", "cleanup/"


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
        self._locked(lambda: self._add_raw(REFCOUNT, 1))

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
        pos, n = 0, LEN.size
        while pos + n <= len(data):
            (klen,) = LEN.unpack_from(data, pos)
            if pos + n + klen + n > len(data):
                break  # a record still being written
            (vlen,) = LEN.unpack_from(data, pos + n + klen)
            if pos + 2 * n + klen + vlen > len(data):
                break
            key = data[pos + n:pos + n + klen].decode()
            value = data[pos + 2 * n + klen:pos + 2 * n + klen + vlen]
            pos += 2 * n + klen + vlen
            if key.startswith(DELETE):
                self._kv.delete(key[len(DELETE):])
            else:
                self._kv.set(key, value)
        self._offset += pos

    def _append(self, key: str, value: bytes) -> None:
        """One record (``key`` as stored, prefix included)."""
        k = key.encode()
        f = self._f
        f.seek(0, os.SEEK_END)
        f.write(LEN.pack(len(k)) + k + LEN.pack(len(value)) + value)
        f.flush()
        self._replay()

    def _add_raw(self, key: str, value: int) -> int:
        cur = self._kv.data.get(key)
        n = int(value) + (int(cur) if cur else 0)
        self._append(key, str(n).encode())
        return n

    def _refresh(self) -> None:
        self._locked(lambda: None)

    # -- operations --------------------------------------------------------------------------
    def set(self, key, value):
        self._locked(lambda: self._append(REGULAR + key, as_bytes(value)))

    def _wait(self, keys, timeout: timedelta) -> None:
        deadline = None if timeout == NO_TIMEOUT else time.monotonic() + timeout.total_seconds()
        delay = 0.001
        while True:
            self._refresh()
            if all(REGULAR + k in self._kv.data for k in keys):
                return
            if deadline is not None and time.monotonic() >= deadline:
                raise wait_timeout_error(timeout, keys)
            time.sleep(delay)
            delay = min(delay * 2, 0.01)

    def get(self, key):
        self._wait([key], self._timeout)
        return self._kv.data[REGULAR + key]

    def add(self, key, value):
        return self._locked(lambda: self._add_raw(REGULAR + key, value))

    def compare_set(self, key, expected_value, desired_value):
        exp, des = as_bytes(expected_value), as_bytes(desired_value)
        k = REGULAR + key

        def op():
            cur = self._kv.data.get(k)
            if (cur is None and exp == b"") or cur == exp:
                self._append(k, des)
                return des
            return exp if cur is None else cur

        return self._locked(op)

    def check(self, keys):
        self._refresh()
        return all(REGULAR + k in self._kv.data for k in keys)

    def delete_key(self, key):
        # upstream writes the deletion record whether or not the key exists, and answers True
        self._locked(lambda: self._append(DELETE + REGULAR + key, b""))
        return True

    def num_keys(self):
        # every key in the file, the store's own refcount/ and cleanup/ included (upstream's count)
        self._refresh()
        return len(self._kv.data)

    def wait(self, keys, timeout=None):
        self._wait(list(keys), self._timeout if timeout is None else as_timedelta(timeout))

    def append(self, key, value):
        v, k = as_bytes(value), REGULAR + key
        self._locked(lambda: self._append(k, self._kv.data.get(k, b"") + v))

    def multi_get(self, keys):
        self._wait(list(keys), self._timeout)
        return [self._kv.data[REGULAR + k] for k in keys]

    def has_extended_api(self):
        return False

    def list_keys(self):
        # upstream strips one character (the regular prefix) from every key in the file
        self._refresh()
        return [k[1:] for k in self._kv.data]

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
            finished = self._locked(lambda: self._add_raw(CLEANUP, 1))
            refs = self._locked(lambda: self._add_raw(REFCOUNT, -1))
            if refs == 0 and self._num_workers >= 0 and finished >= self._num_workers:
                os.remove(self._path)
        except Exception:  # best effort, as upstream's destructor (also at interpreter exit)
            pass


FileStore.__module__ = "torch._C._distributed_c10d"
