"""UntypedStorage's base: a byte buffer (a 1-D uint8 numpy array) on a device.

cpu storages own bytes; meta storages have a size and no bytes. Tensors view storages through
numpy arrays made with the tensor's dtype, sizes, strides and offset (see tensor.py), so writes
through any view land in the one buffer.
"""

from __future__ import annotations

import numpy as np

from . import python_classes
from .device import CPU, META, device as _device
from .refuse import TorchnativeNotImplementedError


def _checked_device(dev) -> _device:
    dev = CPU if dev is None else _device(dev)
    if dev.type not in ("cpu", "meta"):
        raise TorchnativeNotImplementedError(
            f"storage on device '{dev}'", "torchnative allocates on cpu and meta only")
    return dev


class StorageBase:
    __slots__ = ("_data", "_nbytes", "_device", "_resizable", "__weakref__", "__dict__")
    # For caches derived from the bytes (kernels/support/widened_cache.py): writes counted
    # through every tensor over this storage (one counter, whatever version counter the tensor
    # has), and whether the bytes were handed to something whose writes are not seen (a numpy
    # or DLPack alias, a storage slice).
    _tn_writes = 0
    _tn_aliased = False

    def __init__(self, *args, device=None, **kwargs):
        dev = _checked_device(device)
        if len(args) == 1 and isinstance(args[0], int):
            nbytes = args[0]
        elif not args:
            nbytes = 0
        elif len(args) == 1 and isinstance(args[0], (list, tuple)):
            data = np.asarray(args[0], dtype=np.int64)
            if ((data < 0) | (data > 255)).any():
                raise RuntimeError("Overflow when unpacking long long")
            self._init(len(data), dev)
            self._data[:] = data.astype(np.uint8)
            return
        else:
            raise TypeError(f"{type(self).__name__}(): invalid arguments")
        self._init(nbytes, dev)

    def _init(self, nbytes: int, dev: _device, data: np.ndarray | None = None) -> None:
        self._nbytes = nbytes
        self._device = dev
        self._resizable = True
        if dev.type == "meta":
            self._data = None
        else:
            self._data = np.empty(nbytes, dtype=np.uint8) if data is None else data

    @classmethod
    def _wrap(cls, data: np.ndarray | None, nbytes: int, dev: _device, resizable=True):
        s = cls.__new__(cls)
        s._init(nbytes, dev, data)
        s._resizable = resizable
        return s

    @property
    def device(self) -> _device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_hpu(self) -> bool:
        return False

    @property
    def filename(self):
        return None

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        if self._data is None:
            return 0
        return self._data.__array_interface__["data"][0] if self._nbytes else 0

    def _cdata_ptr(self) -> int:
        return id(self)

    @property
    def _cdata(self) -> int:
        return id(self)

    def resizable(self) -> bool:
        return self._resizable

    def resize_(self, nbytes: int):
        if not self._resizable:
            raise RuntimeError("Trying to resize storage that is not resizable")
        if self._data is not None:
            new = np.zeros(nbytes, dtype=np.uint8)
            n = min(nbytes, self._nbytes)
            new[:n] = self._data[:n]
            self._data = new
        self._nbytes = nbytes
        return self

    def fill_(self, value):
        if self._data is not None:
            self._data[:] = value
            self._tn_writes += 1
        return self

    def copy_(self, src, non_blocking=None):
        if src.nbytes() != self._nbytes:
            raise RuntimeError(f"size mismatch, {self._nbytes} vs {src.nbytes()}")
        if self._data is not None and src._data is not None:
            self._data[:] = src._data
            self._tn_writes += 1
        return self

    def __getitem__(self, idx):
        if self._data is None:
            raise NotImplementedError("Not available for 'meta' device type")
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self._nbytes)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of "
                                   "1 is supported")
            self._tn_aliased = True
            return type(self)._wrap(self._data[start:stop], stop - start, self._device, False)
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if idx < -self._nbytes or idx >= self._nbytes:
            raise IndexError(f"index {idx} out of range for storage of size {self._nbytes}")
        return int(self._data[idx])

    def __setitem__(self, idx, value):
        if self._data is None:
            raise NotImplementedError("Not available for 'meta' device type")
        self._data[idx] = value
        self._tn_writes += 1

    def tolist(self):
        return [] if self._data is None else self._data.tolist()

    def is_pinned(self, device="cuda") -> bool:
        return False

    # Sharing between processes (share_memory_, _share_fd_cpu_, _new_shared, weak references)
    # is installed by csrc/serialization/shared_storage.py, the layer above.

    # from_file, _set_from_file, _new_with_file, _byteswap and from_buffer (checkpoint I/O) are
    # installed by csrc/serialization/storage_io.py, the layer above.

    def _write_file(self, f, is_real_file, save_size, element_size):
        """Legacy (non-zip) serialization: optional size header, then the raw bytes."""
        if save_size:
            f.write(np.int64(self._nbytes // element_size).tobytes())
        if self._data is not None:
            f.write(self._data.tobytes())

    def _get_filename(self):
        return None

    def __reduce__(self):
        raise TorchnativeNotImplementedError("pickling a torch._C.StorageBase directly")


def is_storage(obj) -> bool:
    """An untyped storage (StorageBase) or a typed one wrapping it (TypedStorage,
    torch.FloatStorage, ...)."""
    return isinstance(obj, StorageBase) or isinstance(
        getattr(obj, "_untyped_storage", None), StorageBase)


def storage_class():
    """upstream's torch.UntypedStorage once torch/storage.py has defined it, else StorageBase."""
    return python_classes.storage_class(StorageBase)


def new_storage(nbytes: int, dev: _device, data: np.ndarray | None = None):
    """A storage of ``nbytes`` on ``dev`` (uninitialized unless ``data`` is given)."""
    if data is None and dev.type != "meta":
        data = np.empty(nbytes, dtype=np.uint8)
    return storage_class()._wrap(data, nbytes, dev)


META_DEVICE = META

TORCH_C = {"torch._C.StorageBase": StorageBase}
