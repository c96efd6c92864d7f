"""Kernel bundles: kernels chosen at build time, shipped with the application, read at run time.

A bundle is a directory::

    bundle.json     format, target, one entry per kernel (repo id, version, locked revision,
                    variant, path, digest of its files, sha256 of its metadata.json), and the
                    layer mapping the bundle registers
    kernels.lock    the contract's lock file for the same kernels
    kernels/<org>--<name>/<variant>/   the selected build variant, copied as it was

``build_bundle`` reads kernel repositories in the Hugging Face on-disk layout (a directory with
``build/<variant>/``, e.g. a checkout or a hub-cache snapshot), picks for each the best variant
for the target and records digests. ``Bundle.open`` is all the run time reads: nothing is
downloaded, and a file that changed since the build or a variant made for another system is
refused by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import BundleError, KernelDigestError, KernelNotInBundleError, KernelVariantError
from .lockfile import LockEntry, write_locks
from .metadata import Metadata, file_sha256, hash_variant, validate_digest
from .variants import Target, parse_variant, rejection, resolve, trace_text

FORMAT = "torchnative-kernel-bundle/1"
BUNDLE_ENV = "TORCHNATIVE_KERNELS_BUNDLE"


@dataclass(frozen=True)
class KernelSource:
    """A kernel repository to bundle: its hub id, where it is on disk, its major version."""
    repo_id: str
    path: Path
    version: int | None = 1


def _commit_of(path: Path, digest: dict, meta_sha: str) -> str:
    # A hub-cache snapshot directory is named by its commit; anything else is addressed by its
    # content (sha1 over the digest), so the lock still names exactly these files.
    for p in (path, *path.parents):
        if p.parent.name == "snapshots" and re.fullmatch(r"[0-9a-f]{40}", p.name):
            return p.name
    blob = json.dumps({"digest": digest, "metadata": meta_sha}, sort_keys=True).encode()
    return hashlib.sha1(blob).hexdigest()


def _variants_dir(repo: Path) -> Path:
    if (repo / "build").is_dir():
        return repo / "build"
    raise BundleError(f"{repo} is not a kernel repository in the Hugging Face layout "
                      "(no build/ directory)")


def build_bundle(sources: list[KernelSource], target: Target, out: Path,
                 mapping: dict | None = None) -> dict:
    """Write a bundle for ``target`` into ``out`` (replaced if it exists); return its manifest."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    (out / "kernels").mkdir(parents=True)
    entries, locks = [], []
    for src in sources:
        build = _variants_dir(Path(src.path))
        names = [d.name for d in build.iterdir() if d.is_dir()]
        fitting, trace = resolve(names, target)
        if not fitting:
            raise BundleError(f"no build variant of {src.repo_id} fits target {target.name}:\n"
                              f"{trace_text(trace)}")
        variant = fitting[0]
        vdir = build / variant
        meta = Metadata.read(vdir / "metadata.json")
        if meta.digest:
            validate_digest(meta.digest, vdir, f"{src.repo_id} ({variant})")
        rel = Path("kernels") / src.repo_id.replace("/", "--") / variant
        shutil.copytree(vdir, out / rel, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        digest = hash_variant(out / rel)
        meta_sha = file_sha256(out / rel / "metadata.json")
        commit = _commit_of(Path(src.path).resolve(), digest, meta_sha)
        entries.append({"repo-id": src.repo_id, "version": src.version, "revision": commit,
                        "variant": variant, "path": rel.as_posix(), "name": meta.name,
                        "digest": digest, "metadata-sha256": meta_sha})
        locks.append(LockEntry(src.repo_id, src.version, None if src.version else commit, commit))
    manifest = {"format": FORMAT, "target": target.name, "kernels": entries,
                "mapping": mapping or {}}
    (out / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n")
    write_locks(out / "kernels.lock", locks)
    return manifest


class Bundle:
    """A bundle opened for reading. Verification happens when a kernel is taken from it."""

    def __init__(self, root: Path, manifest: dict):
        self.root, self.manifest = Path(root), manifest
        self._verified: set[str] = set()

    @staticmethod
    def open(root: Path) -> "Bundle":
        root = Path(root)
        try:
            manifest = json.loads((root / "bundle.json").read_text())
        except FileNotFoundError:
            raise BundleError(f"not a kernel bundle: {root / 'bundle.json'} does not exist") from None
        except json.JSONDecodeError as e:
            raise BundleError(f"{root / 'bundle.json'} is not JSON: {e}") from e
        if manifest.get("format") != FORMAT:
            raise BundleError(f"{root}: unknown bundle format {manifest.get('format')!r} "
                              f"(expected {FORMAT!r})")
        return Bundle(root, manifest)

    @property
    def mapping(self) -> dict:
        return self.manifest.get("mapping", {})

    def entries(self) -> list[dict]:
        return list(self.manifest.get("kernels", []))

    def find(self, repo_id: str, *, version=None, revision=None) -> dict:
        same = [e for e in self.entries() if e["repo-id"] == repo_id]
        if not same:
            raise KernelNotInBundleError(
                f"kernel `{repo_id}` is not in the bundle {self.root} (bundled: "
                f"{', '.join(e['repo-id'] for e in self.entries()) or 'none'}); kernels are "
                "selected when the bundle is built and never downloaded at run time")
        for e in same:
            if version is not None and e.get("version") == version:
                return e
            if revision is not None and revision in (e["revision"], f"v{e.get('version')}"):
                return e
        have = ", ".join(f"version {e.get('version')} (revision {e['revision']})" for e in same)
        want = f"version {version}" if version is not None else f"revision {revision}"
        raise KernelNotInBundleError(f"kernel `{repo_id}` {want} is not in the bundle {self.root}; "
                                     f"it holds {have}")

    def variant_path(self, entry: dict, target: Target | None = None) -> Path:
        """The verified directory of a bundled kernel, for the running system."""
        what = f"bundled kernel `{entry['repo-id']}` ({entry['variant']})"
        reason = rejection(parse_variant(entry["variant"]), target or Target.current())
        if reason is not None:
            raise KernelVariantError(f"{what} was built for another system: {reason}; rebuild "
                                     f"the bundle for this target")
        path = self.root / entry["path"]
        if entry["path"] not in self._verified:
            if not (path / "metadata.json").is_file():
                raise KernelDigestError(f"{what}: metadata.json is missing from the bundle")
            if file_sha256(path / "metadata.json") != entry["metadata-sha256"]:
                raise KernelDigestError(f"{what}: metadata.json does not match the sha256 "
                                        "recorded when the bundle was built")
            validate_digest(entry["digest"], path, what)
            self._verified.add(entry["path"])
        return path


def default_bundle_path() -> Path:
    return Path(sys.prefix) / "share" / "torchnative-kernels" / "bundle"


_active: dict = {}


def active_bundle() -> Bundle | None:
    """The bundle named by ``TORCHNATIVE_KERNELS_BUNDLE``, else the one installed with the
    environment, else None. A named bundle that cannot be opened is an error."""
    named = os.environ.get(BUNDLE_ENV)
    root = Path(named) if named else default_bundle_path()
    key = str(root)
    if key not in _active:
        if not named and not (root / "bundle.json").exists():
            return None
        _active[key] = Bundle.open(root)
    return _active[key]
