"""The Hugging Face ``kernels`` contract, resolved from a bundle built ahead of time.

Plain torch code (it runs on upstream torch as on ours); nothing in it is compiled and nothing
touches the network. Kernels are chosen when a bundle is built (``python -m torchnative.kernels
bundle``) and read from it at run time; the active bundle's layer mapping is registered on
import, so ``kernelize`` (and transformers' ``use_kernels=True``) finds it.
"""

from .bundle import Bundle, KernelSource, active_bundle, build_bundle
from .device import CUDAProperties, Device, ROCMProperties
from .errors import BundleError, KernelDigestError, KernelNotInBundleError, KernelVariantError
from .kernelize import kernelize, mapping_from_bundle, register_kernel_mapping, use_kernel_mapping
from .layer import (KernelizeFallback, LayerRepository, LocalLayerRepository,
                    LockedLayerRepository, replace_kernel_forward_from_hub,
                    use_kernel_forward_from_hub, use_kernelized_func)
from .load import get_kernel, get_local_kernel, get_locked_kernel, has_kernel, load_kernel
from .mode import Mode
from .variants import Target

__version__ = "0.18.2+torchnative"

__all__ = [
    "Bundle", "BundleError", "CUDAProperties", "Device", "KernelDigestError",
    "KernelNotInBundleError", "KernelSource", "KernelVariantError", "KernelizeFallback",
    "LayerRepository", "LocalLayerRepository", "LockedLayerRepository", "Mode", "ROCMProperties",
    "Target", "active_bundle", "build_bundle", "get_kernel", "get_local_kernel",
    "get_locked_kernel", "has_kernel", "kernelize", "load_kernel", "register_kernel_mapping",
    "replace_kernel_forward_from_hub", "use_kernel_forward_from_hub", "use_kernel_mapping",
    "use_kernelized_func",
]


def _register_active_bundle() -> None:
    bundle = active_bundle()
    if bundle is not None:
        register_kernel_mapping(mapping_from_bundle(bundle))


_register_active_bundle()
