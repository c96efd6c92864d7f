"""``metadata.json`` of a build variant and the per-file digests the contract records in it.

A digest maps each file of a variant (relative path, ``/``-separated; ``metadata.json``,
``metadata.json.sigstore``, ``__pycache__`` and ``.pyc`` left out) to the base64 of its
sha256 (or sha512).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import KernelDigestError

_NAME = re.compile(r"^[a-z][-a-z0-9]*[a-z0-9]$")


@dataclass(frozen=True)
class Metadata:
    name: str
    id: str
    version: int | None
    license: str | None
    backend: str
    python_depends: list = field(default_factory=list)
    kernel_depends: list = field(default_factory=list)
    kernels_minver: str | None = None
    digest: dict | None = None
    raw: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def python_name(self) -> str:
        return self.name.replace("-", "_")

    @staticmethod
    def from_dict(d: dict, where: str = "metadata.json") -> "Metadata":
        for key in ("name", "id", "backend"):
            if key not in d:
                raise ValueError(f"{where}: missing field `{key}`")
        if not isinstance(d["name"], str) or not _NAME.match(d["name"]):
            raise ValueError(f"{where}: invalid kernel name {d['name']!r} "
                             "(must match ^[a-z][-a-z0-9]*[a-z0-9]$)")
        backend = d["backend"]
        if not isinstance(backend, dict) or "type" not in backend:
            raise ValueError(f"{where}: `backend` must be an object with a `type`")
        return Metadata(name=d["name"], id=d["id"], version=d.get("version"),
                        license=d.get("license"), backend=str(backend["type"]).lower(),
                        python_depends=list(d.get("python-depends", [])),
                        kernel_depends=list(d.get("kernel-depends", [])),
                        kernels_minver=d.get("kernels-minver"), digest=d.get("digest"), raw=d)

    @staticmethod
    def read(path: Path) -> "Metadata":
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"cannot read kernel metadata {path}: {e}") from e
        return Metadata.from_dict(data, str(path))


def hash_variant(variant_path: Path, algorithm: str = "sha256") -> dict:
    """The contract's digest of a variant directory: {"algorithm", "files": {path: b64}}."""
    variant_path = Path(variant_path)
    files = {}
    for root, dirs, names in os.walk(variant_path):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for n in names:
            p = Path(root) / n
            rel = p.relative_to(variant_path).as_posix()
            if rel in ("metadata.json", "metadata.json.sigstore") or n.endswith(".pyc"):
                continue
            h = hashlib.new(algorithm, p.read_bytes()).digest()
            files[rel] = base64.b64encode(h).decode()
    return {"algorithm": algorithm, "files": dict(sorted(files.items()))}


def validate_digest(expected: dict, variant_path: Path, what: str) -> None:
    """Raise ``KernelDigestError`` listing every file that is missing, unknown or changed."""
    algorithm = str(expected.get("algorithm", "sha256")).lower()
    if algorithm not in ("sha256", "sha512"):
        raise KernelDigestError(f"{what}: unknown digest algorithm {algorithm!r}")
    got = hash_variant(variant_path, algorithm)["files"]
    want = expected.get("files", {})
    problems = [f"Missing file: {p}" for p in want if p not in got]
    problems += [f"Unknown file: {p}" for p in got if p not in want]
    problems += [f"File hash mismatch for {p}: expected: {h}, got: {got[p]}"
                 for p, h in want.items() if p in got and got[p] != h]
    if problems:
        raise KernelDigestError(f"{what} does not match the expected digest:\n" + "\n".join(problems))


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
