"""Storage and tensor I/O for torch.save/torch.load and memory-mapped files
(torch/csrc/StorageMethods.cpp, torch/csrc/serialization.cpp): ``UntypedStorage.from_file``,
``_set_from_file``, ``_new_with_file``, ``from_buffer``, ``_byteswap`` (installed on StorageBase at
import: storage sits in the core layer below this one), tensors over storages, and the tensor
metadata a checkpoint records.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from ..core import dtypes as D
from ..core.device import CPU
from ..core.storage import StorageBase, storage_class

def storage_from_file(filename, shared=False, nbytes=0):
    """UntypedStorage.from_file: ``nbytes`` bytes of ``filename`` mapped into memory; with
    ``shared`` writes reach the file (created or grown as needed), else they stay private
    (copy-on-write, MAP_PRIVATE). The storage is not resizable."""
    import mmap

    filename, nbytes = os.fsdecode(filename), int(nbytes)
    try:
        if shared:
            fd = os.open(filename, os.O_RDWR | os.O_CREAT, 0o600)
        else:
            fd = os.open(filename, os.O_RDONLY)
    except OSError as e:
        mode = "read-write" if shared else "read-only"
        raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: "
                           f"{os.strerror(e.errno)} ({e.errno})") from None
    try:
        size = os.fstat(fd).st_size
        if size < nbytes:
            if not shared:
                raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required "
                                   f"mapping size <{nbytes}>")
            os.ftruncate(fd, nbytes)
        if nbytes == 0:
            data = np.empty(0, dtype=np.uint8)
        elif shared:
            data = np.frombuffer(mmap.mmap(fd, nbytes, mmap.MAP_SHARED), dtype=np.uint8)
        else:
            data = np.frombuffer(mmap.mmap(fd, nbytes, mmap.MAP_PRIVATE,
                                           mmap.PROT_READ | mmap.PROT_WRITE), dtype=np.uint8)
    finally:
        os.close(fd)     # the mapping keeps the file's pages; the descriptor is not needed
    return storage_class()._wrap(data, nbytes, CPU, False)


def _read_exact(f, view: memoryview) -> None:
    readinto = getattr(f, "readinto", None)
    got = 0
    while got < len(view):
        if readinto is not None:
            n = readinto(view[got:]) or 0
        else:
            chunk = f.read(len(view) - got)
            n = len(chunk)
            view[got:got + n] = chunk
        if n == 0:
            raise RuntimeError("unexpected EOF, expected "
                               f"{len(view) - got} more bytes. The file might be corrupted.")
        got += n


def _read_numel(f) -> int:
    raw = bytearray(8)
    _read_exact(f, memoryview(raw))
    return int.from_bytes(raw, sys.byteorder, signed=True)


def storage_set_from_file(storage, f, offset, is_real_file, element_size=1):
    """The legacy (pre-zip) format: an int64 element count, then the raw bytes, read into
    ``storage``, whose size must match."""
    if not is_real_file and offset is not None:
        raise RuntimeError("_set_from_file: offset is NYI for filelike objects")
    if offset is not None:
        f.seek(offset)
    nbytes = _read_numel(f) * int(element_size)
    if storage.nbytes() != nbytes:
        # upstream's TORCH_CHECK concatenates its printf-style arguments
        raise RuntimeError(f"storage has wrong byte size: expected %ld got %ld{nbytes}"
                           f"{storage.nbytes()}")
    if nbytes:
        _read_exact(f, memoryview(storage._data))
    return storage


def storage_new_with_file(f, element_size):
    """UntypedStorage._new_with_file: a new storage read from the legacy format."""
    nbytes = _read_numel(f) * int(element_size)
    data = np.empty(nbytes, dtype=np.uint8)
    if nbytes:
        _read_exact(f, memoryview(data))
    return storage_class()._wrap(data, nbytes, CPU)


def storage_byteswap(storage, elem_size):
    """Reverse the bytes of each ``elem_size``-byte group, in place."""
    elem_size = int(elem_size)
    if storage._data is None or elem_size <= 1 or storage.nbytes() == 0:
        return
    if elem_size not in (2, 4, 8, 16) or storage.nbytes() % elem_size:
        raise RuntimeError(f"Invalid element size {elem_size} for storage of {storage.nbytes()} "
                           "bytes")
    groups = storage._data.reshape(-1, elem_size)
    groups[:] = groups[:, ::-1]


_MISSING = object()
_ENDIAN_FREE = ("uint8", "int8", "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz",
                "float8_e4m3fnuz")
_DECODABLE = _ENDIAN_FREE + ("bool", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                             "float64", "complex64", "complex128")


def storage_from_buffer(buffer, byte_order=None, count=-1, offset=0, dtype=_MISSING):
    """UntypedStorage.from_buffer: a copy of ``count`` elements of ``dtype`` (all if -1) from
    ``buffer`` at byte ``offset``, decoded from ``byte_order`` to native order."""
    if dtype is _MISSING:
        raise RuntimeError("argument 'dtype' cannot be None")
    if not isinstance(dtype, D.dtype):
        raise RuntimeError("argument 'dtype' must be of type torch.dtype")
    endian_free = dtype._name in _ENDIAN_FREE
    if not endian_free and byte_order is None:
        raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
    swap = False
    if not endian_free:
        if byte_order not in ("native", "big", "little"):
            raise ValueError(f"invalid byte_order '{byte_order}' (expected 'big', 'little', or "
                             "'native')")
        swap = byte_order != "native" and byte_order != sys.byteorder
    src = memoryview(buffer).cast("B")
    item = dtype.itemsize
    count, offset = int(count), int(offset)
    if offset < 0 or offset > len(src):
        # upstream prints the two numbers in this order
        raise ValueError(f"offset must be non-negative and no greater than buffer length "
                         f"({offset}) , but got {len(src)}")
    if count < 0:
        if (len(src) - offset) % item:
            raise ValueError(f"buffer size ({len(src)}) must be a multiple of element size "
                             f"({item})")
        count = (len(src) - offset) // item
    if offset + count * item > len(src):
        raise ValueError(f"buffer has only {len(src) - offset} elements after offset {offset}, "
                         f"but specified a size of {count}")
    if dtype._name not in _DECODABLE:
        raise RuntimeError(f"Unknown type: {dtype._cpp_name}")
    data = np.frombuffer(src, dtype=np.uint8, count=count * item, offset=offset).copy()
    if dtype._name == "bool":
        np.not_equal(data, 0, out=data.view(np.bool_))
    elif swap:
        half = item // 2 if dtype.is_complex else item
        if half > 1:
            groups = data.reshape(-1, half)
            groups[:] = groups[:, ::-1]
    return storage_class()._wrap(data, count * item, CPU)


def tensor_from_storage(obj, dtype=None, device=None):
    """torch.asarray / torch.as_tensor of a storage (tensor_new.cpp internal_new_from_data): a
    1-D tensor over the storage's bytes, as many whole elements as fit, no copy. A typed
    storage fixes the dtype; an untyped one reads as ``dtype`` (int64 when not given, the
    type upstream infers)."""
    from ..core.construct import make

    if isinstance(obj, StorageBase):
        storage, sdt = obj, None
    else:
        storage, sdt = obj._untyped_storage, obj.dtype
    dt = dtype if dtype is not None else (sdt if sdt is not None else D.BY_NAME["int64"])
    if sdt is not None and sdt is not dt:
        raise RuntimeError(f"Expected a Storage of type {dt._cpp_name} or an UntypedStorage, but "
                           f"got {sdt._cpp_name}")
    t = make(storage, dt, (storage.nbytes() // dt.itemsize,), (1,), 0)
    return t if device is None else t.to(device=device)


# ---- tensor metadata (torch/csrc/jit/serialization/pickler_helpers: get/setTensorMetadata) ---------

def get_tensor_metadata(tensor) -> dict:
    """The non-default representation bits a checkpoint records: the lazy conjugate and negative
    bits (``{}`` for a plain tensor)."""
    meta = {}
    if tensor.is_conj():
        meta["conj"] = True
    if tensor.is_neg():
        meta["neg"] = True
    return meta


def set_tensor_metadata(tensor, metadata: dict) -> None:
    """Apply the bits an upstream checkpoint recorded: the tensor becomes the lazy view it was."""
    from ..core.conj_neg_bits import set_conj, set_neg

    for key in metadata:
        if key not in ("conj", "neg"):
            raise RuntimeError(f"Unexpected key `{key}` passed to setTensorMetadata.")
    if "conj" in metadata:
        set_conj(tensor, bool(metadata["conj"]))
    if "neg" in metadata:
        set_neg(tensor, bool(metadata["neg"]))


# torch.load ends by asking whether loaded sparse tensors must be validated: a process-wide flag
# (at::globalContext().checkSparseTensorInvariants()), off by default.
_sparse_invariants = [False]


def check_sparse_tensor_invariants() -> bool:
    return _sparse_invariants[0]


def set_check_sparse_tensor_invariants(enabled: bool) -> None:
    _sparse_invariants[0] = bool(enabled)




def _install_storage_methods(cls) -> None:
    cls.from_file = staticmethod(storage_from_file)
    cls._set_from_file = storage_set_from_file
    cls._new_with_file = staticmethod(storage_new_with_file)
    cls._byteswap = storage_byteswap
    cls.from_buffer = staticmethod(storage_from_buffer)


_install_storage_methods(StorageBase)

TORCH_C = {
    "torch._C._check_sparse_tensor_invariants": check_sparse_tensor_invariants,
    "torch._C._set_check_sparse_tensor_invariants": set_check_sparse_tensor_invariants,
    "torch._C._get_tensor_metadata": get_tensor_metadata,
    "torch._C._set_tensor_metadata": set_tensor_metadata,
}
