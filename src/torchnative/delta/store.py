"""A delta on storage: one safetensors file, validated in full before anything is written.

The file holds the covered tensors' adapted values (so a new process restores them bit for bit)
and, in its metadata, the lifetime, the user, the names, and a sha256 of each covered tensor's
base: a file made for another model (or another base) is refused, and the model is untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import torch

FORMAT = "torchnative.delta"
VERSION = "1"


class DeltaFileError(ValueError):
    """A delta file that is corrupt, foreign, or for another user or lifetime."""


def fingerprint(t: torch.Tensor) -> str:
    flat = t.detach().cpu().contiguous().reshape(-1)
    raw = flat.view(torch.uint8) if flat.element_size() > 1 else flat
    return hashlib.sha256(raw.numpy().tobytes()).hexdigest()


def model_signature(model) -> str:
    """Names, shapes, dtypes and a strided sample of every state_dict tensor: tells one base
    model from another without hashing all of a large model's bytes."""
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        flat = t.detach().reshape(-1)
        step = max(1, flat.numel() // 256)
        h.update(f"{name}|{tuple(t.shape)}|{t.dtype}|".encode())
        h.update(fingerprint(flat[::step].clone()).encode())
    return h.hexdigest()


def save(delta, path, **extra) -> None:
    from safetensors.torch import save_file

    values = {n: t.contiguous() for n, t in delta._values_above().items()}
    meta = {"format": FORMAT, "version": VERSION, "lifetime": delta.lifetime.name,
            "user": getattr(delta, "user", ""), "names": json.dumps(list(delta.names)),
            "base_sha256": json.dumps({n: fingerprint(delta.base[n]) for n in delta.names}),
            "model": delta.model_signature, "extra": json.dumps(extra)}
    from safetensors import SafetensorError

    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        save_file({n: v.detach().clone() for n, v in values.items()}, str(tmp), metadata=meta)
        os.replace(tmp, path)  # a crash mid-write leaves the previous file, never half of one
    except (OSError, SafetensorError) as e:
        try:
            tmp.unlink(missing_ok=True)  # nothing half-written stays behind
        except OSError:
            pass
        raise DeltaFileError(f"cannot write delta file {path}: {e}") from e


def read(path) -> tuple[dict, dict]:
    from safetensors import SafetensorError
    from safetensors.torch import load

    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise DeltaFileError(f"cannot read delta file {path}: {e}") from e
    try:
        tensors = load(raw)
        meta = _metadata(raw)
    except (SafetensorError, ValueError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DeltaFileError(f"{path} is not a valid delta file (corrupt safetensors: {e})") from e
    if meta.get("format") != FORMAT:
        raise DeltaFileError(f"{path} is not a torchnative delta (format {meta.get('format')!r})")
    if meta.get("version") != VERSION:
        raise DeltaFileError(f"{path}: delta format version {meta.get('version')!r} unsupported")
    return tensors, meta


def _metadata(raw: bytes) -> dict:
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    return header.get("__metadata__", {}) or {}


def load(cls, model, path, *, user: str, parent=None):
    tensors, meta = read(path)
    if meta.get("lifetime") != cls.lifetime.name:
        raise DeltaFileError(f"{path} holds a {meta.get('lifetime')!r} delta, not a "
                             f"{cls.lifetime.name!r} one")
    if meta.get("user", "") != str(user):
        raise DeltaFileError(f"{path} belongs to another user ({meta.get('user')!r}), "
                             f"not {user!r}")
    try:
        names = json.loads(meta["names"])
        shas = json.loads(meta["base_sha256"])
    except (KeyError, json.JSONDecodeError) as e:
        raise DeltaFileError(f"{path}: delta metadata damaged ({e})") from e
    if sorted(names) != sorted(tensors) or sorted(shas) != sorted(names):
        raise DeltaFileError(f"{path}: names in metadata and tensors in the file disagree")
    own = dict(model.named_parameters()) | dict(model.named_buffers())
    for n in names:
        if n not in own:
            raise DeltaFileError(f"{path} is foreign to this model: it has no tensor {n!r}")
        t, v = own[n], tensors[n]
        if t.shape != v.shape or t.dtype != v.dtype:
            raise DeltaFileError(f"{path} is foreign to this model: {n} is {tuple(v.shape)} "
                                 f"{v.dtype} in the file, {tuple(t.shape)} {t.dtype} in the model")
        if fingerprint(t) != shas[n]:
            raise DeltaFileError(f"{path} was made over other base weights ({n} differs)")
    if meta.get("model") != model_signature(model):
        raise DeltaFileError(f"{path} was made over other base weights (the model's differ)")
    # everything checked: now the model may change
    delta = cls(model, names, user=user, parent=parent)
    delta._write(tensors)
    return delta
