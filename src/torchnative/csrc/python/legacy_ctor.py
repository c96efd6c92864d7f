"""``torch.Tensor(...)``, the typed constructors (``torch.FloatTensor(...)``) and ``x.new(...)``:
upstream's legacy_tensor_generic_ctor_new, its seven signatures parsed by the generic parser in
its order (two of them hidden from its messages), then the signature's own rules:

* nothing, or a device: an empty 1-D tensor;
* a storage: a 1-D tensor over all of it (a typed one of the constructor's dtype);
* a tensor: an alias of it -- the typed constructors and ``new`` want its dtype exactly;
  ``torch.Tensor`` takes any (a device beside it is refused);
* sizes (ints, a torch.Size): an uninitialised tensor of them;
* anything else is data, which must be a sequence: a numpy array of the dtype is shared, not
  copied; other sequences are read as ``torch.tensor`` reads them.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import checked_device, empty
from ..core.python_data import from_numpy, is_sequence, over_storage, tensor_from_data
from ..core.storage import is_storage
from ..core.refuse import TorchnativeNotImplementedError
from ..core.tensor import alias, register_legacy_new
from ..core.typename import typename
from ..ops.spellings_table import PyArg, PySignature
from ..platform.cpp_names import typemeta
from .binding import Signature, parse_signatures


def _signatures() -> list:
    def arg(name, type_, default=None, kwarg_only=False):
        return PyArg(name, type_, default, kwarg_only, "input")

    device = arg("device", "Device?", "None", kwarg_only=True)
    forms = [((device,), False), ((arg("storage", "Storage"),), False),
             ((arg("cdata", "int64_t", kwarg_only=True),), True),
             ((arg("other", "Tensor"),), False), ((arg("other", "Tensor"), device), True),
             ((arg("size", "SymIntArrayRef"), device), False),
             ((arg("data", "PyObject*"), device), False)]
    # (a hidden signature is one the parser's messages leave out, as a deprecated one)
    return [Signature(PySignature("", args, "", None, hidden, True), "new")
            for args, hidden in forms]


_SIGNATURES = _signatures()

BASE, CTOR, NEW = "base", "ctor", "new"  # torch.Tensor, torch.FloatTensor, x.new


def legacy_new(cls, args, kwargs, dtype=None, kind=BASE, device_type="cpu", device=None):
    """The tensor of class ``cls`` the call makes; ``dtype`` the constructor's (the default dtype
    for torch.Tensor), ``device_type`` the device type it belongs to, ``device`` the one ``new``
    allocates on (its tensor's)."""
    dt = dtype or D.get_default_dtype()
    if not kwargs and len(args) == 1 and type(args[0]) in (list, tuple) and args[0] and \
            type(args[0][0]) is float:
        # data whose first value is a float: no size list (the parser's checks read the first
        # element), so the data signature, without the parser's walk
        return alias(_from_sequence(args[0], dt, checked_device(device)), cls)
    which, values = parse_signatures(_SIGNATURES, args, kwargs)
    if which == 0:
        return empty((0,), dt, _device(values[0], device_type, device), cls=cls)
    if which == 1:
        return over_storage(values[0], dt, cls)
    if which == 2:
        raise TorchnativeNotImplementedError(
            "torch.Tensor(cdata=...)", "torchnative tensors are not C++ tensors")
    if which == 3:
        other = values[0]
        if kind != BASE and other.dtype is not dt:
            raise TypeError(f"expected {_options(dt, device_type)} (got "
                            f"{_options(other.dtype, other.device.type)})")
        return alias(other, cls)
    if which == 4:
        if kind == NEW:
            raise RuntimeError("Legacy tensor new of the form tensor.new(tensor, device=device) "
                               "is not supported.  Use torch.as_tensor(...) instead.")
        raise RuntimeError("Legacy tensor constructor of the form torch.Tensor(tensor, "
                           "device=device) is not supported.  Use torch.tensor(...) or "
                           "torch.as_tensor(...) instead.")
    data, dev = values[0], _device(values[1], device_type, device)
    if which == 5 and not (args and isinstance(args[0], (list, tuple)) and
                           type(args[0]).__name__ != "Size"):
        # sizes as ints (or a torch.Size); a list or tuple given alone is data
        return empty(tuple(data), dt, dev, cls=cls)
    if which == 5:
        data = args[0]
    return alias(_from_sequence(data, dt, dev), cls)


def _device(given, device_type, default):
    """check_legacy_ctor_device: a device given must be of the constructor's type."""
    if given is None:
        return checked_device(default)
    dev = checked_device(given)
    if dev.type != device_type:
        raise RuntimeError(f"legacy constructor expects device type: {device_type} but device "
                           f"type: {dev.type} was passed")
    return dev


def _from_sequence(data, dt, dev):
    """legacy_new_from_sequence: data that is a sequence, a numpy array shared where it holds
    ``dt`` already; a storage given with a device reads as its elements."""
    if is_storage(data):
        src_dt = getattr(data, "dtype", D.BY_NAME["uint8"])
        return tensor_from_data(over_storage(data, src_dt, None), dt, dev)
    if isinstance(data, np.ndarray):
        t = from_numpy(data)  # (refuses the arrays torch.from_numpy refuses)
        return t if t.dtype is dt else tensor_from_data(t, dt, dev)
    if not (isinstance(data, (list, tuple, str)) or is_sequence(data)):
        raise TypeError(f"new(): data must be a sequence (got {typename(data)})")
    return tensor_from_data(data, dt, dev)


def _options(dt, device_type) -> str:
    """c10::TensorOptions as upstream prints a tensor's (the dtype by its C++ name)."""
    return (f"TensorOptions(dtype={typemeta(dt._name, dt._cpp_name)}, device={device_type}, "
            "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


register_legacy_new(legacy_new)
