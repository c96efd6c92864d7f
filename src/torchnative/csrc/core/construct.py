"""Making tensors: fresh, from a kernel's numpy result, from numpy, from a Python number.

Every tensor object is made by ``make`` (tensor.py, beside TensorBase, with ``alias``) so that
the fields the door, the kernels and autograd read are always set.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as D
from .device import CPU, device as _device
from .refuse import TorchnativeNotImplementedError
from .grad_mode import TLS as _GRAD
from . import python_classes
from .storage import new_storage, storage_class
from .tensor import (MAX_DIMS, TensorBase, _tensor_class, contiguous_strides, dense_run, make,
                     too_many_dims)
from .tensor import alias  # noqa: F401  (re-exported: the layers above make aliases through here)
from ..platform.torch_warn import torch_warn_once


_CLASS = python_classes.TENSOR
_STORAGE = python_classes.STORAGE


def storage_extent(size, stride) -> int:
    """Elements a geometry reaches from its offset (computeStorageNbytes over the item size):
    0 when a size is 0."""
    return 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0


def from_result(arr: np.ndarray, dt) -> TensorBase:
    """A cpu tensor over a fresh C-contiguous numpy result of ``dt``'s storage type, without a
    copy: the array itself is the tensor's view, and its memory becomes the storage when the
    storage is first asked for (TensorBase._storage). The fields are ``make``'s, set inline:
    every kernel result passes here, and calling ``make`` costs a third more (measured)."""
    shape = arr.shape
    stride = _CONTIGUOUS.get(shape)
    if stride is None:
        stride = contiguous_strides_of(shape)
    t = object.__new__(_CLASS[0] if _CLASS else _tensor_class())
    t._st = None
    t._dtype = dt
    t._size = shape
    t._stride = stride
    t._offset = 0
    t._np = arr
    t._version_ref = [0]
    t._requires_grad = False
    t._grad = None
    t._grad_fn = None
    t._view_base = None
    t._retains_grad = False
    t._output_nr = 0
    t._wrapped = False
    t._tn_view = None
    t._tn_inference = _GRAD.inference
    t._math_bits = 0
    return t


def from_dense_result(arr: np.ndarray, dt) -> TensorBase | None:
    """``from_result`` for a fresh result whose elements fill one run in another dimension order
    (numpy follows its inputs' memory order: a transposed operand's product, a channels-last
    activation): the tensor keeps the array's strides, its storage is that run when first asked
    for. None when the elements do not fill one run."""
    if dense_run(arr) is None:
        return None
    t = from_result(arr, dt)
    t._stride = element_strides(arr)
    return t


def element_strides(arr: np.ndarray) -> tuple:
    """An array's strides in elements, memoized; from_numpy's errors for strides that are
    negative or not a multiple of the item size."""
    item = arr.dtype.itemsize
    byte_strides = arr.strides
    strides = _ELEMENT_STRIDES.get((byte_strides, item))
    if strides is None:
        for s in byte_strides:
            if s < 0:
                raise ValueError("At least one stride in the given numpy array is negative, "
                                 "and tensors with negative strides are not currently "
                                 "supported. (You can probably work around this by making a "
                                 "copy of your array  with array.copy().) ")
            if s % item:
                raise ValueError("given numpy array strides not a multiple of the element "
                                 "byte size. Copy the numpy array to reallocate the memory.")
        strides = tuple(s // item for s in byte_strides)
        if len(_ELEMENT_STRIDES) > 4096:
            _ELEMENT_STRIDES.clear()
        _ELEMENT_STRIDES[(byte_strides, item)] = strides
    return strides


# shape -> c10's contiguous strides (shapes repeat: a model's activations have a few dozen)
_CONTIGUOUS: dict = {}


def contiguous_strides_of(shape: tuple) -> tuple:
    """c10's contiguous strides of ``shape`` (a tuple), memoized."""
    stride = _CONTIGUOUS.get(shape)
    if stride is None:
        if len(_CONTIGUOUS) > 4096:
            _CONTIGUOUS.clear()
        stride = _CONTIGUOUS[shape] = contiguous_strides(shape)
    return stride


def checked_device(dev):
    dev = CPU if dev is None else (dev if isinstance(dev, _device) else _device(dev))
    if dev.type not in ("cpu", "meta"):
        raise TorchnativeNotImplementedError(
            f"tensors on device '{dev}'", "torchnative allocates on cpu and meta only")
    return dev


_COMPLEX32 = D.BY_NAME["complex32"]


def empty(size, dt, dev=CPU, stride=None, cls=None):
    """An uninitialized tensor (contiguous unless ``stride`` is given)."""
    dev = checked_device(dev)
    if dev.type == "cpu":
        npdt = D.numpy_dtype(dt)  # refuses dtypes without cpu storage, by name
    if dt is _COMPLEX32:  # (empty_generic's warning, once)
        torch_warn_once("ComplexHalf support is experimental and many operators don't support "
                        "it yet.")
    size = tuple(size)
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    if len(size) > MAX_DIMS:
        raise too_many_dims(len(size))
    if dev is CPU and cls is None and (stride is None or
                                       tuple(stride) == contiguous_strides_of(size)):
        # a contiguous cpu tensor is a fresh result: its storage is made when first asked for
        return from_result(np.empty(size, npdt), dt)
    stride = contiguous_strides(size) if stride is None else tuple(stride)
    extent = storage_extent(size, stride)
    return make(new_storage(extent * dt.itemsize, dev), dt, size, stride, 0, cls)


