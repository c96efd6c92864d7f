"""``kernels.lock``: the contract's lock file, a JSON list of
``{"dependency": {"repo-id": ..., "version": {"version": N} | {"revision": ...}}, "lock": {"commit": <40 hex>}}``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

_OID = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class LockEntry:
    repo_id: str
    version: int | None
    revision: str | None
    commit: str

    def to_json(self) -> dict:
        v = {"version": self.version} if self.version is not None else {"revision": self.revision}
        return {"dependency": {"repo-id": self.repo_id, "version": v}, "lock": {"commit": self.commit}}


def parse_locks(text: str, where: str = "kernels.lock") -> list[LockEntry]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not JSON: {e}") from e
    if not isinstance(data, list):
        raise ValueError(f"{where}: expected a list of locks")
    out = []
    for item in data:
        try:
            dep, commit = item["dependency"], item["lock"]["commit"]
            repo_id, ver = dep["repo-id"], dep.get("version", {})
        except (KeyError, TypeError) as e:
            raise ValueError(f"{where}: malformed lock entry {item!r}") from e
        if not _OID.match(commit):
            raise ValueError(f"{where}: lock for {repo_id} is not a full git object id: {commit!r}")
        if isinstance(ver, int):
            ver = {"version": ver}
        out.append(LockEntry(repo_id, ver.get("version"), ver.get("revision"), commit))
    return out


def read_locks(path: Path) -> list[LockEntry]:
    return parse_locks(Path(path).read_text(), str(path))


def write_locks(path: Path, entries: list[LockEntry]) -> None:
    Path(path).write_text(json.dumps([e.to_json() for e in entries], indent=2) + "\n")


def locked(entries: list[LockEntry], repo_id: str) -> LockEntry:
    for e in entries:
        if e.repo_id == repo_id:
            return e
    raise ValueError(f"Kernel `{repo_id}` is not locked. Lock it and rebuild the bundle.")
