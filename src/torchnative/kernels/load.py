"""Loading kernels by repository id: ``get_kernel``, ``has_kernel``, ``load_kernel``,
``get_locked_kernel`` read the active bundle only; ``get_local_kernel`` reads a repository
directory the caller names. None of them touches the network."""

from __future__ import annotations

import importlib.metadata
import inspect
from pathlib import Path
from types import ModuleType

from .bundle import Bundle, active_bundle
from .errors import KernelNotInBundleError, KernelVariantError
from .loader import import_variant
from .lockfile import locked, parse_locks, read_locks
from .metadata import Metadata
from .variants import Target, resolve, trace_text


def _version_xor_revision(revision, version):
    if revision is not None and version is not None:
        raise ValueError("Only one of `revision` or `version` must be specified.")
    if revision is None and version is None:
        raise ValueError("A kernel version or revision must be specified. Use `version=<major>` "
                         "for a stable kernel API version or `revision=<branch/tag/commit>`.")


def _bundle() -> Bundle:
    b = active_bundle()
    if b is None:
        raise KernelNotInBundleError(
            "no kernel bundle is installed (set TORCHNATIVE_KERNELS_BUNDLE or build one with "
            "`python -m torchnative.kernels bundle`); kernels are never downloaded at run time")
    return b


def _from_bundle(bundle: Bundle, entry: dict, backend: str | None) -> ModuleType:
    path = bundle.variant_path(entry, Target.current(backend))
    return import_variant(path, Metadata.read(path / "metadata.json"))


def get_kernel(repo_id: str, *, revision: str | None = None, version: int | None = None,
               backend: str | None = None, user_agent=None, trust_remote_code=False,
               check_arch: bool = True) -> ModuleType:
    """The kernel ``repo_id`` at ``version``/``revision``, from the active bundle."""
    _version_xor_revision(revision, version)
    bundle = _bundle()
    return _from_bundle(bundle, bundle.find(repo_id, version=version, revision=revision), backend)


def has_kernel(repo_id: str, *, revision: str | None = None, version: int | None = None,
               backend: str | None = None, trust_remote_code=False, check_arch: bool = True) -> bool:
    """Whether the active bundle holds a build of ``repo_id`` that fits this system."""
    _version_xor_revision(revision, version)
    bundle = active_bundle()
    if bundle is None:
        return False
    try:
        bundle.variant_path(bundle.find(repo_id, version=version, revision=revision),
                            Target.current(backend))
    except (KernelNotInBundleError, KernelVariantError):
        return False
    return True


def resolve_local_variant(repo_path: Path, backend: str | None = None) -> Path:
    """The best variant directory of a local repository: under ``repo_path``, under
    ``repo_path/build``, or ``repo_path`` itself when it holds a ``metadata.json``."""
    repo_path = Path(repo_path)
    target = Target.current(backend)
    trace = []
    for base in (repo_path, repo_path / "build"):
        try:
            names = [d.name for d in base.iterdir() if d.is_dir()]
        except OSError:
            continue
        fitting, trace = resolve(names, target)
        if fitting:
            return base / fitting[0]
    if (repo_path / "metadata.json").exists():
        return repo_path
    raise FileNotFoundError(f"Cannot find a build variant for this system in {repo_path}:\n\n"
                            f"{trace_text(trace)}")


def get_local_kernel(repo_path: Path, *, backend: str | None = None, trust_remote_code=False,
                     user_agent=None) -> ModuleType:
    """Import a kernel from a local repository in the Hugging Face layout."""
    variant = resolve_local_variant(Path(repo_path), backend)
    return import_variant(variant, Metadata.read(variant / "metadata.json"))


def _caller_locks(repo_id: str):
    frame = inspect.currentframe()
    here = frame.f_globals.get("__name__")
    while frame is not None and frame.f_globals.get("__name__") == here:
        frame = frame.f_back
    package = (frame.f_globals.get("__name__") or "").split(".")[0] if frame else ""
    for dist in importlib.metadata.packages_distributions().get(package, []):
        text = importlib.metadata.distribution(dist).read_text("kernels.lock")
        if text is not None:
            return parse_locks(text)
    raise ValueError("Could not find a `kernels.lock` file in the caller's package metadata.")


def load_kernel(repo_id: str, *, lockfile: Path | None, backend: str | None = None) -> ModuleType:
    """The kernel locked in ``lockfile`` (or the caller's package metadata), from the bundle."""
    entries = read_locks(lockfile) if lockfile is not None else _caller_locks(repo_id)
    lock = locked(entries, repo_id)
    bundle = _bundle()
    return _from_bundle(bundle, bundle.find(repo_id, revision=lock.commit), backend)


def get_locked_kernel(repo_id: str, *, lockfile: Path | None, trust_remote_code=False,
                      user_agent=None) -> ModuleType:
    return load_kernel(repo_id, lockfile=lockfile)
