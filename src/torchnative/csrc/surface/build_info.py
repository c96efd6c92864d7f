"""What this torch._C was built with: the flags upstream Python reads to pick code paths.

Each says what torchnative really has: no CUDA/ROCm/XPU/MPS backends, no MKL, MKL-DNN or OpenMP;
LAPACK and FFT come from numpy (its bundled OpenBLAS/LAPACK and pocketfft).
"""

from __future__ import annotations

from ..kernels.support.parallel import (get_num_interop_threads, get_num_threads,
                                       init_num_threads, set_num_interop_threads, set_num_threads)
from ..platform import cpu_capability

TORCH_C = {
    "torch._C._has_cuda": False,
    "torch._C._has_cudnn": False,
    "torch._C._has_cusparselt": False,
    "torch._C._has_magma": False,
    "torch._C._has_mkldnn": False,
    "torch._C._has_mkldnn_acl": False,
    "torch._C._has_mps": False,
    "torch._C._has_xpu": False,
    "torch._C._has_kleidiai": False,
    "torch._C._has_eigen_sparse": False,
    "torch._C.has_lapack": True,
    "torch._C.has_mkl": False,
    "torch._C.has_openmp": False,
    "torch._C.has_spectral": True,
}


def get_cpu_capability() -> str:
    """The CPU capability whose kernels' numerics we reproduce (see cpu_capability)."""
    return cpu_capability.CAPABILITY


def accelerator_get_accelerator():
    """The current accelerator device: None, torchnative has none."""
    return None


def not_available() -> bool:
    return False


def no_devices() -> int:
    return 0


TORCH_C.update({
    "torch._C._accelerator_getAccelerator": accelerator_get_accelerator,
    "torch._C._mps_is_available": not_available,
    "torch._C._mtia_isBuilt": not_available,
    "torch._C._mps_is_in_bad_fork": not_available,
    "torch._C._mtia_isInBadFork": not_available,
    "torch._C._mtia_getDeviceCount": no_devices,
    "torch._C.get_num_threads": get_num_threads,
    "torch._C.set_num_threads": set_num_threads,
    "torch._C.get_num_interop_threads": get_num_interop_threads,
    "torch._C.set_num_interop_threads": set_num_interop_threads,
    "torch._C.init_num_threads": init_num_threads,
    "torch._C._get_cpu_capability": get_cpu_capability,
    # built without the Kineto profiler library (upstream's USE_KINETO=0 answers the same)
    "torch._C._autograd.kineto_available": not_available,
})
