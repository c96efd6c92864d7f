"""ATen kernels over numpy. Each module registers its kernels with ``registry.kernel`` on import;
``load_all`` imports them all (the door calls it once, lazily)."""

from __future__ import annotations

import importlib
import pkgutil

_loaded = False


def load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for info in pkgutil.iter_modules(__path__):
        if info.name != "support":
            importlib.import_module(f"{__name__}.{info.name}")
