"""The key-value semantics every store shares (HashStore, the TCPStore server, FileStore's replay).

Values are bytes; ``add`` keeps integers as their decimal text, as upstream's stores do, so a
value written by ``add`` reads back with ``get`` as b"5". Queues are lists of bytes per key; a key
counts as present for ``wait``/``check`` while its queue is non-empty.
"""

from __future__ import annotations


class KeyValueTable:
    def __init__(self):
        self.data: dict[str, bytes] = {}
        self.queues: dict[str, list[bytes]] = {}

    def has(self, key: str) -> bool:
        return key in self.data or bool(self.queues.get(key))

    def set(self, key: str, value: bytes) -> None:
        self.data[key] = bytes(value)

    def get(self, key: str) -> bytes:
        return self.data[key]

    def add(self, key: str, delta: int) -> int:
        current = self.data.get(key)
        try:
            value = (int(current) if current is not None else 0) + int(delta)
        except ValueError:
            raise ValueError(f"add: the value of key {key!r} is not an integer: {current!r}") from None
        self.data[key] = str(value).encode()
        return value

    def compare_set(self, key: str, expected: bytes, desired: bytes) -> bytes:
        if key not in self.data:
            if expected == b"":
                self.data[key] = bytes(desired)
                return bytes(desired)
            return bytes(expected)
        if self.data[key] == expected:
            self.data[key] = bytes(desired)
            return bytes(desired)
        return self.data[key]

    def append(self, key: str, value: bytes) -> None:
        self.data[key] = self.data.get(key, b"") + bytes(value)

    def delete(self, key: str) -> bool:
        found = self.data.pop(key, None) is not None
        return self.queues.pop(key, None) is not None or found

    def num_keys(self) -> int:
        return len(self.data)

    def list_keys(self) -> list[str]:
        return list(self.data)

    def queue_push(self, key: str, value: bytes) -> None:
        self.queues.setdefault(key, []).append(bytes(value))

    def queue_pop(self, key: str) -> bytes | None:
        q = self.queues.get(key)
        if not q:
            return None
        value = q.pop(0)
        if not q:
            del self.queues[key]
        return value

    def queue_len(self, key: str) -> int:
        return len(self.queues.get(key, ()))
