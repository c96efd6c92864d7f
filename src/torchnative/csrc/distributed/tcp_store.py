"""TCPStore: a client of upstream's TCPStore protocol, hosting the server when ``is_master``."""

from __future__ import annotations

import errno
import os
import random
import socket
import threading
import time
from datetime import timedelta

from . import tcp_protocol as P
from .errors import _DistNetworkError, _DistQueueEmptyError, _DistStoreError
from .store import DEFAULT_TIMEOUT, NO_TIMEOUT, Store, as_bytes, as_timedelta, wait_timeout_error
from .tcp_server import TCPStoreServer

KEY_PREFIX = "/"
INIT_KEY = "init/"  # counted by wait_for_workers, outside the "/" key space as upstream's


def _start_server(host: str, port: int) -> TCPStoreServer:
    try:
        return TCPStoreServer("" if host in ("", "0.0.0.0") else host, port)
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e.errno))
        raise _DistNetworkError(
            f"The server socket has failed to listen on any local network address. "
            f"port: {port}, code: {-(e.errno or 0)}, name: {name}, message: {e.strerror}") from None


class TCPStore(Store):
    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: timedelta = DEFAULT_TIMEOUT,
                 wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd: int | None = None, use_libuv: bool | None = None):
        super().__init__(as_timedelta(timeout))
        if master_listen_fd is not None:
            raise NotImplementedError("TCPStore(master_listen_fd=...): not supported by torchnative")
        if not 0 <= int(port) < 65536:
            raise ValueError(f"TCPStore: port {port} is out of range")
        self._host = host_name
        self._world_size = world_size
        self._server = _start_server(host_name, int(port)) if is_master else None
        self._port = self._server.port if self._server else int(port)
        self._lock = threading.Lock()
        if world_size is not None and world_size > 1:
            time.sleep(random.uniform(0.001, min(world_size, 100) / 1000))  # stagger, as upstream
        self._sock = self._connect()
        if wait_for_workers:
            self._wait_for_workers()

    # -- connection -------------------------------------------------------------------------
    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + self._timeout.total_seconds()
        delay = 0.01
        last = None
        while True:
            try:
                sock = socket.create_connection((self._host, self._port),
                                                timeout=max(0.1, deadline - time.monotonic()))
                break
            except OSError as e:
                last = e
                if time.monotonic() + delay >= deadline:
                    raise _DistNetworkError(
                        f"The client socket has timed out after {self._timeout.total_seconds():g}s "
                        f"while trying to connect to ({self._host}, {self._port}): {last}") from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        nonce = random.getrandbits(32)
        sock.sendall(bytes([P.VALIDATE]) + P.U32.pack(P.MAGIC) + bytes([P.PING]) + P.U32.pack(nonce))
        self._sock = sock
        if self._u32() != nonce:
            raise _DistNetworkError(f"TCPStore at {self._host}:{self._port} answered the ping wrongly")
        return sock

    def _recv(self, n: int) -> bytes:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            try:
                k = self._sock.recv_into(view[got:])
            except socket.timeout:
                raise
            except OSError as e:
                raise _DistNetworkError(f"TCPStore connection to {self._host}:{self._port} failed: {e}") from None
            if k == 0:
                raise _DistNetworkError(
                    f"TCPStore server {self._host}:{self._port} closed the connection (is it gone?)")
            got += k
        return bytes(buf)

    def _u8(self) -> int:
        return self._recv(1)[0]

    def _u32(self) -> int:
        return P.U32.unpack(self._recv(4))[0]

    def _i64(self) -> int:
        return P.I64.unpack(self._recv(8))[0]

    def _bytes(self) -> bytes:
        return self._recv(P.U64.unpack(self._recv(8))[0])

    def _send(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as e:
            raise _DistNetworkError(
                f"TCPStore server {self._host}:{self._port} is unreachable: {e}") from None

    def _wait_for_workers(self) -> None:
        if self._world_size is None:
            return
        with self._lock:
            self._send(bytes([P.ADD]) + P.string(INIT_KEY) + P.integer(1))
            self._i64()
        if self._server is None:
            return
        start = time.monotonic()
        while True:
            with self._lock:
                self._do_wait([INIT_KEY], self._timeout)
                self._send(bytes([P.GET]) + P.string(INIT_KEY))
                joined = int(self._bytes())
            if joined >= self._world_size:
                return
            elapsed = time.monotonic() - start
            if self._timeout != NO_TIMEOUT and elapsed > self._timeout.total_seconds():
                raise _DistStoreError(
                    f"Timed out after {int(elapsed)} seconds waiting for clients. "
                    f"{joined}/{self._world_size} clients joined.")
            time.sleep(0.01)

    # -- properties ---------------------------------------------------------------------------
    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        return self._port

    @property
    def libuvBackend(self) -> bool:
        return False

    def __del__(self):
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()
        server = getattr(self, "_server", None)
        if server is not None:
            server.stop()

    # -- operations ---------------------------------------------------------------------------
    def _do_wait(self, keys: list[str], timeout: timedelta) -> None:
        self._send(bytes([P.WAIT]) + P.count(len(keys)) + b"".join(P.string(k) for k in keys))
        if timeout != NO_TIMEOUT:
            self._sock.settimeout(timeout.total_seconds())
        try:
            reply = self._u8()
        except socket.timeout:
            reply = None
        finally:
            self._sock.settimeout(None)
        if reply == P.STOP_WAITING:
            return
        if reply is not None:
            raise _DistStoreError(f"TCPStore: unexpected reply {reply} to WAIT")
        self._send(bytes([P.CANCEL_WAIT]))
        reply = self._u8()
        if reply == P.STOP_WAITING:  # the keys arrived just before the cancel
            reply = self._u8()
        if reply != P.WAIT_CANCELED:
            raise _DistStoreError(f"TCPStore: unexpected reply {reply} to CANCEL_WAIT")
        raise wait_timeout_error(timeout, keys)

    def set(self, key, value):
        with self._lock:
            self._send(bytes([P.SET]) + P.string(KEY_PREFIX + key) + P.string(as_bytes(value)))

    def get(self, key):
        k = KEY_PREFIX + key
        with self._lock:
            self._do_wait([k], self._timeout)
            self._send(bytes([P.GET]) + P.string(k))
            return self._bytes()

    def add(self, key, value):
        with self._lock:
            self._send(bytes([P.ADD]) + P.string(KEY_PREFIX + key) + P.integer(int(value)))
            return self._i64()

    def compare_set(self, key, expected_value, desired_value):
        with self._lock:
            self._send(bytes([P.COMPARE_SET]) + P.string(KEY_PREFIX + key)
                       + P.string(as_bytes(expected_value)) + P.string(as_bytes(desired_value)))
            return self._bytes()

    def check(self, keys):
        with self._lock:
            self._send(bytes([P.CHECK]) + P.count(len(keys))
                       + b"".join(P.string(KEY_PREFIX + k) for k in keys))
            reply = self._u8()
        if reply not in (P.READY, P.NOT_READY):
            raise _DistStoreError("ready or not_ready response expected")
        return reply == P.READY

    def delete_key(self, key):
        with self._lock:
            self._send(bytes([P.DELETE_KEY]) + P.string(KEY_PREFIX + key))
            return self._i64() == 1

    def num_keys(self):
        with self._lock:
            self._send(bytes([P.GETNUMKEYS]))
            return self._i64()

    def wait(self, keys, timeout=None):
        timeout = self._timeout if timeout is None else as_timedelta(timeout)
        with self._lock:
            self._do_wait([KEY_PREFIX + k for k in keys], timeout)

    def append(self, key, value):
        with self._lock:
            self._send(bytes([P.APPEND]) + P.string(KEY_PREFIX + key) + P.string(as_bytes(value)))

    def multi_get(self, keys):
        prefixed = [KEY_PREFIX + k for k in keys]
        with self._lock:
            self._do_wait(prefixed, self._timeout)
            self._send(bytes([P.MULTI_GET]) + P.count(len(keys))
                       + b"".join(P.string(k) for k in prefixed))
            return [self._bytes() for _ in keys]

    def multi_set(self, keys, values):
        if len(keys) != len(values):
            raise ValueError("multiSet keys and values vectors must be of same size")
        body = b"".join(P.string(KEY_PREFIX + k) + P.string(as_bytes(v)) for k, v in zip(keys, values))
        with self._lock:
            self._send(bytes([P.MULTI_SET]) + P.count(len(keys)) + body)

    def has_extended_api(self):
        return True

    def queue_push(self, key, value):
        with self._lock:
            self._send(bytes([P.QUEUE_PUSH]) + P.string(KEY_PREFIX + key) + P.string(as_bytes(value)))

    def queue_pop(self, key, block: bool = True):
        k = KEY_PREFIX + key
        with self._lock:
            if block:
                self._do_wait([k], self._timeout)
            self._send(bytes([P.QUEUE_POP]) + P.string(k))
            if self._i64() == 0:
                raise _DistQueueEmptyError("queue is empty")
            return self._bytes()

    def queue_len(self, key):
        with self._lock:
            self._send(bytes([P.QUEUE_LEN]) + P.string(KEY_PREFIX + key))
            return self._i64()

    def list_keys(self):
        with self._lock:
            self._send(bytes([P.LIST_KEYS]))
            n = self._i64()
            keys = [self._bytes().decode() for _ in range(n)]
        return [k[len(KEY_PREFIX):] if k.startswith(KEY_PREFIX) else k for k in keys]

    def clone(self):
        return TCPStore(self._host, self._port, None, False, self._timeout, wait_for_workers=False)

    def _server_pid(self) -> int:
        return os.getpid() if self._server else -1


TCPStore.__module__ = "torch._C._distributed_c10d"
