"""torch._C's checkpoint container: ``PyTorchFileWriter`` / ``PyTorchFileReader``, in Python.

Upstream's are C++ (caffe2/serialize/inline_container.cc over miniz); torch/serialization.py (unmodified
upstream) drives them. The writer here reproduces miniz's byte layout exactly, so a file written by
ours is byte-identical to upstream's for the same records:

- each record is ``<archive>/<name>``, stored (no compression), its local header carrying an extra
  field ``FB<len>ZZZ...`` that pads the data to ``storage_alignment`` (64) bytes: tensor bytes can be
  mmapped aligned;
- local headers have zero sizes and CRC (flag bit 3); a data descriptor ``PK\\x07\\x08`` follows each
  non-empty record; zip64 extra fields appear only past 4 GiB; the archive always ends with a zip64
  end-of-central-directory record, its locator and the classic record;
- ``write_end_of_file`` adds ``version`` (or ``.data/version`` for versions >= 6), ``byteorder`` and
  ``.data/serialization_id`` when absent. The serialization id is upstream's: a ``hash_combine`` of
  ``std::hash`` of the record names in ``std::unordered_set`` iteration order, then of the CRCs
  seen in data descriptors (see ``_serialization_id``).

The reader parses the central directory with the ``zipfile`` module and reads stored records
straight into numpy buffers (no CRC check on read, as upstream's build of miniz).
"""

from __future__ import annotations

import ctypes
import io
import os
import struct
import zipfile
import zlib

import numpy as np

from ..core import dtypes as D
from ..core.device import CPU
from ..platform.pybind_errors import incompatible_arguments
from ..core.storage import storage_class
from ..platform.torch_warn import torch_warn

_U32 = 0xFFFFFFFF
_M64 = (1 << 64) - 1
_DESCRIPTOR_ID = b"PK\x07\x08"

# caffe2/serialize/versions.h
_MIN_PRODUCED_VERSION = 0x3
_MIN_SUPPORTED_VERSION = 0x1
_MAX_SUPPORTED_VERSION = 0xA
_SERIALIZATION_ID_RECORD = ".data/serialization_id"
_MINIZ_HINT = (". This is an internal miniz error. If you are seeing this error, there is a high "
               "likelihood that your checkpoint file is corrupted. This can happen if the checkpoint "
               "was not saved properly, was transferred incorrectly, or the file was modified after "
               "saving.")


# ---- upstream's serialization id ------------------------------------------------------------------

def _std_hash(data: bytes) -> int:
    """libstdc++'s ``std::hash<std::string>`` on 64-bit: ``_Hash_bytes(p, n, 0xc70f6907)``."""
    mul = 0xC6A4A7935BD1E995
    n = len(data)
    h = (0xC70F6907 ^ (n * mul)) & _M64
    aligned = n & ~7
    for (word,) in struct.iter_unpack("<Q", data[:aligned]):
        k = (word * mul) & _M64
        k = ((k ^ (k >> 47)) * mul) & _M64
        h = ((h ^ k) * mul) & _M64
    if n & 7:
        h = ((h ^ int.from_bytes(data[aligned:], "little")) * mul) & _M64
    h = ((h ^ (h >> 47)) * mul) & _M64
    return h ^ (h >> 47)


def _hash_combine(seed: int, value: int) -> int:
    """c10::hash_combine."""
    return (seed ^ ((value + 0x9E3779B9 + (seed << 6) + (seed >> 2)) & _M64)) & _M64


# Bucket counts a libstdc++ unordered_set takes as it grows (max_load_factor 1): inserting element
# number k (1-based) rehashes to the count paired with it. Measured from libstdc++ itself.
_REHASH_AT = ((1, 13), (14, 29), (30, 59), (60, 127), (128, 257), (258, 541), (542, 1109),
              (1110, 2357), (2358, 5087), (5088, 10273), (10274, 20753), (20754, 42043),
              (42044, 85229), (85230, 172933), (172934, 351061), (351062, 712697),
              (712698, 1447153), (1447154, 2938679), (2938680, 5967347))


