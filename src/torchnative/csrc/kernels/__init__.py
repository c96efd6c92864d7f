"""ATen kernels over numpy. Each module registers its kernels with ``registry.kernel`` on import;
``load_all`` imports them all; importing this package registers it with the kernel table, and the
door calls it once, before it first looks a kernel up."""

from __future__ import annotations

import importlib
import pkgutil

from ..ops.kernel_registry import register_loader

_loaded = False


def load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for info in pkgutil.iter_modules(__path__):
        if info.name != "support":
            importlib.import_module(f"{__name__}.{info.name}")


register_loader(load_all)
