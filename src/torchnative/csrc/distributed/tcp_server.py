"""The TCPStore server: one thread, a selector over the listening socket and every client.

Each client has an input buffer; complete requests are parsed from it and answered at once,
except WAIT, which is parked until its keys exist (or the client sends CANCEL_WAIT). A client
that sends something that is not a request (bad magic, unknown command, absurd lengths) is
disconnected; the server keeps serving everyone else.
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading

from . import tcp_protocol as P
from .kv import KeyValueTable

log = logging.getLogger("torch.distributed.tcpstore")


class _Incomplete(Exception):
    """The buffer does not yet hold a whole request."""


class _Garbage(Exception):
    """The bytes are not a request of this protocol."""


class _Reader:
    def __init__(self, buf: bytearray):
        self.buf, self.pos = buf, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.buf):
            raise _Incomplete
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def u8(self) -> int:
        return self.take(1)[0]

    def u32(self) -> int:
        return P.U32.unpack(self.take(4))[0]

    def u64(self, cap: int) -> int:
        n = P.U64.unpack(self.take(8))[0]
        if n > cap:
            raise _Garbage(f"length {n} over the cap {cap}")
        return n

    def i64(self) -> int:
        return P.I64.unpack(self.take(8))[0]

    def key(self) -> str:
        raw = self.take(self.u64(P.MAX_KEY))
        try:
            return raw.decode()
        except UnicodeDecodeError:
            raise _Garbage("key is not utf-8") from None

    def value(self) -> bytes:
        return self.take(self.u64(P.MAX_PAYLOAD))

    def keys(self) -> list[str]:
        return [self.key() for _ in range(self.u64(P.MAX_KEYS))]


class _Client:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.inbuf = bytearray()
        self.outbuf = bytearray()
        self.validated = False
        self.waiting: list[str] | None = None


class TCPStoreServer:
    def __init__(self, host: str, port: int, backlog: int = 1024):
        self.kv = KeyValueTable()
        self.listener = socket.create_server((host, port), backlog=backlog, reuse_port=False)
        self.port = self.listener.getsockname()[1]
        self.listener.setblocking(False)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, None)
        self._wake_r, self._wake_w = socket.socketpair()
        self.sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._stopping = False
        self.thread = threading.Thread(target=self._run, name="TCPStoreServer", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self._stopping = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout=5)

    # -- event loop -------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            while not self._stopping:
                for key, events in self.sel.select():
                    if key.data is None:
                        self._accept()
                    elif key.data == "wake":
                        self._wake_r.recv(64)
                    else:
                        if events & selectors.EVENT_READ:
                            self._readable(key.data)
                        if events & selectors.EVENT_WRITE and key.data.sock.fileno() >= 0:
                            self._flush(key.data)
        finally:
            for key in list(self.sel.get_map().values()):
                key.fileobj.close()
            self.sel.close()
            self._wake_w.close()

    def _accept(self) -> None:
        try:
            sock, _ = self.listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sel.register(sock, selectors.EVENT_READ, _Client(sock))

    def _drop(self, c: _Client) -> None:
        try:
            self.sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass
        c.sock.close()

    def _readable(self, c: _Client) -> None:
        try:
            data = c.sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(c)
            return
        c.inbuf += data
        while c.inbuf:
            r = _Reader(c.inbuf)
            try:
                self._handle(c, r)
            except _Incomplete:
                break
            except _Garbage as e:
                log.warning("TCPStore server: dropping a client that sent garbage (%s)", e)
                self._drop(c)
                return
            del c.inbuf[:r.pos]
        self._flush(c)

    def _send(self, c: _Client, data: bytes) -> None:
        c.outbuf += data

    def _flush(self, c: _Client) -> None:
        if c.sock.fileno() < 0:
            return
        while c.outbuf:
            try:
                n = c.sock.send(c.outbuf)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self._drop(c)
                return
            del c.outbuf[:n]
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.outbuf else 0)
        try:
            self.sel.modify(c.sock, events, c)
        except (KeyError, ValueError):
            pass

    # -- requests ---------------------------------------------------------------------------
    def _handle(self, c: _Client, r: _Reader) -> None:
        cmd = r.u8()
        if not c.validated:
            if cmd != P.VALIDATE or r.u32() != P.MAGIC:
                raise _Garbage("the connection did not start with VALIDATE and the magic number")
            c.validated = True
            return
        kv = self.kv
        if cmd == P.PING:
            self._send(c, P.U32.pack(r.u32()))
        elif cmd == P.SET:
            key, value = r.key(), r.value()
            kv.set(key, value)
            self._wake_waiters()
        elif cmd == P.COMPARE_SET:
            key, exp, des = r.key(), r.value(), r.value()
            self._send(c, P.string(kv.compare_set(key, exp, des)))
            self._wake_waiters()
        elif cmd == P.GET:
            key = r.key()
            if not kv.has(key) or key not in kv.data:
                raise _Garbage(f"GET of a missing key {key!r} (clients WAIT first)")
            self._send(c, P.string(kv.get(key)))
        elif cmd == P.ADD:
            key, delta = r.key(), r.i64()
            try:
                value = kv.add(key, delta)
            except ValueError as e:
                raise _Garbage(str(e)) from None
            self._send(c, P.integer(value))
            self._wake_waiters()
        elif cmd == P.CHECK:
            keys = r.keys()
            self._send(c, bytes([P.READY if all(kv.has(k) for k in keys) else P.NOT_READY]))
        elif cmd == P.WAIT:
            keys = r.keys()
            if all(kv.has(k) for k in keys):
                self._send(c, bytes([P.STOP_WAITING]))
            else:
                c.waiting = keys
        elif cmd == P.CANCEL_WAIT:
            c.waiting = None
            self._send(c, bytes([P.WAIT_CANCELED]))
        elif cmd == P.GETNUMKEYS:
            self._send(c, P.integer(kv.num_keys()))
        elif cmd == P.DELETE_KEY:
            self._send(c, P.integer(1 if kv.delete(r.key()) else 0))
        elif cmd == P.APPEND:
            key, value = r.key(), r.value()
            kv.append(key, value)
            self._wake_waiters()
        elif cmd == P.MULTI_GET:
            keys = r.keys()
            if not all(k in kv.data for k in keys):
                raise _Garbage("MULTI_GET of missing keys (clients WAIT first)")
            self._send(c, b"".join(P.string(kv.get(k)) for k in keys))
        elif cmd == P.MULTI_SET:
            n = r.u64(P.MAX_KEYS)
            pairs = [(r.key(), r.value()) for _ in range(n)]
            for k, v in pairs:
                kv.set(k, v)
            self._wake_waiters()
        elif cmd == P.QUEUE_PUSH:
            key, value = r.key(), r.value()
            kv.queue_push(key, value)
            self._wake_waiters()
        elif cmd == P.QUEUE_POP:
            value = kv.queue_pop(r.key())
            self._send(c, P.integer(0) if value is None else P.integer(1) + P.string(value))
        elif cmd == P.QUEUE_LEN:
            self._send(c, P.integer(kv.queue_len(r.key())))
        elif cmd == P.LIST_KEYS:
            keys = kv.list_keys()
            self._send(c, P.integer(len(keys)) + b"".join(P.string(k) for k in keys))
        else:
            raise _Garbage(f"unknown command {cmd}")

    def _wake_waiters(self) -> None:
        for key in list(self.sel.get_map().values()):
            c = key.data
            if isinstance(c, _Client) and c.waiting is not None \
                    and all(self.kv.has(k) for k in c.waiting):
                c.waiting = None
                self._send(c, bytes([P.STOP_WAITING]))
                self._flush(c)
