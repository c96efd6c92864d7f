"""Global and thread-local switches upstream keeps in C++ (c10/ATen globals), and the small
queries upstream Python makes about a tensor's dispatch state.

Autocast's switches are here; its state and its kernel are dispatch/autocast.py's.
"""

from __future__ import annotations

import threading

from ..core.device import DEVICE_TYPES, device as _device
from ..core.tensor import TensorBase
from ..ops.dispatch_keys import DispatchKeySet, FUNCTIONALITIES, SPLIT, BACKENDS
from ..ops.dispatch_keys import TLS as _KEYS
from ..core.enums import DispatchKey, ENUMS
from ..core.refuse import TorchnativeNotImplementedError
from ..core.dtypes import dtype as _dtype
from ..core.typename import typename
from ..dispatch import autocast as _autocast
from ..platform.torch_warn import torch_warn, torch_warn_once

_globals = {"warn_always": False, "mkldnn": True}
# switches whose state another module keeps (surface/fp32_precision.py: the float32 precisions)
_ELSEWHERE = ("cublas_allow_tf32", "cudnn_allow_tf32", "float32_matmul_precision")


class _TLS(threading.local):
    def __init__(self):
        self.stash: dict = {}


TLS = _TLS()


def _getter(key):
    return lambda: _globals[key]


def set_warn_always(flag: bool) -> None:
    _globals["warn_always"] = bool(flag)


def set_mkldnn_enabled(flag: bool) -> None:
    _globals["mkldnn"] = bool(flag)


# --- autocast (the state and the kernel live in dispatch/autocast.py) --------------------------

_PLAIN_TYPES = frozenset(DEVICE_TYPES)


def _device_type(device_type: str, fn: str) -> str:
    # a bare type name is its own type; "cpu:0" or a bad name is parsed (kernels ask
    # `is_autocast_enabled("cpu")` on every call: no device object for that)
    if device_type.__class__ is str and device_type in _PLAIN_TYPES:
        return device_type
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' (position 1) must be str, not "
                        f"{typename(device_type)}")
    return _device(device_type).type


def _autocast_type(device_type: str, fn: str) -> str:
    device_type = _device_type(device_type, fn)
    if device_type not in _autocast.DEVICE_TYPES:
        raise RuntimeError(
            "unknown device type for autocast in get_autocast_dispatch_key_from_device_type")
    return device_type


def is_autocast_available(device_type: str) -> bool:
    return device_type in _autocast.DEVICE_TYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    if device_type is None:
        _deprecated("torch.is_autocast_enabled()", "torch.is_autocast_enabled('cuda')")
        device_type = "cuda"
    return _autocast.is_enabled(_autocast_type(device_type, "is_autocast_enabled"))


def set_autocast_enabled(*args) -> None:
    if len(args) == 1:
        _deprecated("torch.set_autocast_enabled(enabled)",
                    "torch.set_autocast_enabled('cuda', enabled)")
        args = ("cuda", args[0])
    device_type, enabled = args
    _autocast.set_enabled(_autocast_type(device_type, "set_autocast_enabled"), enabled)


def get_autocast_dtype(device_type: str):
    return _autocast.get_dtype(_device_type(device_type, "get_autocast_dtype"))


def set_autocast_dtype(device_type: str, dtype) -> None:
    if not isinstance(dtype, _dtype):
        raise TypeError("set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {typename(dtype)}")
    _autocast.set_dtype(_device_type(device_type, "set_autocast_dtype"), dtype)


def is_autocast_cache_enabled() -> bool:
    return _autocast.TLS.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _autocast.TLS.cache_enabled = bool(enabled)


def autocast_increment_nesting() -> int:
    _autocast.TLS.nesting += 1
    return _autocast.TLS.nesting


def autocast_decrement_nesting() -> int:
    _autocast.TLS.nesting -= 1
    return _autocast.TLS.nesting


def _deprecated(old: str, new: str) -> None:
    torch_warn(f"{old} is deprecated. Please use {new} instead.", DeprecationWarning)


def _warned(old: str, new: str, fn):
    def shim(*args):
        _deprecated(old, new)
        return fn(*args)
    return shim


def _device_shorthands() -> dict:
    """The per-device spellings upstream keeps for backward compatibility (each warns)."""
    out = {}
    for short, dev in (("cpu", "cpu"), ("gpu", "cuda"), ("xla", "xla"), ("ipu", "ipu")):
        shims = {f"get_autocast_{short}_dtype": ("()", f"get_autocast_dtype('{dev}')",
                                                 lambda dev=dev: _autocast.get_dtype(dev)),
                 f"set_autocast_{short}_dtype": ("(dtype)", f"set_autocast_dtype('{dev}', dtype)",
                                                 lambda d, dev=dev: _autocast.set_dtype(dev, d))}
        if short != "gpu":
            shims[f"is_autocast_{short}_enabled"] = (
                "()", f"is_autocast_enabled('{dev}')", lambda dev=dev: _autocast.is_enabled(dev))
            shims[f"set_autocast_{short}_enabled"] = (
                "(enabled)", f"set_autocast_enabled('{dev}', enabled)",
                lambda e, dev=dev: _autocast.set_enabled(dev, e))
        for name, (params, new, fn) in shims.items():
            out[f"torch._C.{name}"] = _warned(f"torch.{name}{params}", f"torch.{new}", fn)
    return out


