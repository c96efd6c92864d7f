"""DLPack (torch/csrc/utils/dlpack / aten DLConvertor): tensors exchanged with numpy, JAX, CuPy...
through DLPack capsules.

Our tensors hold numpy arrays, so numpy builds and reads the capsules: exporting hands out the
tensor's own array's capsule (the memory is shared, as upstream's), importing wraps the capsule
for ``numpy.from_dlpack`` and makes a tensor over the array it returns. numpy has no DLPack code
for bfloat16 or the float8 types, so those refuse by name.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import tensor_from_numpy
from ..core.device import device as _device
from ..core.refuse import TorchnativeNotImplementedError

KDL_CPU = 1
_NO_DLPACK_CODE = D.FLOAT8 | {D.BY_NAME["bfloat16"], D.BY_NAME["complex32"]}


def dlpack_exchange_api():
    """Upstream returns a capsule of C function pointers; we have none, and say so with None
    (consumers then use ``__dlpack__``), never with a capsule that points nowhere."""
    return None


def _array(tensor, what: str):
    if tensor.device.type != "cpu":
        raise BufferError(f"{what}: only cpu tensors can be exported")
    if tensor.dtype in _NO_DLPACK_CODE:
        raise TorchnativeNotImplementedError(
            f"{what} of a {tensor.dtype} tensor", "numpy, which builds our DLPack capsules, has "
            "no DLPack type code for it")
    tensor._storage._tn_aliased = True  # writes through the capsule's consumer are not seen
    return tensor._np


def _export(tensor, dl_device, copy, max_version, what):
    if dl_device is not None and tuple(dl_device) != (KDL_CPU, 0):
        raise BufferError(f"{what}: cannot export to device {tuple(dl_device)}: only cpu exists")
    kwargs = {} if copy is None else {"copy": copy}
    if max_version is not None:
        kwargs["max_version"] = max_version
    return _array(tensor, what).__dlpack__(**kwargs)


def to_dlpack(tensor, dl_device=None, copy=None):
    """``torch._C._to_dlpack``: an unversioned ("dltensor") capsule."""
    return _export(tensor, dl_device, copy, None, "to_dlpack")


def to_dlpack_versioned(tensor, dl_device=None, copy=None):
    """``torch._C._to_dlpack_versioned``: a DLPack 1.x ("dltensor_versioned") capsule."""
    return _export(tensor, dl_device, copy, (1, 0), "to_dlpack_versioned")


class _Capsule:
    """A capsule presented as a producer, for numpy.from_dlpack to consume."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (KDL_CPU, 0)


_GET_NAME: list = []  # PyCapsule_GetName, bound on first import of a capsule


def _capsule_name(capsule):
    if not _GET_NAME:
        import ctypes

        f = ctypes.pythonapi.PyCapsule_GetName
        f.restype, f.argtypes = ctypes.c_char_p, [ctypes.py_object]
        _GET_NAME.append(f)
    try:
        return _GET_NAME[0](capsule)
    except (ValueError, TypeError):
        return None


def from_dlpack(capsule):
    """``torch._C._from_dlpack``: a tensor over the capsule's memory, which it consumes. The
    tensor is writable and writes reach the producer's memory even where numpy would import it
    read-only (an unversioned capsule, a read-only array), as upstream's."""
    if _capsule_name(capsule) not in (b"dltensor", b"dltensor_versioned"):
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules "
                           "can be consumed only once, so you might have already constructed a "
                           "tensor from it")
    arr = np.from_dlpack(_Capsule(capsule))
    return tensor_from_numpy(arr, writable=True)


def torch_device_to_dl_device(device):
    d = _device(device)
    if d.type != "cpu":
        raise TorchnativeNotImplementedError(f"DLPack device {d}", "only cpu exists here")
    return (KDL_CPU, 0)


TORCH_C = {
    "torch._C._dlpack_exchange_api": dlpack_exchange_api,
    "torch._C._to_dlpack": to_dlpack,
    "torch._C._to_dlpack_versioned": to_dlpack_versioned,
    "torch._C._from_dlpack": from_dlpack,
    "torch._C._torchDeviceToDLDevice": torch_device_to_dl_device,
}
