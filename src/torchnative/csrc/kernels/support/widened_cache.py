"""float32 copies of 16- and 8-bit float matrix operands, kept between products.

numpy has no bfloat16 (or float16) matrix product, so a product widens both operands to float32
and rounds the float32 result once, as upstream's CPU gemm accumulates in opmath. For a weight
read by every decode step that widening costs more than the product itself; this cache keeps
the widened array of an operand and hands it back while the bytes it came from are unchanged.

A stale copy would be a silent wrong answer, so an entry is served only when all of these still
hold: the same storage object and byte buffer (``set_``, ``.data =``, ``resize_`` and moving
into shared memory all change one of them); the same count of writes into that storage, which
every in-place write through any tensor over it adds to (views, ``.data``, ``detach``, a second
tensor ``set_`` onto it, ``Storage.copy_``/``fill_``/item writes); the same version counter
value of the operand itself. Storages whose bytes are written where we cannot count are never
cached: memory numpy owns (``from_numpy``, ``frombuffer``, DLPack imports, shared memory, files)
and storages handed out as a numpy array, DLPack capsule or storage slice.

Only operands seen a second time at the same version are widened into the cache (a weight is;
an activation read once is not), only those of at least ``MIN_ELEMENTS`` elements, and the
cache holds at most ``TORCHNATIVE_WIDENED_CACHE_MB`` megabytes (default 1024; 0 turns it off):
once full it widens further operands per product without keeping them, and lowering the bound
drops the least recently used copies. An entry goes when its storage does.
"""

from __future__ import annotations

import os
import threading
import weakref

import numpy as np

from .common import arr, as_compute

MIN_ELEMENTS = 1 << 14
_LIMIT = [int(float(os.environ.get("TORCHNATIVE_WIDENED_CACHE_MB", "1024")) * (1 << 20))]


class _Entry:
    __slots__ = ("storage", "data", "writes", "version_ref", "version", "array")

    def __init__(self, storage, t):
        self.storage = weakref.ref(storage)
        self.data = storage._data
        self.writes = storage._tn_writes
        self.version_ref = t._version_ref
        self.version = t._version_ref[0]
        self.array = None  # the widened copy, once the operand is seen again unchanged

    def fresh(self, storage, t) -> bool:
        return (self.storage() is storage and self.data is storage._data
                and self.writes == storage._tn_writes and self.version_ref is t._version_ref
                and self.version == t._version_ref[0])


_entries: dict = {}  # key -> _Entry, least recently used first
_held = [0]          # bytes of widened copies in _entries
_lock = threading.Lock()
stats = {"hits": 0, "widened": 0, "stale": 0, "full": 0, "evicted": 0}


def set_limit(nbytes: int) -> None:
    """The cache's bound in bytes: the least recently used copies beyond it go (0 empties it)."""
    with _lock:
        _LIMIT[0] = int(nbytes)
        _evict_to(_LIMIT[0])


def clear() -> None:
    with _lock:
        _entries.clear()
        _held[0] = 0


def held_bytes() -> int:
    return _held[0]


def _private(storage) -> bool:
    """Bytes only tensors over this storage write: allocated by us, never handed out."""
    if storage._tn_aliased or not storage._resizable:
        return False
    base = storage._data.base
    return base is None or type(base) is np.ndarray


def _drop(key, entry) -> None:
    if _entries.get(key) is entry:
        del _entries[key]
        if entry.array is not None:
            _held[0] -= entry.array.nbytes


def _evict_to(limit: int) -> None:
    while _held[0] > limit and _entries:
        key = next(iter(_entries))
        _drop(key, _entries[key])
        stats["evicted"] += 1


def _forget(key):
    def callback(_ref):
        with _lock:
            entry = _entries.get(key)
            if entry is not None and entry.storage() is None:
                _drop(key, entry)
    return callback


def widened(t, dt) -> np.ndarray:
    """``t``'s values in float32 (``as_compute(t, dt)``), from the cache when they are known
    unchanged. The array returned is read-only: a product reads it, never writes it."""
    a = arr(t)
    if a.size < MIN_ELEMENTS or not _LIMIT[0]:
        return as_compute(t, dt)
    storage = t._storage
    if not _private(storage):
        return as_compute(t, dt)
    key = (id(storage), t._offset, t._size, t._stride, dt)
    with _lock:
        entry = _entries.get(key)
        if entry is not None:
            if entry.fresh(storage, t):
                del _entries[key]
                _entries[key] = entry  # most recently used
                if entry.array is not None:
                    stats["hits"] += 1
                    return entry.array
            else:
                stats["stale"] += 1
                _drop(key, entry)
                entry = None
    out = as_compute(t, dt)
    with _lock:
        if entry is None:  # first sighting: remember it, widen into the cache next time
            entry = _Entry(storage, t)
            entry.storage = weakref.ref(storage, _forget(key))
            _entries[key] = entry
            return out
        if _entries.get(key) is entry and entry.array is None and out.base is None:
            if _held[0] + out.nbytes > _LIMIT[0]:
                # full: keep what is held (a decode step reads every weight once, in order, so
                # replacing the oldest would leave nothing that is read again before it goes)
                stats["full"] += 1
                return out
            out.flags.writeable = False
            entry.array = out
            _held[0] += out.nbytes
            stats["widened"] += 1
    return out
