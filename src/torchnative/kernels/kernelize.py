"""The layer mapping (layer name -> device -> mode -> repository) and ``kernelize``."""

from __future__ import annotations

import logging
import os
from contextvars import ContextVar
from copy import deepcopy

from .device import DEVICE_TYPES, Device, DeviceRepos
from .layer import KernelizeFallback, LayerRepository, replace_forward, validate_layer
from .mode import Mode, select_repository

logger = logging.getLogger(__name__)

_MAPPING: ContextVar[dict] = ContextVar("_KERNEL_MAPPING", default={})
_CACHED_LAYER: dict = {}


def _disabled() -> bool:
    return bool(int(os.environ.get("DISABLE_KERNEL_MAPPING", "0")))


def register_kernel_mapping(mapping: dict, inherit_mapping: bool = True) -> None:
    """Merge ``mapping`` (layer name -> device (str or Device) -> repository or {Mode:
    repository}) into the current mapping; ``inherit_mapping=False`` clears it first."""
    if not inherit_mapping:
        _MAPPING.set({})
    for layer_name, device_repos in mapping.items():
        per_device = _MAPPING.get().setdefault(layer_name, {})
        for dev, repo in device_repos.items():
            device = Device(type=dev) if isinstance(dev, str) else dev
            options = repo if isinstance(repo, dict) else {Mode.FALLBACK: repo}
            per_device.setdefault(device.type, DeviceRepos(device.type)).insert(device, options)


class use_kernel_mapping:
    """Context manager: ``mapping`` extends (or, with ``inherit_mapping=False``, replaces) the
    current mapping inside the block."""

    def __init__(self, mapping: dict, *, inherit_mapping: bool = True):
        self.mapping, self.inherit = mapping, inherit_mapping

    def __enter__(self):
        self.token = _MAPPING.set(deepcopy(_MAPPING.get()) if self.inherit else {})
        register_kernel_mapping(self.mapping)

    def __exit__(self, *exc):
        _MAPPING.reset(self.token)


def current_mapping() -> dict:
    return _MAPPING.get()


def _layer_for(repo, module_class):
    layer = _CACHED_LAYER.get(repo)
    if layer is None:
        layer = repo.load()
        validate_layer(check_cls=module_class, cls=layer, repo=repo)
        _CACHED_LAYER[repo] = layer
    return layer


def _fallback(module, why: str, flag, use_fallback, message: str) -> None:
    if flag not in use_fallback:
        raise ValueError(message)
    logger.info("%s; keeping the original forward", why)
    replace_forward(module, type(module))


def kernelize_layer(module, *, mode: Mode, device_type: Device,
                    use_fallback: KernelizeFallback) -> None:
    module_class = type(module)
    name = str(module_class.kernel_layer_name)
    if _disabled():
        replace_forward(module, module_class)
        return
    kernel = _MAPPING.get().get(name)
    if kernel is None:
        return _fallback(module, f"no mapping for `{name}`", KernelizeFallback.NO_LAYER,
                         use_fallback, f"No layer mapping for `{name}`")
    device_repos = kernel.get(device_type.type)
    if device_repos is None:
        return _fallback(module, f"no `{device_type.type}` mapping for `{name}`",
                         KernelizeFallback.NO_DEVICE, use_fallback,
                         f"No layer mapping for `{name}` with device type `{device_type}`")
    repos = device_repos.repos
    if repos is None:
        return _fallback(module, "no matching properties", KernelizeFallback.NO_COMPATIBLE_PROPERTIES,
                         use_fallback, f"No layer mapping for `{name}` device `{device_type}` "
                         "with the right properties")
    selected = select_repository(repos, mode=mode)
    if selected is None:
        return _fallback(module, f"no repository for mode {mode}", KernelizeFallback.NO_COMPATIBLE_MODE,
                         use_fallback, f"No repository for `{name}` for configuration mode={mode}")
    repo, repo_mode = selected
    try:
        layer = _layer_for(repo, module_class)
    except FileNotFoundError:
        if KernelizeFallback.CANNOT_LOAD not in use_fallback:
            raise
        logger.info("Kernel for layer `%s` on %s could not be loaded; using the original forward.",
                    name, device_type.type)
        replace_forward(module, module_class)
        return
    if Mode.TRAINING in repo_mode and not getattr(layer, "has_backward", True):
        raise ValueError(f"Function/layer from repo {repo} does not support backward.\n"
                         f"Was registered for `{name}` with mode `{repo_mode}`")
    if Mode.TORCH_COMPILE in repo_mode and not getattr(layer, "can_torch_compile", False):
        raise ValueError(f"Function/layer from repo {repo} does not support torch.compile.\n"
                         f"Was registered for `{name}` with mode `{repo_mode}`")
    # A FALLBACK registration is never rejected above; it still must support the mode asked for.
    no_compile = Mode.TORCH_COMPILE in mode and not getattr(layer, "can_torch_compile", False)
    no_backward = Mode.TRAINING in mode and not getattr(layer, "has_backward", True)
    if no_compile or no_backward:
        if KernelizeFallback.NO_COMPATIBLE_MODE not in use_fallback:
            raise ValueError(f"Available kernel does not support mode: {mode}")
        replace_forward(module, module_class)
    else:
        replace_forward(module, layer)


