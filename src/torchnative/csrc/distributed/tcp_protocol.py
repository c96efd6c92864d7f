"""Upstream's TCPStore wire protocol (torch 2.13): constants and encoders.

No frame header: a request is a one-byte command followed by its arguments; strings and byte
values are a u64 little-endian length and the bytes; integers are i64 little-endian; counts of
keys are u64. A connection opens with VALIDATE + u32 magic, then PING + u32 nonce (echoed).
"""

from __future__ import annotations

import struct

VALIDATE, SET, COMPARE_SET, GET, ADD, CHECK, WAIT, GETNUMKEYS, DELETE_KEY, APPEND, MULTI_GET, \
    MULTI_SET, CANCEL_WAIT, PING, QUEUE_PUSH, QUEUE_POP, QUEUE_LEN, LIST_KEYS = range(18)

MAGIC = 0x3C85F7CE
STOP_WAITING, WAIT_CANCELED = 0, 1     # replies to WAIT / CANCEL_WAIT
READY, NOT_READY = 0, 1                # replies to CHECK

# Caps of upstream's libuv server; a request beyond them is treated as garbage.
MAX_KEY = 8 * 1024
MAX_PAYLOAD = 8 * 1024 * 1024 * 1024  # generous: our own clients may store large values
MAX_KEYS = 128 * 1024

U32 = struct.Struct("<I")
U64 = struct.Struct("<Q")
I64 = struct.Struct("<q")


def string(data: bytes | str) -> bytes:
    if isinstance(data, str):
        data = data.encode()
    return U64.pack(len(data)) + data


def integer(value: int) -> bytes:
    return I64.pack(value)


def count(n: int) -> bytes:
    return U64.pack(n)
