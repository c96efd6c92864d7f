"""torch.device: a (type, index) label. Only cpu and meta hold tensors in torchnative; any other
type is a valid label and refuses to allocate (see construct.py)."""

from __future__ import annotations

import builtins
import re

from .typename import TP_NAMES

DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")


class device:
    __slots__ = ("_type", "_index", "_ctx")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): argument 'type' must be str, not torch.device")
            self._type, self._index = type._type, type._index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({builtins.type(type).__name__})")
        if not type:
            raise RuntimeError("Device string must not be empty")
        name, sep, idx = type.partition(":")
        if name not in DEVICE_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device "
                f"string: {type}")
        if sep:
            if index is not None or not _INDEX.match(idx):
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError("Device index must not be negative")
        self._type, self._index = name, index

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self):
        return self._index

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self._type, self._index) == (other._type, other._index)

    def __hash__(self):
        return hash((self._type, self._index))

    def __reduce__(self):
        return (device, (self._type,) if self._index is None else (self._type, self._index))

    def __enter__(self):
        from torch.utils._device import DeviceContext

        self._ctx = DeviceContext(self)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)

    def __fspath__(self):
        raise TypeError("torch.device is not a path")


device.__module__ = "torch"
del device.__fspath__

CPU = device("cpu")
META = device("meta")

TORCH_C = {"torch._C.device": device}
TP_NAMES[device] = "torch.device"
