"""``torch._C._dispatch_key_set(tensor)``: the dispatch keys a tensor carries, as upstream
computes them for a dense tensor: its backend, ADInplaceOrView and the backend's autograd key
(every dense tensor has them, whether or not it requires grad), Autocast for the CPU, and Python
with PythonTLSSnapshot for a tensor whose class overrides ``__torch_dispatch__``."""

from __future__ import annotations

from ..core.enums import DispatchKey
from ..ops.dispatch_keys import DispatchKeySet
from . import python_dispatch

_BACKEND = {"cpu": ("CPU", "AutogradCPU", "AutocastCPU"), "meta": ("Meta", "AutogradMeta", None)}


def dispatch_key_set(tensor) -> DispatchKeySet:
    device = tensor.device.type
    if device not in _BACKEND:
        raise RuntimeError(f"_dispatch_key_set: no dispatch keys for a {device} tensor here")
    backend, autograd, autocast = _BACKEND[device]
    keys = DispatchKeySet(DispatchKey[backend]) | DispatchKey.ADInplaceOrView | \
        DispatchKey[autograd]
    if autocast is not None:
        keys = keys | DispatchKey[autocast]
    if python_dispatch._overrides(tensor):
        keys = keys | DispatchKey.Python | DispatchKey.PythonTLSSnapshot
    return keys


TORCH_C = {"torch._C._dispatch_key_set": dispatch_key_set}