def _unordered_set_order(codes: list[int]) -> list[int]:
    """Indices of ``codes`` (hash codes, in insertion order) in the iteration order of a libstdc++
    ``std::unordered_set`` built by inserting them one by one: a singly linked list in which a
    node goes to the front of its bucket's run, or to the list's head when its bucket is empty,
    and which a rehash rebuilds by walking the old list."""
    if len(codes) > _REHASH_AT[-1][0]:
        raise RuntimeError(f"serialization id: more than {_REHASH_AT[-1][0]} records is beyond "
                           "the measured libstdc++ bucket table")
    head = -1                      # index of the first node; -1: none
    nxt: list[int] = []            # next node of each node; -1: end
    before: list[int] = []         # per bucket: node before its run (-2: the list head), or -1
    nb = 1
    growth = iter(_REHASH_AT)
    at, size = next(growth)
    for i, code in enumerate(codes):
        if i + 1 == at:
            # rehash: walk the old list, rebuilding buckets (libstdc++ _M_rehash_aux, unique keys)
            nb, new = size, [-1] * size
            p, head, first_bkt = head, -1, 0
            while p != -1:
                following = nxt[p]
                b = codes[p] % nb
                if new[b] == -1:
                    nxt[p], head = head, p
                    new[b] = -2
                    if nxt[p] != -1:
                        new[first_bkt] = p
                    first_bkt = b
                else:
                    q = new[b]
                    if q == -2:
                        nxt[p], head = head, p
                    else:
                        nxt[p], nxt[q] = nxt[q], p
                p = following
            before = new
            at, size = next(growth, (0, 0))
        b = code % nb
        nxt.append(-1)
        if before[b] != -1:
            q = before[b]
            if q == -2:
                nxt[i], head = head, i
            else:
                nxt[i], nxt[q] = nxt[q], i
        else:
            nxt[i], head = head, i
            if nxt[i] != -1:
                before[codes[nxt[i]] % nb] = i
            before[b] = -2
    order, p = [], head
    while p != -1:
        order.append(p)
        p = nxt[p]
    return order


def _serialization_id(names: list[str], combined_crc: int) -> str:
    codes = [_std_hash(n.encode()) for n in names]
    h = 0
    for i in _unordered_set_order(codes):
        h = _hash_combine(h, codes[i])
    return f"{h:020d}{combined_crc:020d}"


# ---- writer -------------------------------------------------------------------------------------

def _basename(name: str) -> str:
    """inline_container.cc basename(): after the last separator, before the last dot."""
    base = name[max(name.rfind("/"), name.rfind("\\")) + 1:]
    dot = base.rfind(".")
    return base[:dot] if dot >= 0 else base


# write_record's overloads as pybind11 prints them (the data as str, bytes, a storage or a pointer)
_WRITE_RECORD = [f"(self: torch._C.PyTorchFileWriter, arg0: str, arg1: {kind}, arg2: "
                 "typing.SupportsInt | typing.SupportsIndex) -> None"
                 for kind in ("str", "bytes", "torch.StorageBase",
                              "typing.SupportsInt | typing.SupportsIndex")]


def _data_bytes(data, size: int, what: str, invoked: tuple):
    """The ``size`` bytes ``write_record`` was given, as a buffer (no copy for storages);
    ``invoked``: the call's arguments, for pybind11's refusal of any other data."""
    if data is None:
        return None
    if isinstance(data, str):
        raw = data.encode()
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = memoryview(data).cast("B")
    elif isinstance(data, int) and not isinstance(data, bool):
        torch_warn("write_record(): Passing Storage by data pointer is deprecated and will be an "
                   "error in the future, please pass the Storage object instead.")
        return memoryview((ctypes.c_char * size).from_address(data)).cast("B") if size else b""
    elif hasattr(data, "_data") and hasattr(data, "nbytes"):
        if data._data is None:
            return None             # a storage without bytes (meta): header only, as upstream
        raw = memoryview(data._data)
    else:
        raise incompatible_arguments(what, _WRITE_RECORD, invoked)
    if len(raw) < size:
        raise RuntimeError(f"{what}(): {size} bytes requested from a buffer of {len(raw)}")
    return raw[:size]


