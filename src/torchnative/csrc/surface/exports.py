"""What torch._C exports: the implemented names, then refusals for the rest of the surface."""

from __future__ import annotations

import importlib
import sys

from . import refusals

# Modules of torchnative.csrc that implement torch._C names; each has TORCH_C = {qualified name: object}.
IMPLEMENTING = [
    "core.enums", "ops.dispatch_keys", "core.torch_function", "python.python_utils",
    "ops.dispatcher", "core.tensor", "python.spellings", "surface.dlpack", "core.layouts",
    "core.device", "core.size", "core.generator", "core.dtypes", "core.typeinfo", "surface.init",
    "core.storage", "python.manual_bindings", "surface.jit_frontend", "ops.torchbind",
    "ops.schema", "core.grad_mode", "autograd.engine", "autograd.node", "autograd.hooks",
    "autograd.function", "autograd.batched", "kernels.foreach", "surface.build_info",
    "kernels.linalg_common",
    "surface.dynamo", "dispatch.python_dispatch", "surface.functorch", "surface.runtime_state",
    "serialization.archive", "serialization.storage_io", "ops.return_types",
    "distributed", "surface.fx_node", "surface.captured_traceback", "dispatch.python_dispatcher",
    "python.lift_flags", "surface.functionalization_tls", "surface.device_guard",
    "ops.numbers_as_tensors", "surface.storage_access_flags", "ops.schema_info",
    "surface.compiled_autograd",
    "core.conj_neg_bits", "dispatch.tensor_keys", "core.determinism", "autograd.version_counter",
    "autograd.requires_grad",
    "surface.jit_tree_views", "surface.jit_function", "autograd.forward.levels", "surface.jit_fork",
    "functorch.jvp",
    "surface.jit_type_comment", "surface.jit_compilation_unit",
    "surface.cpu_features", "surface.quantized_engines", "surface.fp32_precision",
    "surface.cublas_reductions",
    "serialization.shared_storage", "surface.dataloader_workers",
]


def implemented() -> dict[str, object]:
    names: dict[str, object] = {}
    for mod in IMPLEMENTING:
        m = importlib.import_module(f"torchnative.csrc.{mod}")
        names.update(m.torch_c_names() if hasattr(m, "torch_c_names") else m.TORCH_C)
    return names


def install(namespace: dict) -> None:
    # numpy's BLAS kernels for this CPU, before any product runs
    from ..platform.blas_kernels import choose

    choose()
    # the upper layers install themselves into the lower ones when imported (the door's autograd
    # entry, the kernel loader, the copy kernel structured out= writes with)
    from .. import autograd, kernels  # noqa: F401
    from ..kernels import copy  # noqa: F401

    root = sys.modules[namespace["__name__"]]
    for qual, obj in implemented().items():
        mod = root
        parts = qual.split(".")[2:]
        for i, part in enumerate(parts[:-1]):
            sub = ".".join(["torch._C", *parts[: i + 1]])
            mod = refusals._submodule(mod, part, sub, root.__name__)
        setattr(mod, parts[-1], obj)
    from ..python.spellings import install_methods
    from ..core.tensor import TensorBase

    install_methods(TensorBase)
    refusals.complete(root)
    namespace["__all__"] = sorted(n for n in namespace if not n.startswith("_"))
