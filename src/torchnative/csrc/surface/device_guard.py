"""``torch._C._ensureCUDADeviceGuardSet``: FakeTensorMode calls it on entry.

In a CPU-only upstream build it installs a do-nothing CUDA device guard so fake CUDA tensors can
be traced. torchnative has no device guard registry at all: nothing here switches devices, and
CUDA tensors are refused where they are made. There is nothing to install, and nothing reads it.
"""

from __future__ import annotations


def ensure_cuda_device_guard_set() -> None:
    return None


TORCH_C = {"torch._C._ensureCUDADeviceGuardSet": ensure_cuda_device_guard_set}