class PyTorchFileWriter:
    """caffe2::serialize::PyTorchStreamWriter (torch/csrc/jit/python/init.cpp bindings)."""

    def __init__(self, file_name, compute_crc32: bool = True, storage_alignment: int = 64):
        self._file = None
        self._finalized = True       # until set up: a failed constructor leaves nothing to finish
        if isinstance(file_name, (str, bytes)):     # pybind's std::string overload
            name = os.fsdecode(file_name)
            self._archive = _basename(name)
            if not self._archive:
                raise RuntimeError(f"invalid file name: {name}")
            try:
                self._file = open(name, "wb")
            except OSError:
                parent = name[: max(name.rfind("/"), name.rfind("\\"), 0)]
                if parent and not os.path.isdir(parent):
                    raise RuntimeError(f"Parent directory {parent} does not exist.") from None
                raise RuntimeError(f"File {name} cannot be opened.") from None
            self._sink = self._file.write
            self._skip = lambda n: self._file.seek(n, os.SEEK_CUR)
        else:
            buffer = file_name
            self._archive = "archive"
            self._sink = lambda b: buffer.write(b)
            self._skip = lambda n: buffer.seek(n, os.SEEK_CUR)
        self._prefix = self._archive + "/"
        self._crc = bool(compute_crc32)
        self._alignment = int(storage_alignment)
        self._pos = 0
        self._central = []
        self._written: list[str] = []       # insertion order, for the serialization id
        self._written_set: set[str] = set()
        self._combined_crc = 0
        self._version = _MIN_PRODUCED_VERSION
        self._serialization_id = ""
        self._finalized = False

    # miniz's m_pWrite: every call passes here, so the id sees what upstream's write hook sees
    def _emit(self, data) -> None:
        n = len(data)
        if n == 0:
            return
        self._sink(data)
        self._pos += n
        if n >= 8 and bytes(data[:4]) == _DESCRIPTOR_ID:
            self._combined_crc = _hash_combine(self._combined_crc,
                                               int.from_bytes(data[4:8], "little"))

    def _padding(self, name_len: int, size: int) -> bytes:
        """detail::getPadding: an ``FB`` extra field that puts the data on an aligned offset."""
        cursor = self._pos
        start = cursor + 30 + name_len + 4
        if size >= _U32 or cursor >= _U32:
            start += 4 + (16 if size >= _U32 else 0) + (8 if cursor >= _U32 else 0)
        pad = (-start) % self._alignment
        return b"FB" + struct.pack("<H", pad & 0xFFFF) + b"Z" * pad

    def _write(self, name: str, data, size: int) -> None:
        if self._finalized:
            raise RuntimeError("!finalized_ INTERNAL ASSERT FAILED at "
                               "\"caffe2/serialize/inline_container.cc\", please report a bug to "
                               "PyTorch. ")
        if name in self._written_set:
            raise RuntimeError("false INTERNAL ASSERT FAILED at \"caffe2/serialize/inline_container"
                               ".cc\":792, please report a bug to PyTorch. Tried to serialize file "
                               f"twice: {name}")
        if name == _SERIALIZATION_ID_RECORD and not self._serialization_id:
            return   # copying records from another archive: this writer computes its own id
        full = (self._prefix + name).encode()
        if full.find(b"\0") >= 0:
            full = full[: full.find(b"\0")]     # miniz takes a C string
        user_extra = self._padding(len(full), size)
        ofs = self._pos
        metadata_only = data is None and size > 0
        crc = zlib.crc32(data) if (self._crc and not metadata_only and size) else 0
        flags = 0x0800 | (0x0008 if size else 0)
        big = size >= _U32 or ofs >= _U32
        local_zip64 = b""
        if big:   # at this point miniz's comp_size is still 0
            fields = (struct.pack("<QQ", size, 0) if size >= _U32 else b"") + \
                     (struct.pack("<Q", ofs) if ofs >= _U32 else b"")
            local_zip64 = struct.pack("<HH", 1, len(fields)) + fields
        self._emit(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 0, flags, 0, 0, 0, 0, 0, 0,
                               len(full), len(local_zip64) + len(user_extra)))
        self._emit(full)
        self._emit(local_zip64)
        self._emit(user_extra)
        if metadata_only:
            self._skip(size)        # [Note: write_record_metadata]: reserve, bytes come later
            self._pos += size
        else:
            self._emit(data)
        if size:
            sizes = struct.pack("<QQ", size, size) if big else struct.pack("<II", size, size)
            self._emit(_DESCRIPTOR_ID + struct.pack("<I", crc) + sizes)
        central_zip64 = b""
        if big:
            fields = (struct.pack("<QQ", size, size) if size >= _U32 else b"") + \
                     (struct.pack("<Q", ofs) if ofs >= _U32 else b"")
            central_zip64 = struct.pack("<HH", 1, len(fields)) + fields
        self._central.append(
            struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 0, 0, flags, 0, 0, 0, crc,
                        min(size, _U32), min(size, _U32), len(full), len(central_zip64), 0, 0,
                        0, 0, min(ofs, _U32)) + full + central_zip64)
        self._written.append(name)
        self._written_set.add(name)

    def write_record(self, name: str, data, size: int) -> None:
        self._write(name, _data_bytes(data, size, "write_record", (self, name, data, size)),
                    int(size))

    def write_record_metadata(self, name: str, size: int) -> None:
        self._write(name, None, int(size))

    def set_min_version(self, version: int) -> None:
        self._version = max(int(version), self._version)

    def archive_name(self) -> str:
        return self._archive

    def serialization_id(self) -> str:
        return self._serialization_id

    def get_all_written_records(self) -> set:
        return set(self._written)

    def write_end_of_file(self) -> None:
        if self._finalized:
            raise RuntimeError("!finalized_ INTERNAL ASSERT FAILED at "
                               "\"caffe2/serialize/inline_container.cc\", please report a bug to "
                               "PyTorch. ")
        try:
            if ".data/version" not in self._written_set and "version" not in self._written_set:
                v = f"{self._version}\n".encode()
                self._write(".data/version" if self._version >= 6 else "version", v, len(v))
            if "byteorder" not in self._written_set:
                self._write("byteorder", b"little", 6)
            if _SERIALIZATION_ID_RECORD not in self._written_set:
                self._serialization_id = _serialization_id(self._written, self._combined_crc)
                sid = self._serialization_id.encode()
                self._write(_SERIALIZATION_ID_RECORD, sid, len(sid))
            self._finish_archive()
        finally:
            self._finalized = True
            if self._file is not None:
                self._file.close()

    def _finish_archive(self) -> None:
        """mz_zip_writer_finalize_archive with MZ_ZIP_FLAG_WRITE_ZIP64."""
        cd_ofs, cd = self._pos, b"".join(self._central)
        n = len(self._central)
        self._emit(cd)
        eocd64 = self._pos
        self._emit(struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 0x031E, 0x002D, 0, 0, n, n,
                               len(cd), cd_ofs))
        self._emit(struct.pack("<4sIQI", b"PK\x06\x07", 0, eocd64, 1))
        self._emit(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                               min(len(cd), _U32), min(cd_ofs, _U32), 0))

    def __del__(self):
        # upstream's destructor finishes an unfinished archive
        if not getattr(self, "_finalized", True):
            try:
                self.write_end_of_file()
            except Exception as e:   # a destructor cannot raise; upstream would terminate
                torch_warn(f"PyTorchFileWriter: finishing the archive failed: {e}")


