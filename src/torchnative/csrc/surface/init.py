"""The init calls upstream's torch/__init__.py and friends make while importing.

``_initExtension`` injects what C++ puts on the ``torch`` module: dtypes under all their names,
layouts, memory formats, qschemes, and the legacy tensor types (``torch.FloatTensor`` ...).
The ``*_init`` functions report whether a subsystem's bindings are installed; ours are (the
subsystem's names exist, implemented or refusing), so they return True. Subsystems we do not
build (distributed, rpc) have no init function at all, so upstream's ``hasattr`` sees them absent.
"""

from __future__ import annotations

import sys

from ..core import dtypes, layouts
from . import dlpack
from ..core.refuse import TorchnativeNotImplementedError
from ..core.tensor import LEGACY_DTYPES, legacy_type_name
from ..core.typename import TP_NAMES

# (class name, dtype name) of the legacy tensor types, in upstream's order
LEGACY_TYPES = [(legacy_type_name(dtypes.BY_NAME[n])[len("torch."):], n) for n in LEGACY_DTYPES]
SPARSE_TYPES = [t for t in LEGACY_TYPES if t[1] != "bool"]


class tensortype(type):
    """Metaclass of the legacy tensor types: ``isinstance(t, torch.FloatTensor)`` checks dtype,
    layout and device; calling one builds a tensor of that type."""

    @property
    def dtype(cls):
        return cls._tn_dtype

    @property
    def layout(cls):
        return layouts.LAYOUTS["sparse_coo" if cls._tn_sparse else "strided"]

    @property
    def is_cuda(cls):
        return cls._tn_device == "cuda"

    @property
    def is_sparse(cls):
        return cls._tn_sparse

    @property
    def is_sparse_csr(cls):
        return False

    @property
    def is_xpu(cls):
        return False

    def __instancecheck__(cls, obj):
        import torch

        if not isinstance(obj, torch.Tensor):
            return False
        return (obj.dtype == cls._tn_dtype and obj.device.type == cls._tn_device
                and obj.is_sparse == cls._tn_sparse)

    def __call__(cls, *args, **kwargs):
        if cls._tn_device == "cuda":  # as upstream's build without CUDA
            raise TypeError(f"type {cls.__module__}.{cls.__name__} not available. Torch not "
                            "compiled with CUDA enabled.")
        if cls._tn_sparse:
            raise TorchnativeNotImplementedError(
                f"{cls.__module__}.{cls.__name__}", "sparse tensors do not exist in torchnative")
        from ..python.legacy_ctor import CTOR, legacy_new

        import torch

        return legacy_new(torch.Tensor, args, kwargs, dtype=cls._tn_dtype, kind=CTOR)


tensortype.__module__ = "torch"


def _legacy_type(module: str, name: str, dtype_name: str, device: str, sparse: bool):
    cls = tensortype(name, (), {"__module__": module})
    TP_NAMES[cls] = f"{module}.{name}"  # (upstream's are C types, named so)
    cls._tn_dtype = dtypes.BY_NAME[dtype_name]
    cls._tn_device = device
    cls._tn_sparse = sparse
    return cls


def legacy_tensor_types() -> list:
    out = []
    for device, prefix in (("cpu", "torch"), ("cuda", "torch.cuda")):
        for name, dt in LEGACY_TYPES:
            out.append(_legacy_type(prefix, name, dt, device, False))
        for name, dt in SPARSE_TYPES:
            out.append(_legacy_type(prefix + ".sparse", name, dt, device, True))
    return out


# Functionalization bindings upstream's _initExtension puts on torch. torch.func.functionalize's
# wrappers (functorch/functionalize.py) answer the predicates, sync and unwrap; the rest (the
# Python FunctionalTensor's and AOTAutograd's entries) refuse by name.
_FUNCTIONAL_PREDICATES = ("_is_functional_tensor_base",)
_FUNCTIONAL_REFUSED = (
    "_functionalize_are_all_mutations_under_no_grad_or_inference_mode",
    "_functionalize_was_inductor_storage_resized", "_functionalize_inductor_storage_resized_counter",
    "_functionalize_are_all_mutations_hidden_from_autograd",
    "_functionalize_mark_mutation_hidden_from_autograd", "_functionalize_is_symbolic",
    "_functionalize_commit_update", "_functionalize_replace",
    "_functionalize_is_multi_output_view", "_functionalize_enable_reapply_views",
    "_functionalize_has_metadata_mutation",
    "_functionalize_mutation_counter", "_functionalize_get_storage_size",
    "_functionalize_mark_storage_changed", "_functionalize_was_storage_changed",
    "_functionalize_storage_changed_counter", "_functionalize_unsafe_set",
    "_to_functional_tensor", "_freeze_functional_tensor",
    "_enable_functionalization", "_disable_functionalization", "_mirror_autograd_meta_to",
    "_segment_reduce")