def unsupported_numpy(npdt: np.dtype) -> TypeError:
    """upstream's error for an array torch.from_numpy/torch.tensor cannot take, naming the
    array's numpy scalar type (a structured array, ours included -- float8/complex32 storage is
    ours, not an input type -- is numpy.void)."""
    name = "numpy.void" if npdt.fields is not None else f"numpy.{npdt.type.__name__}"
    return TypeError(f"can't convert np.ndarray of type {name}. The only supported types are: "
                     "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                     "uint64, uint32, uint16, uint8, and bool.")


def tensor_from_numpy(arr: np.ndarray, cls=None, writable: bool = False) -> TensorBase:
    """A tensor sharing ``arr``'s memory (torch.from_numpy). ``writable``: a read-only array
    gives a writable tensor all the same, as upstream's from_numpy (which warns: its caller's
    part); otherwise the storage keeps the array's read-only flag."""
    npdt = arr.dtype
    dt = _FROM_NUMPY.get(npdt)
    if dt is None:
        dt = D.dtype_from_numpy(npdt)
        if dt is None:
            if not npdt.isnative:
                raise ValueError("given numpy array has byte order different from the native "
                                 "byte order. Conversion between byte orders is currently not "
                                 "supported.")
            raise unsupported_numpy(npdt)
        _FROM_NUMPY[npdt] = dt
    item = npdt.itemsize
    strides = element_strides(arr)
    flags = arr.flags
    if flags.c_contiguous and flags.writeable and arr.size:
        # the common case (a kernel's result): its bytes are one flat run, viewed directly
        # the tensor reads through its own plain ndarray over the same memory (one the
        # caller cannot reshape in place, whatever ndarray subclass it passed)
        view = arr.view(np.ndarray)
        if cls is None:
            # as a kernel's result: the storage object is made when first asked for, over
            # the same bytes; numpy keeps owning them, so that storage is not resizable
            t = from_result(view, dt)
            t._stride = strides   # numpy's own (a size-1 dimension's may be anything)
            t._tn_borrowed = True
            return t
        # new_storage's fields, set inline (as TensorBase._storage's); the bytes as one flat
        # uint8 run (``reshape(-1)`` of a contiguous array is a view)
        scls = _STORAGE[0] if _STORAGE else storage_class()
        storage = scls.__new__(scls)
        storage._data = data = view.reshape(-1).view(np.uint8)
        storage._nbytes = data.size
        storage._device = CPU
        storage._resizable = False  # numpy owns the memory, as upstream's from_numpy storages
        return make(storage, dt, arr.shape, strides, 0, cls, None, None, view)
    extent = storage_extent(arr.shape, strides) * item
    storage = new_storage(extent, CPU, _byte_view(arr, extent, writable))
    storage._resizable = False  # numpy owns the memory, as upstream's from_numpy storages
    return make(storage, dt, arr.shape, strides, 0, cls)


# numpy dtype -> torch dtype, and (byte strides, item size) -> element strides (checked): the
# arrays handed to from_numpy repeat a few dtypes and geometries
_FROM_NUMPY: dict = {}
_ELEMENT_STRIDES: dict = {}


_NOT_WRITABLE = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
    "This means writing to this tensor will result in undefined behavior. You may want to copy "
    "the array to protect its data or make it writable before converting it to a tensor. This "
    "type of warning will be suppressed for the rest of this program.")


def warn_not_writable() -> None:
    """torch.from_numpy of a read-only array: TORCH_WARN_ONCE (the tensor is writable all the
    same; writes reach the array's memory)."""
    torch_warn_once(_NOT_WRITABLE)


def _byte_view(arr: np.ndarray, extent: int, writable: bool) -> np.ndarray:
    """A 1-D uint8 array over the ``extent`` bytes starting at ``arr``'s first element,
    read-only when ``arr`` is unless ``writable``; it keeps ``arr`` alive, so the memory is
    shared both ways."""
    if extent == 0:
        return np.empty(0, dtype=np.uint8)
    return np.asarray(_Span(arr, extent, writable or arr.flags.writeable))


class _Span:
    """Exposes ``extent`` raw bytes of ``arr``'s memory through the array interface."""

    def __init__(self, arr: np.ndarray, extent: int, writable: bool):
        self._arr = arr
        addr = arr.__array_interface__["data"][0]
        self.__array_interface__ = {"shape": (extent,), "typestr": "|u1",
                                    "data": (addr, not writable), "version": 3}


def scalar_tensor(value, dt=None) -> TensorBase:
    """A 0-dim cpu tensor holding a Python number (dtype from its Python type unless given)."""
    if dt is None:
        dt = D.PYTHON_TYPE_DTYPE[_pytype(value)]
    t = empty((), dt, CPU)
    t._np[()] = value
    return t


def wrapped_number(value) -> TensorBase:
    """A Python number passed where a Tensor is expected: a 0-dim tensor marked as a wrapped
    number, so type promotion treats it like the Python scalar it was."""
    spec = _WRAPPED.get(type(value))
    if spec is not None and (spec[0] is not np.int64 or -_I64_BOUND <= value < _I64_BOUND):
        t = from_result(np.array(value, spec[0]), spec[1])
    else:
        t = scalar_tensor(value)
    t._wrapped = True
    return t


_WRAPPED = {float: (np.float64, D.BY_NAME["float64"]), int: (np.int64, D.BY_NAME["int64"]),
            bool: (np.bool_, D.BY_NAME["bool"])}
_I64_BOUND = 1 << 63


def _pytype(value):
    if isinstance(value, bool):
        return bool
    if isinstance(value, (int, np.integer)):
        return int
    if isinstance(value, (float, np.floating)):
        return float
    if isinstance(value, (complex, np.complexfloating)):
        return complex
    if isinstance(value, np.bool_):
        return bool
    raise TypeError(f"expected a number, got {type(value).__name__}")