class _DisableAutocast(_autocast.Excluded):
    """torch._C._DisableAutocast: autocast off inside the block."""


# --- dispatch-state queries -------------------------------------------------------------------

def dispatch_keys(t) -> DispatchKeySet:
    backend = "Meta" if t.device.type == "meta" else "CPU"
    ks = DispatchKeySet(backend) | DispatchKeySet("ADInplaceOrView") | \
        DispatchKeySet("Autograd" + backend)
    if backend == "CPU":
        ks = ks | DispatchKeySet("AutocastCPU")
    if t._python_dispatch:
        ks = ks | DispatchKeySet("Python") | DispatchKeySet("PythonTLSSnapshot")
    return ks


def to_functionality_key(key) -> DispatchKey:
    name = key.name if isinstance(key, DispatchKey) else str(key)
    func = SPLIT.get(name, (name, None))[0]
    return DispatchKey[func] if func in DispatchKey.__members__ else DispatchKey.Undefined


def functionality_to_backend_keys(key) -> list:
    name = key.name if isinstance(key, DispatchKey) else str(key)
    if name == "PreDispatch":  # (asked first when a mode is pushed there: refuse before that)
        from ..ops.dispatch_keys import pre_dispatch_refused

        raise pre_dispatch_refused()
    from ..ops.dispatch_keys import PER_BACKEND

    if name not in PER_BACKEND:
        return [key]
    prefix = PER_BACKEND[name]
    return [DispatchKey[prefix + b] for b in BACKENDS if prefix + b in DispatchKey.__members__]


def dispatch_get_backend_keyset_from_autograd(key) -> DispatchKeySet:
    name = key.name if isinstance(key, DispatchKey) else str(key)
    func, backend = SPLIT.get(name, (name, None))
    if func == "AutogradFunctionality" and backend is not None:
        return DispatchKeySet(backend)
    return DispatchKeySet()


def has_storage(t) -> bool:
    return not getattr(t, "_tn_wrapper", False)


def set_meta_in_tls_dispatch_include(flag: bool) -> None:
    # upstream keeps it in the thread's include set, so _PreserveDispatchKeyGuard restores it
    _KEYS.included = _KEYS.included | DispatchKey.Meta if flag else \
        _KEYS.included - DispatchKeySet(DispatchKey.Meta)


def meta_in_tls_dispatch_include() -> bool:
    return _KEYS.included.has(DispatchKey.Meta)


def stash_obj_in_tls(key: str, obj) -> None:
    TLS.stash[key] = obj


def get_obj_in_tls(key: str):
    return TLS.stash[key]


def is_key_in_tls(key: str) -> bool:
    return key in TLS.stash


def remove_obj_from_tls(key: str) -> None:
    TLS.stash.pop(key, None)


def increment_version(t) -> None:
    for x in (t if isinstance(t, (list, tuple)) else (t,)):
        x._bump_version()


def _storage_keys(values, out: list) -> list:
    """(key, nbytes) of every tensor in ``values`` (nested lists and tuples too). The key is the
    storage object's identity; a fresh kernel result has no storage object yet, and none can
    share one it does not have, so the tensor itself stands for it (no storage is made to ask)."""
    for v in values:
        if isinstance(v, TensorBase):
            st = v._st
            if st is not None:
                out.append((id(st), st._nbytes))
            elif v._np is not None:
                out.append((("fresh", id(v)), v._np.nbytes))
        elif isinstance(v, (list, tuple)):
            _storage_keys(v, out)
    return out


def any_output_is_alias_to_input_or_output(args, kwargs, outputs) -> bool:
    """Custom-op contract check: does an output share storage with an input or another output?
    (Storages without bytes are skipped, as upstream's check skips tensors without storage.)"""
    seen = {k for k, n in _storage_keys([*args, *(kwargs or {}).values()], []) if n}
    for key, nbytes in _storage_keys(outputs, []):
        if not nbytes:
            continue
        if key in seen:
            return True
        seen.add(key)
    return False


def get_default_device() -> str:
    return "cpu"


def get_privateuse1_backend_name() -> str:
    return "privateuseone"


def get_accelerator(check: bool = False):
    if check:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return _device("cpu")


def dispatch_pystub(name: str, overload: str):
    """(module, filename) of a Python stub registered from C++ for an operator: none here."""
    return None


def select_batch_norm_backend(*args, **kwargs):
    return ENUMS["torch._C._BatchNormBackend"].Native


def get_cudnn_batch_norm_reserve_space_size(*args, **kwargs) -> int:
    return 0