def functional_tensor_functions() -> dict:
    from ..functorch import functionalize as fz
    from .functorch import is_functional

    def from_functional(t):
        st = fz.state(t)
        return t if st is None else st.value

    def has_data_mutation(t) -> bool:
        if fz.state(t) is None:
            raise RuntimeError("_functionalize_has_data_mutation: expected a functional tensor")
        return fz.has_data_mutation(t)

    return {"_is_functional_tensor": is_functional, "_from_functional_tensor": from_functional,
            "_sync": fz.sync, "_functionalize_sync": fz.sync,
            "_functionalize_has_data_mutation": has_data_mutation}


def _not_functional(t) -> bool:
    return False


def torch_module_functions() -> dict:
    from ..core.refuse import refusing_function

    out = {n: _not_functional for n in _FUNCTIONAL_PREDICATES}
    out.update({n: refusing_function(f"torch.{n}", "functionalization is not implemented")
                for n in _FUNCTIONAL_REFUSED})
    out["to_dlpack"] = dlpack.to_dlpack
    out.update(functional_tensor_functions())
    return out


def init_extension(shm_manager_path: bytes) -> None:
    torch = sys.modules["torch"]
    for name, dt in dtypes.TORCH_ATTRS.items():
        setattr(torch, name, dt)
    for name, value in layouts.torch_attributes().items():
        setattr(torch, name, value)
    types = legacy_tensor_types()
    torch._tensor_classes.update(types)
    import importlib

    for cls in types:  # each on its module (torch, torch.sparse, torch.cuda, torch.cuda.sparse)
        module = torch if cls.__module__ == "torch" else importlib.import_module(cls.__module__)
        setattr(module, cls.__name__, cls)
    for name, fn in torch_module_functions().items():
        setattr(torch, name, fn)
    _set_default_storage(dtypes.get_default_dtype())


def _set_default_storage(dt) -> None:
    """``torch.Storage`` is the legacy storage class of the default dtype (python_tensor.cpp's
    set_default_storage_type), kept in step by every default-dtype change."""
    torch = sys.modules["torch"]
    name = f"{dt._cpp_name}Storage"
    storage = getattr(torch, name, None)
    if storage is None:
        raise TypeError(f"couldn't find storage object {name}")
    torch.Storage = storage


def set_default_dtype(*args, **kwargs) -> None:
    """``torch._C._set_default_dtype``: the dtype, then ``torch.Storage`` to match."""
    dtypes._set_default_dtype(*args, **kwargs)
    if "torch" in sys.modules and hasattr(sys.modules["torch"], "_tensor_classes"):
        _set_default_storage(args[0])


_STORAGE_NAMES: list = []


def init_names(storage_classes) -> None:
    """Upstream records the classes' qualified names for legacy serialization; so do we."""
    _STORAGE_NAMES[:] = [f"{c.__module__}.{c.__name__}" for c in storage_classes]


def subsystem_ready() -> bool:
    return True


def _prctl_pr_set_pdeathsig(signal: int) -> None:
    """Ask the kernel to send ``signal`` to this process when its parent dies (Linux prctl)."""
    import ctypes
    import platform

    if platform.system() != "Linux":
        return
    PR_SET_PDEATHSIG = 1
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")


def multiprocessing_init() -> bool:
    """Upstream's C++ adds the prctl wrapper to torch.multiprocessing; so do we."""
    mod = sys.modules["torch.multiprocessing"]
    mod._prctl_pr_set_pdeathsig = _prctl_pr_set_pdeathsig
    return True


TORCH_C = {
    "torch._C._initExtension": init_extension,
    "torch._C._set_default_dtype": set_default_dtype,
    "torch._C._init_names": init_names,
    "torch._C._autograd_init": subsystem_ready,
    "torch._C._jit_init": subsystem_ready,
    "torch._C._multiprocessing_init": multiprocessing_init,
}
