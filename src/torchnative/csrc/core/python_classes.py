"""torch's own Python classes (``torch.Tensor``, ``nn.Parameter``, ``torch.UntypedStorage``), once
upstream's Python has defined them.

``_C`` is imported before torch/_tensor.py runs, so the classes our tensors and storages must be
instances of only exist later; each is looked up in ``sys.modules`` until found, then cached
(lists the hot paths read directly).
"""

from __future__ import annotations

import sys

TENSOR: list = []  # [torch.Tensor]
PARAMETER: list = []  # [torch.nn.Parameter]
STORAGE: list = []  # [torch.UntypedStorage]
PLAIN: list = []  # [frozenset((torch.Tensor, nn.Parameter))]


def _find(cache: list, module: str, name: str, default):
    if cache:
        return cache[0]
    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    if cls is None:
        return default
    cache.append(cls)
    return cls


def tensor_class(default=None):
    return _find(TENSOR, "torch._tensor", "Tensor", default)


def parameter_class(default=None):
    return _find(PARAMETER, "torch.nn.parameter", "Parameter", default)


def storage_class(default=None):
    return _find(STORAGE, "torch.storage", "UntypedStorage", default)


def plain_tensor_types() -> frozenset:
    """torch.Tensor and nn.Parameter: the tensor types with neither __torch_function__ nor
    __torch_dispatch__ of their own (empty until both exist)."""
    if PLAIN:
        return PLAIN[0]
    t, p = tensor_class(), parameter_class()
    if t is None or p is None:
        return frozenset()
    PLAIN.append(frozenset((t, p)))
    return PLAIN[0]
