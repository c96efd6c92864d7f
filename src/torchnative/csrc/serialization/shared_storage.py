"""Storages in shared memory, for torch.multiprocessing and DataLoader workers
(torch/csrc/StorageSharing.cpp, the file-descriptor strategy; installed on StorageBase at import).

A shared storage's bytes live in an anonymous memory file (``memfd_create``, or an unlinked
file under /dev/shm) mapped into this process; the storage keeps the descriptor open for its
lifetime, and ``_share_fd_cpu_`` hands it out for ``multiprocessing.reduction.DupFd`` to pass to
another process, which maps the same pages with ``_new_shared_fd_cpu``.

Moving a private storage into shared memory (``share_memory_``) copies its bytes into a new
mapping and re-points every tensor over it. Our tensors keep their numpy view (``_np``), so
the tensors over the storage are found with ``gc.get_referrers`` and given views of the new
buffer: one scan of the heap per storage moved, paid once per storage, never on a path that
computes.

The file-system strategy needs upstream's ``torch_shm_manager`` executable and refuses by name.
"""

from __future__ import annotations

import gc
import itertools
import mmap
import os
import weakref

import numpy as np

from ..core.device import CPU
from ..core.refuse import TorchnativeNotImplementedError
from ..core.storage import StorageBase, storage_class
from ..core.tensor import TensorBase, numpy_view

_FD = "_tn_shm_fd"
_names = itertools.count()


def _memory_file(nbytes: int) -> int:
    """A descriptor of a new anonymous shared-memory file of ``nbytes`` bytes."""
    name = f"torch_{os.getpid()}_{next(_names)}"
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create(name, os.MFD_CLOEXEC)
    else:
        path = os.path.join("/dev/shm", name)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.unlink(path)
    try:
        os.ftruncate(fd, nbytes)
    except OSError as e:
        os.close(fd)
        raise RuntimeError(f"unable to allocate {nbytes} bytes of shared memory: "
                           f"{os.strerror(e.errno)} ({e.errno})") from None
    return fd


def _mapped(fd: int, nbytes: int) -> np.ndarray:
    return np.frombuffer(mmap.mmap(fd, nbytes, mmap.MAP_SHARED,
                                   mmap.PROT_READ | mmap.PROT_WRITE), dtype=np.uint8)


def _adopt(storage, fd: int) -> None:
    """The storage owns ``fd`` from now on: closed when the storage goes."""
    storage.__dict__[_FD] = fd
    weakref.finalize(storage, os.close, fd)


def _shared_storage(fd: int, nbytes: int):
    s = storage_class()._wrap(_mapped(fd, nbytes) if nbytes else np.empty(0, np.uint8), nbytes,
                              CPU, False)
    _adopt(s, fd)
    return s


def _check_cpu(storage, what: str) -> None:
    if storage.device.type != "cpu":
        raise RuntimeError(f"{what}: only available on CPU")


def _rehome(storage, data: np.ndarray) -> None:
    """Give ``storage`` the buffer ``data`` and every tensor over it a view of the new buffer."""
    storage._data = data
    for obj in gc.get_referrers(storage):
        if isinstance(obj, TensorBase) and obj._st is storage:
            obj._np = numpy_view(storage, obj._dtype, obj._size, obj._stride, obj._offset)


def share_fd(self):
    """``_share_fd_cpu_``: move the bytes into shared memory (once) and return (fd, nbytes);
    an empty storage has nothing to map and answers (-1, 0), as upstream."""
    _check_cpu(self, "_share_fd_")
    fd = self.__dict__.get(_FD)
    if fd is None:
        if self._nbytes == 0:
            return (-1, 0)
        fd = _memory_file(self._nbytes)
        data = _mapped(fd, self._nbytes)
        data[:] = self._data
        _adopt(self, fd)
        _rehome(self, data)
    return (fd, self._nbytes)


def new_using_fd(nbytes, device=None):
    """``UntypedStorage._new_using_fd_cpu(size)``: a new shared storage (uninitialized)."""
    nbytes = int(nbytes)
    if nbytes == 0:
        return storage_class()._wrap(np.empty(0, np.uint8), 0, CPU)
    return _shared_storage(_memory_file(nbytes), nbytes)


def new_shared_fd(fd, nbytes):
    """``UntypedStorage._new_shared_fd_cpu(fd, size)``: map another process's shared storage; the
    caller keeps (and closes) ``fd``."""
    nbytes = int(nbytes)
    try:
        own = os.dup(int(fd))
    except OSError as e:
        raise RuntimeError(f"could not duplicate a shared memory file descriptor: "
                           f"{os.strerror(e.errno)} ({e.errno})") from None
    return _shared_storage(own, nbytes)


def is_shared(self) -> bool:
    return _FD in self.__dict__


def _refuse_filename(*args, **kwargs):
    raise TorchnativeNotImplementedError(
        "torch.multiprocessing's 'file_system' sharing strategy "
        "(UntypedStorage._share_filename_cpu_ / _new_shared_filename_cpu / "
        "_new_using_filename_cpu)",
        "it needs upstream's torch_shm_manager executable; the default 'file_descriptor' "
        "strategy works")


# -- weak references by number (StorageWeakRef in torch.multiprocessing.reductions) ------------
_weak: dict[int, weakref.ref] = {}
_handles = itertools.count(1)


def weak_ref(self) -> int:
    h = next(_handles)
    _weak[h] = weakref.ref(self)
    return h


def expired(handle) -> bool:
    ref = _weak.get(int(handle))
    return ref is None or ref() is None


def free_weak_ref(handle) -> None:
    _weak.pop(int(handle), None)


def new_with_weak_ptr(handle):
    ref = _weak.get(int(handle))
    return None if ref is None else ref()


def shared_incref(self):
    """Reference counts exist for the file-system strategy's managed files only; a
    file-descriptor storage has nothing to count, as upstream."""
    return None


def shared_decref(self):
    return self


def _resizing(resize):
    """A resize gives the storage private memory again (upstream keeps the storage's allocator,
    the ordinary CPU one, when it moves the bytes into shared memory)."""
    def resize_(self, nbytes):
        out = resize(self, nbytes)
        self.__dict__.pop(_FD, None)  # the descriptor stays open until the storage goes
        return out
    return resize_


_METHODS = {"_share_fd_cpu_": share_fd, "is_shared": is_shared,
            "_share_filename_cpu_": _refuse_filename, "_weak_ref": weak_ref,
            "_shared_incref": shared_incref, "_shared_decref": shared_decref}
_STATIC = {"_new_using_fd_cpu": new_using_fd, "_new_shared_fd_cpu": new_shared_fd,
           # our base class's _new_shared (upstream's UntypedStorage overrides it in Python with
           # the sharing strategy's allocator)
           "_new_shared": new_using_fd, "_new_shared_filename_cpu": _refuse_filename,
           "_new_using_filename_cpu": _refuse_filename, "_expired": expired,
           "_free_weak_ref": free_weak_ref, "_new_with_weak_ptr": new_with_weak_ptr}


def _install(cls) -> None:
    cls.resize_ = _resizing(cls.resize_)
    for name, fn in _METHODS.items():
        setattr(cls, name, fn)
    for name, fn in _STATIC.items():
        setattr(cls, name, staticmethod(fn))


_install(StorageBase)
TORCH_C: dict = {}  # methods of UntypedStorage only (installed above)