def set_default_tensor_type(t) -> None:
    from .init import set_default_dtype

    torch_warn_once("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                    "torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    dtype = getattr(t, "dtype", None)
    if getattr(t, "is_cuda", False) or getattr(t, "is_sparse", False):
        raise TorchnativeNotImplementedError(f"torch.set_default_tensor_type({t})",
                                             "only dense cpu tensors exist in torchnative")
    set_default_dtype(dtype)


del FUNCTIONALITIES

def _plain_flags() -> dict:
    """``_get_X``/``_set_X`` switches with upstream's defaults (tables: read off upstream). They
    steer backends torchnative does not have (cuDNN, cuBLAS, NNPACK ...), so they are state only."""
    from ..core.tables import c_enums

    out = {}
    for name, default in c_enums()["flags"].items():
        if name in _globals or name in _ELSEWHERE or name in (
                "deterministic_algorithms", "warnAlways", "deterministic_fill_uninitialized_memory"):
            continue
        store = {"value": default}

        def get(store=store):
            return store["value"]

        def set_(value, store=store, kind=type(default)):
            store["value"] = list(value) if kind is list else kind(value)

        out[f"torch._C._get_{name}"] = get
        out[f"torch._C._set_{name}"] = set_
    return out


def get_onednn_allow_tf32():
    """None: oneDNN's TF32 switch exists for Intel GPUs only, which a CPU build has not."""
    return None


def set_onednn_allow_tf32(value) -> None:
    if type(value) is not bool:
        raise RuntimeError(f"_set_onednn_allow_tf32 expects a bool, but got "
                           f"{typename(value)}")
    torch_warn("TF32 acceleration on top of oneDNN is available for Intel GPUs. The current "
               "Torch version does not have Intel GPU Support.")


# scaled-dot-product-attention backend switches: getter _get_X_sdp_enabled, setter _set_sdp_use_X
# (upstream's defaults; the CPU path reads flash and math)
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True,
        "fa3": False}


def _sdp_flags() -> dict:
    out = {}
    for name in _SDP:
        def get(name=name):
            return _SDP[name]

        def set_(value, name=name):
            _SDP[name] = bool(value)

        out[f"torch._C._get_{name}_sdp_enabled"] = get
        out[f"torch._C._set_sdp_use_{name}"] = set_
    return out


TORCH_C = {
    **_plain_flags(),
    **_sdp_flags(),
    "torch._C._set_warnAlways": set_warn_always,
    "torch._C._get_warnAlways": _getter("warn_always"),
    "torch._C._set_mkldnn_enabled": set_mkldnn_enabled,
    "torch._C._get_onednn_allow_tf32": get_onednn_allow_tf32,
    "torch._C._set_onednn_allow_tf32": set_onednn_allow_tf32,
    "torch._C._get_mkldnn_enabled": _getter("mkldnn"),
    "torch._C._is_autocast_available": is_autocast_available,
    "torch._C.is_autocast_enabled": is_autocast_enabled,
    "torch._C.set_autocast_enabled": set_autocast_enabled,
    "torch._C.get_autocast_dtype": get_autocast_dtype,
    "torch._C.set_autocast_dtype": set_autocast_dtype,
    "torch._C.is_autocast_cache_enabled": is_autocast_cache_enabled,
    "torch._C.set_autocast_cache_enabled": set_autocast_cache_enabled,
    "torch._C.autocast_increment_nesting": autocast_increment_nesting,
    "torch._C.autocast_decrement_nesting": autocast_decrement_nesting,
    "torch._C.clear_autocast_cache": _autocast.clear_cache,
    "torch._C._is_any_autocast_enabled": _autocast.any_enabled,
    "torch._C._DisableAutocast": _DisableAutocast,
    **_device_shorthands(),
    "torch._C._dispatch_keys": dispatch_keys,
    "torch._C._to_functionality_key": to_functionality_key,
    "torch._C._functionality_to_backend_keys": functionality_to_backend_keys,
    "torch._C._dispatch_get_backend_keyset_from_autograd":
        dispatch_get_backend_keyset_from_autograd,
    "torch._C._has_storage": has_storage,
    "torch._C._set_meta_in_tls_dispatch_include": set_meta_in_tls_dispatch_include,
    "torch._C._meta_in_tls_dispatch_include": meta_in_tls_dispatch_include,
    "torch._C._stash_obj_in_tls": stash_obj_in_tls,
    "torch._C._get_obj_in_tls": get_obj_in_tls,
    "torch._C._is_key_in_tls": is_key_in_tls,
    "torch._C._remove_obj_from_tls": remove_obj_from_tls,
    "torch._C._increment_version": increment_version,
    "torch._C._get_default_device": get_default_device,
    "torch._C._any_output_is_alias_to_input_or_output": any_output_is_alias_to_input_or_output,
    "torch._C._get_privateuse1_backend_name": get_privateuse1_backend_name,
    "torch._C._get_accelerator": get_accelerator,
    "torch._C._dispatch_pystub": dispatch_pystub,
    "torch._C._select_batch_norm_backend": select_batch_norm_backend,
    "torch._C._get_cudnn_batch_norm_reserve_space_size": get_cudnn_batch_norm_reserve_space_size,
    "torch._C._set_default_tensor_type": set_default_tensor_type,
}
