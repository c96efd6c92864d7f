"""Messages of a SecAgg+ round over a socket: length-prefixed JSON, bytes and integer arrays
encoded explicitly (no pickle: a peer's bytes never become code)."""

from __future__ import annotations

import base64
import json
import socket
import struct

import numpy as np

_MAX = 1 << 28


def _enc(obj):
    if isinstance(obj, bytes):
        return {"$b": base64.b64encode(obj).decode()}
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj, dtype="<i8" if obj.dtype.kind in "iu" else "<f8")
        return {"$a": base64.b64encode(a.tobytes()).decode(), "k": a.dtype.str, "s": list(a.shape)}
    if isinstance(obj, dict):
        return {"$d": [[_enc(k), _enc(v)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return [_enc(v) for v in obj]
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    return obj


def _dec(obj):
    if isinstance(obj, list):
        return [_dec(v) for v in obj]
    if isinstance(obj, dict):
        if "$b" in obj:
            return base64.b64decode(obj["$b"])
        if "$a" in obj:
            if obj["k"] not in ("<i8", "<f8"):
                raise ValueError(f"array dtype {obj['k']!r} is not allowed on the wire")
            return np.frombuffer(base64.b64decode(obj["$a"]), obj["k"]).reshape(obj["s"]).copy()
        if "$d" in obj:
            return {_dec(k): _dec(v) for k, v in obj["$d"]}
        raise ValueError(f"unknown wire object with keys {sorted(obj)}")
    return obj


def send(sock: socket.socket, message: dict) -> None:
    body = json.dumps(_enc(message)).encode()
    sock.sendall(struct.pack(">I", len(body)) + body)


def _exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("peer closed the connection")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket) -> dict:
    (n,) = struct.unpack(">I", _exact(sock, 4))
    if n > _MAX:
        raise ValueError(f"message of {n} bytes exceeds the {_MAX}-byte cap")
    return _dec(json.loads(_exact(sock, n)))


def json_bytes(obj) -> bytes:
    """One value as bytes (for a key-value store)."""
    return json.dumps(_enc(obj)).encode()


def from_json_bytes(data: bytes):
    return _dec(json.loads(data))