def kernelize(model, *, mode: Mode, device=None, use_fallback: bool | KernelizeFallback = True):
    """Replace the forward of every kernelizable layer (and attached kernel function) of
    ``model`` with the kernel layer the mapping names for ``device`` and ``mode``."""
    if mode == Mode.FALLBACK:
        raise ValueError("Mode.FALLBACK can only be used to register kernel mappings.")
    if Mode.INFERENCE not in mode and Mode.TRAINING not in mode:
        raise ValueError("kernelize mode must contain Mode.INFERENCE or Mode.TRAINING.")
    if device is None:
        try:
            param = next(model.parameters())
        except StopIteration:
            raise ValueError("Cannot determine model device, provide as `device` argument to "
                             "`kernelize`.") from None
        device_type = Device(type=param.device.type)
    elif isinstance(device, str):
        if device not in DEVICE_TYPES:
            raise ValueError(f"Unsupported device type '{device}'. Supported device types are: "
                             f"{', '.join(sorted(DEVICE_TYPES))}")
        device_type = Device(type=device)
    else:
        device_type = Device(type=device.type)
    if isinstance(use_fallback, bool):
        use_fallback = KernelizeFallback.DEFAULT if use_fallback else KernelizeFallback.NONE
    for _, module in model.named_modules():
        for fn in getattr(module, "_kernel_funcs", {}).values():
            kernelize_layer(fn, mode=mode, device_type=device_type, use_fallback=use_fallback)
        cls = type(module)
        if hasattr(cls, "kernel_layer_name"):
            cond = getattr(cls, "kernel_condition", None)
            if cond and not cond(module):
                continue
            kernelize_layer(module, mode=mode, device_type=device_type, use_fallback=use_fallback)
    return model


_MODE_NAMES = {"inference": Mode.INFERENCE, "training": Mode.TRAINING,
               "torch_compile": Mode.TORCH_COMPILE, "fallback": Mode.FALLBACK}


def mapping_from_bundle(bundle) -> dict:
    """The contract mapping a bundle declares: layer -> device -> [{"repo-id", "layer-name",
    "mode": "inference" | "training|torch_compile" | ...}], each repository pinned to the
    version the bundle holds."""
    out: dict = {}
    for layer_name, devices in bundle.mapping.items():
        for device, regs in devices.items():
            by_mode = {}
            for reg in regs:
                entry = bundle.find(reg["repo-id"], version=reg.get("version"),
                                    revision=reg.get("revision")) \
                    if ("version" in reg or "revision" in reg) else \
                    next(e for e in bundle.entries() if e["repo-id"] == reg["repo-id"])
                mode = Mode._NONE
                for part in reg.get("mode", "fallback").split("|"):
                    mode = mode | _MODE_NAMES[part.strip().lower()]
                kw = {"version": entry["version"]} if entry.get("version") is not None \
                    else {"revision": entry["revision"]}
                by_mode[mode] = LayerRepository(reg["repo-id"], layer_name=reg["layer-name"], **kw)
            out.setdefault(layer_name, {})[device] = by_mode
    return out
