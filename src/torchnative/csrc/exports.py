"""What torch._C exports: the implemented names, then refusals for the rest of the surface."""

from __future__ import annotations

import importlib
import sys
import types

from . import surface

# Modules of csrc that implement torch._C names; each has TORCH_C = {qualified name: object}.
IMPLEMENTING = [
    "enums", "dispatch_keys", "torch_function", "python_utils", "dispatcher", "tensor",
    "spellings", "dlpack", "layouts", "device", "size", "generator", "dtypes", "typeinfo", "init", "storage", "manual_bindings", "jit_frontend", "torchbind", "schema",
    "autograd.grad_mode", "autograd.engine", "autograd.node", "autograd.hooks", "autograd.function", "autograd.batched", "kernels.foreach", "build_info", "dynamo", "python_dispatch", "functorch", "runtime_state", "serialization", "return_types",
    "distributed",
]


def implemented() -> dict[str, object]:
    names: dict[str, object] = {}
    for mod in IMPLEMENTING:
        m = importlib.import_module(f"{__package__}.{mod}")
        names.update(m.torch_c_names() if hasattr(m, "torch_c_names") else m.TORCH_C)
    return names


def install(namespace: dict) -> None:
    root = sys.modules[namespace["__name__"]]
    for qual, obj in implemented().items():
        mod = root
        parts = qual.split(".")[2:]
        for i, part in enumerate(parts[:-1]):
            sub = ".".join(["torch._C", *parts[: i + 1]])
            mod = surface._submodule(mod, part, sub, root.__name__)
        setattr(mod, parts[-1], obj)
    from .spellings import install_methods
    from .tensor import TensorBase

    install_methods(TensorBase)
    surface.complete(root)
    namespace["__all__"] = sorted(n for n in namespace if not n.startswith("_"))