# ---- reader -------------------------------------------------------------------------------------

class _Window(io.RawIOBase):
    """A read-only view of ``f`` from its position at construction (upstream's BufferAdapter):
    archive offsets are relative to where the archive starts."""

    def __init__(self, f):
        self._f = f
        self._start = f.tell()
        f.seek(0, os.SEEK_END)
        self._size = f.tell() - self._start
        f.seek(self._start)
        self._pos = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, pos, whence=os.SEEK_SET):
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._size}[whence]
        if base + pos < 0:
            raise OSError(22, "Invalid argument")
        self._pos = base + pos
        return self._pos

    def readinto(self, buf):
        self._f.seek(self._start + self._pos)
        view = memoryview(buf).cast("B")
        want = min(len(view), max(self._size - self._pos, 0))
        readinto = getattr(self._f, "readinto", None)
        if readinto is not None:
            got = readinto(view[:want]) or 0
        else:
            chunk = self._f.read(want)
            got = len(chunk)
            view[:got] = chunk
        self._pos += got
        return got


def _miniz_error(what: str, err: str) -> RuntimeError:
    return RuntimeError(f"PytorchStreamReader failed {what}: {err}{_MINIZ_HINT}")


class PyTorchFileReader:
    """caffe2::serialize::PyTorchStreamReader (torch/csrc/jit/python/init.cpp bindings)."""

    def __init__(self, file_or_buffer):
        if isinstance(file_or_buffer, (str, bytes)):
            file_or_buffer = os.fsdecode(file_or_buffer)
            try:
                self._owned = open(file_or_buffer, "rb")
            except OSError as e:
                raise RuntimeError(f"open file failed because of errno {e.errno} on fopen: "
                                   f"{os.strerror(e.errno)}, file path: {file_or_buffer}") from None
            self._f = _Window(self._owned)
        else:
            self._owned = None
            self._f = _Window(file_or_buffer)
        if self._f._size > 8:
            self._f.seek(0)
            if self._f.read(8) == b"PYTORCH1":
                raise RuntimeError("File is an unsupported archive format from the preview "
                                   "release.")
        if self._f._size < 22:     # shorter than an end-of-central-directory record
            raise _miniz_error("reading zip archive", "not a ZIP archive")
        try:
            self._zip = zipfile.ZipFile(self._f)
        except zipfile.BadZipFile as e:
            err = ("failed finding central directory" if str(e) == "File is not a zip file" else
                   "invalid header or archive is corrupted")
            raise _miniz_error("reading zip archive", err) from None
        except (OSError, ValueError, struct.error):
            raise _miniz_error("reading zip archive", "invalid header or archive is corrupted") \
                from None
        infos = self._zip.infolist()
        if not infos:
            raise RuntimeError("archive does not contain any files")
        first = infos[0].filename
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self._archive = first[: first.index("/")]
        self._prefix = self._archive + "/"
        self._infos = {}
        for info in infos:
            self._infos.setdefault(info.filename, info)    # miniz finds the first of duplicates
        self._serialization_id = ""
        if self.has_record(_SERIALIZATION_ID_RECORD):
            self._serialization_id = self.get_record(_SERIALIZATION_ID_RECORD).decode()
        if self.has_record(".data/version"):
            raw = self.get_record(".data/version")
        elif self.has_record("version"):
            raw = self.get_record("version")
        else:
            raise RuntimeError("hasRecord(\"version\") INTERNAL ASSERT FAILED at "
                               "\"caffe2/serialize/inline_container.cc\", please report a bug to "
                               "PyTorch. ")
        text = raw.decode(errors="replace")
        try:
            self._version = int(text.strip().split()[0] if text.strip() else "")
        except ValueError:
            raise RuntimeError(f"Couldn't parse the version {text} as Long Long.") from None
        if self._version < _MIN_SUPPORTED_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {self._version}, but the minimum "
                f"supported version for reading is {_MIN_SUPPORTED_VERSION}. Your PyTorch script "
                "module file is too old. Please regenerate it with latest version of PyTorch to "
                "mitigate this issue.")
        if self._version > _MAX_SUPPORTED_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {self._version}, but the maximum "
                f"supported version for reading is {_MAX_SUPPORTED_VERSION}. The version of your "
                "PyTorch installation may be too old, please upgrade PyTorch to latest version to "
                "mitigate this issue.")

    def _info(self, name: str) -> zipfile.ZipInfo:
        info = self._infos.get(self._prefix + name)
        if info is None:
            raise _miniz_error(f"locating file {name}", "file not found")
        return info

    def _data_offset(self, info: zipfile.ZipInfo) -> int:
        self._f.seek(info.header_offset)
        header = self._f.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise _miniz_error(f"reading file {info.filename}", "invalid header or archive is "
                               "corrupted")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        return info.header_offset + 30 + name_len + extra_len

    def _read_into(self, info: zipfile.ZipInfo, out: np.ndarray) -> None:
        if info.compress_type == zipfile.ZIP_STORED:
            self._f.seek(self._data_offset(info))
            view, got = memoryview(out), 0
            while got < len(view):
                n = self._f.readinto(view[got:])
                if not n:
                    raise _miniz_error(f"reading file {info.filename}", "file read failed")
                got += n
        else:   # archives from other zip tools may be compressed; upstream's reader inflates them
            out[:] = np.frombuffer(self._zip.read(info), dtype=np.uint8)

    def _read(self, name: str) -> np.ndarray:
        info = self._info(name)
        out = np.empty(info.file_size, dtype=np.uint8)
        if info.file_size:
            self._read_into(info, out)
        return out

    def get_record(self, name: str) -> bytes:
        return self._read(name).tobytes()

    def has_record(self, name: str) -> bool:
        return (self._prefix + name) in self._infos

    def get_all_records(self) -> list:
        out = []
        for info in self._zip.infolist():
            if not info.filename.startswith(self._prefix):
                raise RuntimeError(f"file in archive is not in a subdirectory {self._prefix}: "
                                   f"{info.filename}")
            out.append(info.filename[len(self._prefix):])
        return out

    def get_record_size(self, name: str) -> int:
        return self._info(name).file_size

    def get_record_offset(self, name: str) -> int:
        return self._data_offset(self._info(name))

    def get_record_header_offset(self, name: str) -> int:
        return self._info(name).header_offset

    def get_record_offset_no_read(self, zipfile_header_offset: int, filename: str, size: int,
                                  storage_alignment: int) -> int:
        """Where a record written by PyTorchStreamWriter at ``zipfile_header_offset`` has its
        data, computed as the writer placed it (detail::getOffset)."""
        name_len = len((self._prefix + filename).encode())
        start = zipfile_header_offset + 30 + name_len + 4
        if size >= _U32 or zipfile_header_offset >= _U32:
            start += 4 + (16 if size >= _U32 else 0) + (8 if zipfile_header_offset >= _U32 else 0)
        return start + (-start) % storage_alignment

    def get_storage_from_record(self, name: str, numel: int, dtype):
        from ..core.construct import make

        # upstream reads the scalar type straight out of the object it is given; a non-dtype
        # (torch/serialization.py passes torch.UntypedStorage) reads as 0, i.e. uint8
        dt = dtype if isinstance(dtype, D.dtype) else D.BY_NAME["uint8"]
        data = self._read(name)
        want = int(numel) * dt.itemsize
        if len(data) != want:
            raise RuntimeError(f"record size ({len(data)} bytes) does not match expected size "
                               f"({want} bytes = {numel} elements * {dt.itemsize} bytes/element) "
                               f"for dtype {dt._cpp_name}")
        storage = storage_class()._wrap(data, want, CPU, False)
        return make(storage, dt, (0,), (1,), 0)

    def serialization_id(self) -> str:
        return self._serialization_id

    def __del__(self):
        owned = getattr(self, "_owned", None)
        if owned is not None:
            owned.close()


TORCH_C = {
    "torch._C.PyTorchFileWriter": PyTorchFileWriter,
    "torch._C.PyTorchFileReader": PyTorchFileReader,
}
