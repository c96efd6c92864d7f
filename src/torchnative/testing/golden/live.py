"""Samples regenerated in each worker instead of carried between interpreters.

A sample the codec cannot carry (a lambda, a module, an options object among its arguments) and
every sample of an entry whose only callables are OpInfo's own lambdas are not stored: each side
runs upstream's OpInfo sample generator under the same seed and takes the sample at the same index.
Upstream stores a digest of the inputs it generated; ours recomputes it over its own and a sample
whose digest differs is reported as such, never judged. Runs in either worker (numpy and the
interpreter's own torch only).
"""

from __future__ import annotations

import hashlib
import zlib

import numpy as np

from . import codec

OPINFO = "opinfo:"  # spelling prefix: the OpInfo entry's own callable, e.g. "opinfo:op"


def seed_of(base: int, key: str, dtype: str) -> int:
    """Generator seed of one entry and dtype (error inputs use dtype "error_inputs")."""
    return base + zlib.crc32(f"{key}|{dtype}".encode()) % (2 ** 31)


def generate(op, dtype: str, seed: int, torch) -> list:
    """OpInfo's samples of ``op`` for ``dtype`` (or its error inputs), as generated under ``seed``."""
    torch.manual_seed(seed)
    if dtype == "error_inputs":
        return [e.sample_input for e in op.error_inputs("cpu")]
    return list(op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=False))


def error_types(op, seed: int, torch) -> list[str]:
    torch.manual_seed(seed)
    return [e.error_type.__name__ for e in op.error_inputs("cpu")]


def parts(sample) -> tuple[list, dict]:
    return [sample.input, *sample.args], dict(sample.kwargs)


def digest(sample, torch) -> str:
    """sha256 of everything a call sees: tensors' dtype, shape, strides, offset and storage bits;
    scalars by value; other objects by type and, where it names no address, their repr."""
    h = hashlib.sha256()
    args, kwargs = parts(sample)
    _feed(h, args, torch)
    _feed(h, sorted(kwargs.items()), torch)
    return h.hexdigest()[:32]


def _feed(h, v, torch):
    if isinstance(v, torch.Tensor):
        t = v.detach()
        if t.layout != torch.strided or t.is_quantized:
            h.update(f"T<{t.layout},{t.dtype},{tuple(t.shape)}>".encode())
            return
        if t.is_conj() or t.is_neg():
            t = t.resolve_conj().resolve_neg()
        h.update(f"T<{codec.dtype_name(t.dtype)},{tuple(t.shape)},{t.stride()},{t.storage_offset()},"
                 f"{t.device.type},{v.requires_grad}>".encode())
        if t.device.type == "cpu":
            h.update(np.ascontiguousarray(codec.tensor_to_numpy(_storage_prefix(t, torch), torch)).tobytes())
    elif isinstance(v, (list, tuple)):
        h.update(f"{type(v).__name__}[{len(v)}](".encode())
        for x in v:
            _feed(h, x, torch)
        h.update(b")")
    elif isinstance(v, dict):
        _feed(h, sorted(v.items(), key=lambda kv: repr(kv[0])), torch)
    elif v is None or isinstance(v, (bool, int, float, complex, str)):
        h.update(f"{type(v).__name__}:{v!r};".encode())
    else:
        text = repr(v)
        shown = text if " at 0x" not in text else getattr(v, "__qualname__", type(v).__qualname__)
        h.update(f"{type(v).__module__}.{type(v).__qualname__}:{shown};".encode())


def _storage_prefix(t, torch):
    n = 0 if t.numel() == 0 else t.storage_offset() + 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    return torch.as_strided(t, (n,), (1,), 0)


def fresh(value, torch, cast: dict | None = None, keep: list | None = None):
    """A copy of a live argument tree for one call: tensors get their own storage with the same
    strides and offset (in-place spellings must not see an earlier call's writes); ``cast`` widens
    or narrows floating tensors as codec.decode does; other objects are passed as they are."""
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.layout == torch.strided and not t.is_quantized:
            if t.is_conj() or t.is_neg():
                t = t.resolve_conj().resolve_neg()
            name = codec.dtype_name(t.dtype)
            base = _storage_prefix(t, torch).clone()
            if cast and name in cast:
                base = base.to(getattr(torch, cast[name]))
            t = base.as_strided(tuple(t.shape), t.stride(), t.storage_offset())
        else:
            t = t.clone()
        if keep is not None:
            keep.append(t)
        return t
    if isinstance(value, list):
        return [fresh(x, torch, cast, keep) for x in value]
    if type(value) is tuple:
        return tuple(fresh(x, torch, cast, keep) for x in value)
    if isinstance(value, dict):
        return {k: fresh(x, torch, cast, keep) for k, x in value.items()}
    return value


class Regenerator:
    """Samples of the entries in one worker, regenerated on demand and kept per (key, dtype)."""

    _db: dict | BaseException | None = None  # per worker: OpInfo's database, or why it failed to import

    def __init__(self, torch):
        self.torch, self._lists = torch, {}

    def op(self, key: str):
        cls = type(self)
        if cls._db is None:
            try:
                from torch.testing._internal.common_methods_invocations import op_db
                cls._db = {(o.name + (f".{o.variant_test_name}" if o.variant_test_name else "")): o for o in op_db}
            except Exception as exc:  # kept: a failed import is not cached by Python, and costs seconds
                cls._db = exc
        if isinstance(cls._db, BaseException):
            raise cls._db
        return cls._db[key]

    def sample(self, key: str, dtype: str, seed: int, index: int):
        """The live sample, or raises what generating it raised."""
        lst = self._lists.get((key, dtype, seed))
        if lst is None:
            self._lists.clear()  # one list at a time: some hold hundreds of MB
            lst = self._lists[(key, dtype, seed)] = generate(self.op(key), dtype, seed, self.torch)
        return lst[index]

    def callable(self, key: str, spelling: str):
        return getattr(self.op(key), spelling[len(OPINFO):])
