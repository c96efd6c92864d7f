"""The ATen operator table, generated from upstream's native_functions.yaml by torchgen.

torchgen (vendored, unmodified) expands the yaml into 3,101 overloads with their schemas, tags,
variants and per-dispatch-key kernels. We keep a compact record per overload and cache it on disk
keyed by the yaml's hash, so a warm ``import torch`` reads a pickle instead of re-running torchgen.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

CACHE_VERSION = 6


@dataclass(frozen=True, slots=True)
class NativeFunction:
    name: str  # "add"
    overload: str  # "Tensor" ("" for the default overload)
    schema: str  # "add.Tensor(Tensor self, ...) -> Tensor" (no namespace)
    variants: frozenset[str]  # {"function", "method"}
    python_module: str | None  # None, "nn", "fft", "linalg", "special", "sparse", "nested"
    tags: frozenset[str]
    dispatch: frozenset[str]  # dispatch keys with a kernel in upstream's build
    manual_cpp_binding: bool
    category_override: str | None
    functional: str | None  # for an inplace/out overload: its functional sibling ("add.Tensor")
    kind: str  # "functional", "inplace", "out", "mutable" or "scratch"

    @property
    def qualname(self) -> str:
        return f"aten::{self.name}"

    def __reduce__(self):
        return _rebuilt(self)


def _rebuilt(obj):
    """A frozen slots dataclass pickled as its constructor call: unpickling the tables runs
    ``__init__`` instead of the generic dataclass ``__setstate__`` (several times slower)."""
    return type(obj), tuple(getattr(obj, f) for f in obj.__slots__)


def _torchgen_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("torchgen (part of the vendored torch tree) is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "packaged"


def yaml_paths() -> tuple[Path, Path, Path]:
    base = _torchgen_dir()
    return (base / "ATen/native/native_functions.yaml", base / "ATen/native/tags.yaml",
            base / "autograd/deprecated.yaml")


def cached_generated(name: str, generate):
    """``generate()``'s result, pickled on disk under a key of the upstream yaml files' hash.

    The key also names this module: a pickle refers to its classes by module path, so a cache
    written by a tree with another package layout must not be read."""
    raw = b"".join(p.read_bytes() for p in yaml_paths()) + f"{name}:{CACHE_VERSION}:{__name__}".encode()
    key = hashlib.sha256(raw).hexdigest()[:16]
    root = Path(os.environ.get("TORCHNATIVE_CACHE", Path.home() / ".cache" / "torchnative"))
    cache = root / f"{name}-{key}.pkl"
    try:
        with open(cache, "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        pass
    value = generate()
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, cache)
    except OSError:
        pass  # a read-only home only costs the regeneration next time
    return value


def _generate(yaml_path: Path, tags_path: Path) -> list[NativeFunction]:
    from torchgen.gen import get_grouped_native_functions, parse_native_yaml
    from torchgen.model import NativeFunctionsGroup

    parsed = parse_native_yaml(str(yaml_path), str(tags_path))
    indices = parsed.backend_indices
    by_name = {f.func.name: f for f in parsed.native_functions}
    sibling = {}
    for grp in get_grouped_native_functions(parsed.native_functions):
        if isinstance(grp, NativeFunctionsGroup):
            for member in (grp.inplace, grp.out, grp.mutable):
                if member is not None:
                    sibling[member.func.name] = str(grp.functional.func.name)
    out = []
    # Equal sets shared, so the pickle (which keeps shared objects shared) loads a few hundred
    # sets instead of three per overload: fewer objects for every full garbage collection.
    shared: dict[frozenset, frozenset] = {}

    def one(items) -> frozenset:
        s = frozenset(items)
        return shared.setdefault(s, s)

    for f in parsed.native_functions:
        keys = {str(k) for k, idx in indices.items() if idx.has_kernel(f)}
        if f.structured_delegate is not None:
            delegate = by_name[f.structured_delegate]
            keys |= {str(k) for k, idx in indices.items() if idx.has_kernel(delegate)}
            keys.add("Meta")
        if f.structured:
            keys.add("Meta")
        if f.has_composite_implicit_autograd_kernel:
            keys.add("CompositeImplicitAutograd")
        if f.has_composite_explicit_autograd_kernel:
            keys.add("CompositeExplicitAutograd")
        out.append(NativeFunction(
            name=str(f.func.name.name),
            overload=f.func.name.overload_name,
            schema=str(f.func),
            variants=one(v.name for v in f.variants),
            python_module=f.python_module,
            tags=one(f.tags),
            dispatch=one(keys),
            manual_cpp_binding=f.manual_cpp_binding,
            category_override=f.category_override,
            functional=sibling.get(f.func.name),
            kind=f.func.kind().name,
        ))
    return out


@functools.cache
def native_functions() -> tuple[NativeFunction, ...]:
    return cached_generated("native_functions", lambda: tuple(_generate(*yaml_paths()[:2])))


@functools.cache
def by_qualname() -> dict[str, dict[str, NativeFunction]]:
    """``{"aten::add": {"Tensor": nf, "out": nf, ...}}``."""
    out: dict[str, dict[str, NativeFunction]] = {}
    for nf in native_functions():
        out.setdefault(nf.qualname, {})[nf.overload] = nf
    return out
