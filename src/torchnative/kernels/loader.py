"""Import a build variant directory as a module, once per process, as the contract does: the
module is named by the metadata ``id`` and is ``<variant>/__init__.py`` (or
``<variant>/<python name>/__init__.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from .metadata import Metadata

CONTRACT_VERSION = (0, 18, 2)
_loaded: dict[Path, ModuleType] = {}


def check_minver(metadata: Metadata, variant: str) -> None:
    if not metadata.kernels_minver:
        return
    want = tuple(int(p) for p in str(metadata.kernels_minver).split("."))
    if want > CONTRACT_VERSION:
        raise RuntimeError(f"Kernel '{metadata.name}' variant '{variant}' requires kernels>="
                           f"{metadata.kernels_minver}; this contract implements "
                           f"{'.'.join(map(str, CONTRACT_VERSION))}")


def import_variant(variant_path: Path, metadata: Metadata) -> ModuleType:
    variant_path = Path(variant_path).resolve()
    if variant_path in _loaded:
        return _loaded[variant_path]
    if metadata.kernel_depends:
        raise NotImplementedError(f"kernel '{metadata.name}' declares kernel-depends "
                                  f"{metadata.kernel_depends}: dependencies between bundled "
                                  "kernels are not supported")
    check_minver(metadata, variant_path.name)
    file_path = variant_path / "__init__.py"
    if not file_path.exists():
        file_path = variant_path / metadata.python_name / "__init__.py"
    if not file_path.exists():
        raise FileNotFoundError(f"No kernel module found at: `{variant_path}`")
    spec = importlib.util.spec_from_file_location(metadata.id, file_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Cannot load spec for {metadata.python_name} from {file_path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[metadata.id] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(metadata.id, None)
        e.add_note(f"while importing kernel '{metadata.name}', variant '{variant_path.name}'")
        raise
    _loaded[variant_path] = module
    return module
