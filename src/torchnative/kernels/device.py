"""``Device`` and the capability ranges a mapping may be registered for."""

from __future__ import annotations

import sys
from dataclasses import dataclass

DEVICE_TYPES = ("cpu", "cuda", "mps", "neuron", "npu", "rocm", "tpu", "xpu")


@dataclass(frozen=True)
class CUDAProperties:
    min_capability: int
    max_capability: int

    def validate_capability_range(self):
        if self.min_capability > self.max_capability:
            raise ValueError(f"min_capability ({self.min_capability}) must be <= "
                             f"max_capability ({self.max_capability})")


@dataclass(frozen=True)
class ROCMProperties:
    min_capability: int
    max_capability: int

    validate_capability_range = CUDAProperties.validate_capability_range


@dataclass(frozen=True)
class Device:
    type: str
    properties: CUDAProperties | ROCMProperties | None = None

    def __post_init__(self):
        if not isinstance(self.type, str):
            raise TypeError(f"Device type must be a str, got {type(self.type).__name__}")
        if isinstance(self.properties, CUDAProperties) and self.type != "cuda":
            raise ValueError("CUDAProperties is only supported for 'cuda' devices.")
        if isinstance(self.properties, ROCMProperties) and self.type != "rocm":
            raise ValueError("ROCMProperties is only supported for 'rocm' devices.")


class DeviceRepos:
    """The repositories (by mode) registered for one device type. Devices with capability
    ranges keep one entry per range and answer with the smallest range holding the device's
    capability; the others keep the last registration."""

    def __init__(self, device_type: str):
        if device_type not in DEVICE_TYPES:
            raise ValueError(f"Unknown device type: {device_type}")
        self.device_type = device_type
        self._ranges: list[tuple[int, int, dict]] = []
        self._repos: dict = {}

    def insert(self, device: Device, repos: dict) -> None:
        if device.type != self.device_type:
            raise ValueError(f"Device type must be '{self.device_type}', got {device.type}")
        if self.device_type in ("cuda", "rocm"):
            p = device.properties
            lo, hi = (0, sys.maxsize) if p is None else (p.min_capability, p.max_capability)
            self._ranges = [r for r in self._ranges if (r[0], r[1]) != (lo, hi)] + [(lo, hi, repos)]
        else:
            self._repos = repos

    @property
    def repos(self) -> dict | None:
        if self.device_type not in ("cuda", "rocm"):
            return self._repos
        cap = _capability()
        fits = [r for r in self._ranges if r[0] <= cap <= r[1]]
        return min(fits, key=lambda r: r[1] - r[0])[2] if fits else None

    def __deepcopy__(self, memo):
        new = DeviceRepos(self.device_type)
        new._ranges, new._repos = list(self._ranges), dict(self._repos)
        return new


def _capability() -> int:
    import torch

    major, minor = torch.cuda.get_device_capability(device=None)
    return major * 10 + minor
