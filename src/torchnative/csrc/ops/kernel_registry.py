"""The table of torchnative's own kernels: overload name -> Python function.

A kernel takes its arguments in the schema's convention (positional for positional schema
arguments, keywords for keyword-only ones; defaults as in the schema) and returns what the
schema returns. Register with ``@kernel("add.Tensor", ...)``. Kernels for functional ops
are enough: the door derives in-place (``add_``) and ``out=`` variants from them, as upstream's
structured kernels do. ``meta=True`` marks kernels that only compute metadata (views, factories
on a given device) and so also serve meta tensors.

``composite=True`` marks a kernel for a CompositeImplicitAutograd operator written, as upstream
writes those, in terms of other operators called through the door: it runs before Python
dispatch and autograd, so modes and gradients see the operators it is made of.

``fast=True`` marks a direct kernel for a CompositeImplicitAutograd operator: the door uses it
only when neither autograd nor Python dispatch is active, i.e. when nobody could observe the
operators the composite would have run (the hot path of inference).
"""

from __future__ import annotations

from typing import Callable

KERNELS: dict[str, Callable] = {}
META_OK: set[str] = set()
COMPOSITE: dict[str, Callable] = {}
FAST: dict[str, Callable] = {}


def kernel(*names: str, meta: bool = False, composite: bool = False, fast: bool = False):
    def register(fn: Callable) -> Callable:
        for name in names:
            table = COMPOSITE if composite else FAST if fast else KERNELS
            if name in table:
                raise RuntimeError(f"two kernels registered for {name}")
            table[name] = fn
            if meta:
                META_OK.add(name)
        return fn

    return register


# The kernels package (a layer above) registers its loader when imported; the door calls
# ``ensure_loaded`` before it first looks a kernel up, so importing kernels stays lazy.
_LOADERS: list[Callable] = []
_LOADED: list = []


def register_loader(load: Callable) -> None:
    _LOADERS.append(load)


def ensure_loaded() -> None:
    if _LOADED:
        return
    if not _LOADERS:
        raise RuntimeError("no kernels are registered: torchnative.csrc.kernels was not imported")
    _LOADED.append(True)
    for load in _LOADERS:
        load()
