"""Sockets between the ranks of one group: a full mesh of TCP connections, framed messages.

Each rank listens on an ephemeral port and publishes ``host:port`` in the group's store; the
higher rank of each pair connects. A receiver thread per peer reads frames (``recv_into``, no
per-element work, nothing pickled) and files them in a mailbox keyed by (channel, peer, slot),
so sends never block on a peer that is itself sending. A frame is a fixed header, a short
descriptor (what the sender thinks it is sending, checked by the receiver) and the payload
bytes. A collective may *post* the buffer a frame belongs in, by its exact descriptor: the
receiver then reads the payload straight into it (no allocation, no copy); a frame that arrives
before its post lands in a fresh buffer, as every unposted frame does.

Failures are never silent: a peer whose connection drops poisons every wait on it; a rank that
detects a mismatch sends an ABORT frame with its message to every peer, and they raise it too.
A collective that loses a peer aborts the same way: in a chain or a ring the ranks downstream of
a dead one wait on a live neighbour, and would otherwise sit until their timeout.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections import deque

import numpy as np

from .errors import _DistBackendError, _DistNetworkError

HEADER = struct.Struct("<IIqQI")  # magic, channel, slot, nbytes, descriptor length
HELLO = struct.Struct("<II")       # magic, rank
MAGIC = 0x7C10D0A1
COLL, P2P, ABORT = 1, 2, 3


PeerError = _DistBackendError  # a lost peer or an abort: upstream's gloo raises a RuntimeError


RECV_STEP = 1 << 20  # bytes per recv_into: larger calls fault in fresh pages while holding the socket


def _recv_exact(sock: socket.socket, view: memoryview) -> None:
    got, n = 0, len(view)
    while got < n:
        k = sock.recv_into(view[got:], min(n - got, RECV_STEP))
        if k == 0:
            raise ConnectionResetError("connection closed by peer")
        got += k


def _send_all(sock: socket.socket, parts: list) -> None:
    """Header and payload in as few system calls as the kernel allows (sendmsg gathers)."""
    views = [memoryview(p).cast("B") for p in parts if len(p)]
    while views:
        k = sock.sendmsg(views)
        while k and views:
            if k >= views[0].nbytes:
                k -= views[0].nbytes
                views.pop(0)
            else:
                views[0] = views[0][k:]
                k = 0


class Mesh:
    def __init__(self, store, rank: int, size: int, timeout_s: float, host: str = "127.0.0.1"):
        self.rank, self.size, self.timeout_s = rank, size, timeout_s
        self.socks: dict[int, socket.socket] = {}
        self.send_locks: dict[int, threading.Lock] = {}
        self.cond = threading.Condition()
        self.mail: dict[tuple, deque] = {}
        self.posted: dict[tuple, np.ndarray] = {}  # (channel, peer, slot, descriptor) -> uint8 buffer
        self.dead: dict[int, str] = {}
        self.aborted: str | None = None
        self.closed = False
        if size > 1:
            self._connect(store, host)

    # -- set-up ------------------------------------------------------------------------------
    def _connect(self, store, host: str) -> None:
        listener = socket.create_server((host, 0))
        listener.settimeout(self.timeout_s)
        store.set(f"mesh/addr/{self.rank}", f"{host}:{listener.getsockname()[1]}")
        for peer in range(self.rank):
            h, p = store.get(f"mesh/addr/{peer}").decode().rsplit(":", 1)
            s = socket.create_connection((h, int(p)), timeout=self.timeout_s)
            s.sendall(HELLO.pack(MAGIC, self.rank))
            self._adopt(peer, s)
        deadline = time.monotonic() + self.timeout_s
        while len(self.socks) < self.size - 1:
            listener.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                s, _ = listener.accept()
            except socket.timeout:
                missing = sorted(set(range(self.rank + 1, self.size)) - set(self.socks))
                raise _DistBackendError(
                    f"rank {self.rank}: ranks {missing} did not connect within "
                    f"{self.timeout_s:g}s") from None
            s.settimeout(self.timeout_s)
            buf = bytearray(HELLO.size)
            _recv_exact(s, memoryview(buf))
            magic, peer = HELLO.unpack(buf)
            if magic != MAGIC or not self.rank < peer < self.size or peer in self.socks:
                s.close()
                continue
            self._adopt(peer, s)
        listener.close()

    def _adopt(self, peer: int, s: socket.socket) -> None:
        s.settimeout(None)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for opt in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            try:
                s.setsockopt(socket.SOL_SOCKET, opt, 4 << 20)
            except OSError:
                pass
        self.socks[peer] = s
        self.send_locks[peer] = threading.Lock()
        threading.Thread(target=self._receive, args=(peer, s), daemon=True,
                         name=f"c10d-recv-{self.rank}<-{peer}").start()

    # -- receiving ---------------------------------------------------------------------------
    def _receive(self, peer: int, s: socket.socket) -> None:
        head = bytearray(HEADER.size)
        try:
            while True:
                _recv_exact(s, memoryview(head))
                magic, channel, slot, nbytes, dlen = HEADER.unpack(head)
                if magic != MAGIC:
                    raise ConnectionResetError("bad frame magic")
                desc = bytearray(dlen)
                _recv_exact(s, memoryview(desc))
                with self.cond:
                    payload = self.posted.pop((channel, peer, slot, desc.decode()), None)
                if payload is None or payload.nbytes != nbytes:
                    payload = np.empty(nbytes, np.uint8)
                if nbytes:
                    _recv_exact(s, memoryview(payload))
                with self.cond:
                    if channel == ABORT:
                        self.aborted = self.aborted or desc.decode()
                    else:
                        self.mail.setdefault((channel, peer, slot), deque()).append(
                            (desc.decode(), payload))
                    self.cond.notify_all()
        except (OSError, ConnectionResetError) as e:
            with self.cond:
                if not self.closed:
                    self.dead[peer] = str(e) or type(e).__name__
                self.cond.notify_all()

    def post(self, channel: int, peer: int, slot: int, desc: str, buf: np.ndarray) -> None:
        """Receive the frame (channel, peer, slot, desc) straight into ``buf`` (contiguous, uint8)
        if it has not arrived yet; ``recv`` still delivers it, and its payload is then ``buf``."""
        with self.cond:
            self.posted[(channel, peer, slot, desc)] = buf

    def unpost(self, channel: int, slot: int) -> None:
        """Forget the posts of a finished (or failed) operation."""
        with self.cond:
            for k in [k for k in self.posted if k[0] == channel and k[2] == slot]:
                del self.posted[k]

    def _lost(self, peers) -> str | None:
        """Why waiting on ``peers`` is hopeless (an abort raises at once), or None."""
        if self.aborted:
            raise PeerError(self.aborted)
        for p in peers:
            if p in self.dead:
                return (f"rank {self.rank}: connection to rank {p} was lost ({self.dead[p]}); "
                        f"did rank {p} die?")
        return None

    def _raise_lost(self, channel: int, message: str):
        """Called without the lock held: aborting sends to every peer."""
        if channel == COLL:
            self.abort_all(message)
        raise PeerError(message)

    def recv(self, channel: int, peer: int, slot: int, timeout_s: float, what: str):
        """(descriptor, uint8 payload) of the next frame from ``peer`` on (channel, slot)."""
        key = (channel, peer, slot)
        deadline = time.monotonic() + timeout_s
        with self.cond:
            while True:
                q = self.mail.get(key)
                if q:
                    item = q.popleft()
                    if not q:
                        del self.mail[key]
                    return item
                lost = self._lost([peer])
                if lost:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _DistBackendError(
                        f"rank {self.rank}: timed out after {int(timeout_s * 1000)}ms waiting for "
                        f"rank {peer} in {what}")
                self.cond.wait(left)
        self._raise_lost(channel, lost)

    def recv_any(self, channel: int, slot: int, timeout_s: float, what: str):
        deadline = time.monotonic() + timeout_s
        with self.cond:
            while True:
                for peer in range(self.size):
                    q = self.mail.get((channel, peer, slot))
                    if q:
                        item = q.popleft()
                        if not q:
                            del self.mail[(channel, peer, slot)]
                        return peer, item
                if self.aborted:
                    raise PeerError(self.aborted)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _DistBackendError(
                        f"rank {self.rank}: timed out after {int(timeout_s * 1000)}ms in {what}")
                self.cond.wait(left)

    # -- sending -----------------------------------------------------------------------------
    def send(self, channel: int, peer: int, slot: int, desc: str, payload) -> None:
        """Send a frame; ``payload`` is anything exposing a contiguous buffer (or None)."""
        with self.cond:
            lost = self._lost([peer])
        if lost:
            self._raise_lost(channel, lost)
        if isinstance(payload, np.ndarray):  # bytes of any dtype (ml_dtypes' have no buffer format)
            payload = np.ascontiguousarray(payload).reshape(-1).view(np.uint8)
        view = memoryview(payload).cast("B") if payload is not None else memoryview(b"")
        d = desc.encode()
        head = HEADER.pack(MAGIC, channel, slot, view.nbytes, len(d)) + d
        s = self.socks[peer]
        try:
            with self.send_locks[peer]:
                _send_all(s, [head, view])
        except OSError as e:
            with self.cond:
                self.dead.setdefault(peer, str(e))
            self._raise_lost(channel, f"rank {self.rank}: sending to rank {peer} failed ({e}); "
                                      f"did rank {peer} die?")

    def abort_all(self, message: str) -> None:
        """Tell every peer that this group's current operation failed, and why."""
        with self.cond:
            self.aborted = self.aborted or message
            self.cond.notify_all()
        d = message.encode()
        for peer, s in self.socks.items():
            if peer in self.dead:
                continue
            try:
                with self.send_locks[peer]:
                    s.sendall(HEADER.pack(MAGIC, ABORT, 0, 0, len(d)) + d)
            except OSError:
                pass

    def close(self) -> None:
        with self.cond:
            self.closed = True
        for s in self.socks.values():
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


def store_host(store) -> str:
    """The local address this rank reaches the store from (the interface peers can reach)."""
    inner = store
    while hasattr(inner, "underlying_store"):
        inner = inner.underlying_store
    sock = getattr(inner, "_sock", None)
    if sock is not None:
        try:
            host = sock.getsockname()[0]
            if host.startswith("::ffff:"):
                host = host[7:]
            return host
        except OSError:
            pass
    return "127.0.0.1"


__all__ = ["Mesh", "PeerError", "COLL", "P2P", "store_host", "_DistNetworkError"]
