"""The spellings upstream binds by hand (python_variable_methods.cpp, python_torch_functions_manual.cpp).

torchgen skips these (``manual_cpp_binding`` or its skip list); upstream writes their argument
parsing in C++. Each still reaches its kernel through the door: ``to`` becomes ``_to_copy``,
``contiguous`` becomes ``clone``, ``copy_`` is ``aten::copy_``.
"""

from __future__ import annotations

import numpy as _np

from ..core import dtypes as D
from ..dispatch.call import call, convert_to
from ..dispatch.python_dispatch import wants_python_dispatch
from ..core.layouts import contiguous_format
from ..core.refuse import TorchnativeNotImplementedError
from ..core.device import device as _DEVICE
from ..core.storage import is_storage
from ..core.tensor import TensorBase, set_requires_grad
from ..serialization.storage_io import tensor_from_storage
from ..core.conj_neg_bits import is_conj, is_neg
from ..kernels.queries import is_complex, is_floating_point, is_inference, is_signed
from ..core.construct import checked_device, tensor_from_numpy, unsupported_numpy, \
    warn_not_writable
from ..core.python_data import from_numpy as _from_numpy, tensor_from_data
from ..platform.torch_warn import torch_warn, torch_warn_once
from ..core.typename import typename
from ..ops.spellings_table import PyArg, PySignature
from .binding import Signature, parse_signatures
from .legacy_ctor import NEW, legacy_new


# --- Tensor.to ---------------------------------------------------------------------------------

def _to_signatures() -> list:
    """Tensor.to's (and torch._C._nn._parse_to's) three PythonArgParser signatures."""
    def arg(name, type_, default=None, kwarg_only=False):
        return PyArg(name, type_, default, kwarg_only, "input")

    tail = (arg("non_blocking", "bool", "False"), arg("copy", "bool", "False"),
            arg("memory_format", "MemoryFormat?", "None", kwarg_only=True))
    firsts = ((arg("device", "Device", "None"), arg("dtype", "ScalarType", "None")),
              (arg("dtype", "ScalarType"),), (arg("tensor", "Tensor"),))
    return [Signature(PySignature("", first + tail, "", None, False, True), "to")
            for first in firsts]


_TO_SIGNATURES = _to_signatures()


def parse_to(self, *args, **kwargs):
    """(device, dtype, non_blocking, copy, memory_format) from Tensor.to's signatures: a
    device and/or dtype, a dtype, or a tensor (a Python number is one, as ``to`` allows)."""
    if not kwargs and len(args) == 1:
        # the parser's answer for the common lone arguments, without its walk: a tensor (the
        # third signature) or a device or its string (the first)
        arg = args[0]
        if isinstance(arg, TensorBase):
            return arg.device, arg.dtype, False, False, None
        if type(arg) is str or type(arg) is _DEVICE:
            return (arg if type(arg) is _DEVICE else _DEVICE(arg)), None, False, False, None
    which, values = parse_signatures(_TO_SIGNATURES, args, kwargs)
    if which == 0:
        return tuple(values)
    first, non_blocking, copy, memory_format = values
    if which == 1:
        return None, first, non_blocking, copy, memory_format
    return first.device, first.dtype, non_blocking, copy, memory_format


def to(self, *args, **kwargs):
    if not kwargs and len(args) == 1 and type(args[0]) is _DTYPE:
        # x.to(dtype), what model code writes on every norm: parse_to's answer for it
        return convert_to(self, None, args[0], False, False, None)
    return convert_to(self, *parse_to(self, *args, **kwargs))


_DTYPE = D.dtype


def nn_parse_to(*args, **kwargs):
    """torch._C._nn._parse_to: what nn.Module.to uses to read its arguments."""
    device, dtype, non_blocking, _copy, memory_format = parse_to(None, *args, **kwargs)
    return device, dtype, non_blocking, memory_format


# --- other manual Tensor methods ---------------------------------------------------------------

_IS_CONTIGUOUS = TensorBase.__dict__["is_contiguous"]  # TensorBase's own, before it is wrapped


def contiguous(self, memory_format=contiguous_format):
    if _IS_CONTIGUOUS(self, memory_format):  # the C++ call's question: no mode or override sees it
        return self
    return call("clone", self, memory_format=memory_format)


def copy_(self, src, non_blocking=False):
    if not isinstance(src, TensorBase):
        from ..core.construct import wrapped_number

        src = wrapped_number(src)
    return call("copy_", self, src, non_blocking)


def nonzero(self, *, out=None, as_tuple=False):
    if as_tuple:
        # a 0-dim input answers like its 1-element 1-D view, as upstream does
        idx = call("nonzero", self if self.dim() else self.reshape(1))
        return tuple(idx.unbind(1))
    return call("nonzero.out", self, out=out) if out is not None else call("nonzero", self)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    from ..core.storage import StorageBase

    if source is None:
        return call("set_", self)
    if isinstance(source, TensorBase):
        return call("set_.source_Tensor", self, source)
    if isinstance(source, StorageBase) or hasattr(source, "_untyped_storage"):
        storage = getattr(source, "_untyped_storage", source)
        if size is None:
            return call("set_.source_Storage", self, storage)
        return call("set_.source_Storage_storage_offset", self, storage, storage_offset, size,
                    stride if stride is not None else [])
    raise TypeError("set_() received an invalid combination of arguments")


def new_tensor(self, data, dtype=None, device=None, requires_grad=False, **kwargs):
    from ..core.python_data import tensor_from_data

    if isinstance(data, TensorBase):
        torch_warn("To copy construct from a tensor, it is recommended to use "
                   "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                   "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).")
    t = tensor_from_data(data, dtype or self._dtype, device or self.device)
    if requires_grad:
        set_requires_grad(t)
    return t


def new(self, *args, **kwargs):
    return legacy_new(type(self), args, kwargs, dtype=self._dtype, kind=NEW,
                      device_type=self.device.type, device=self.device)


def _T(self):
    n = self.dim()
    if n != 2 and n != 0:
        torch_warn("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                   "shape is deprecated and it will throw an error in a future release. "
                   "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch.ara"
                   "nge(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
    return call("permute", self, list(range(n - 1, -1, -1)))


def _mT(self):
    if self.dim() < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return call("transpose.int", self, -2, -1)


def _H(self):
    if self.dim() not in (0, 2):
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor.")
    return call("adjoint", self) if self.dim() == 2 else self


def _mH(self):
    if self.dim() < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return call("adjoint", self)


def _real(self):
    if self._dtype.is_complex:
        return call("real", self)
    return self


def _imag(self):
    if not self._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return call("imag", self)


def _set_real(self, value):
    """``x.real = y`` (python_variable.cpp's THPVariable_set_real): copied into the view."""
    call("copy_", _real(self), value)


def _set_imag(self, value):
    call("copy_", _imag(self), value)


# Representation queries upstream answers from the TensorImpl (manual_cpp_binding), never through
# the dispatcher: a __torch_dispatch__ mode does not see them (FakeTensorMode asks them inside
# its own dispatch, and would recurse if it did).
# (the same answers the operators give: kernels/queries.py holds them once)
_QUERIES = {"is_conj": is_conj, "is_neg": is_neg, "is_inference": is_inference,
            "is_floating_point": is_floating_point, "is_complex": is_complex}


def _with_torch_function(fn, name: str, method: bool):
    """Manual spellings honour __torch_function__ like generated ones (upstream: C++ does)."""
    from .binding import torch_function_or

    return torch_function_or(fn, name, method)


TENSOR_METHODS = {
    "to": to, "contiguous": contiguous, "copy_": copy_, "nonzero": nonzero, "set_": set_,
    "new_tensor": new_tensor, "new": new,
    "T": property(_T), "mT": property(_mT), "H": property(_H), "mH": property(_mH),
    "real": property(_real, _set_real), "imag": property(_imag, _set_imag),
    **_QUERIES, "is_signed": is_signed,
}


# --- manual torch.* functions ------------------------------------------------------------------

def _dtype_argument(function: str, dtype):
    """A ``dtype`` argument as upstream's parser reads one: a torch.dtype, or the Python type
    int, float, bool or complex standing for its dtype; anything else refused by name."""
    if dtype is None or isinstance(dtype, D.dtype):
        return dtype
    if isinstance(dtype, type) and dtype in D.PYTHON_TYPE_DTYPE:
        return D.PYTHON_TYPE_DTYPE[dtype]
    raise TypeError(f"{function}(): argument 'dtype' must be torch.dtype, not "
                    f"{typename(dtype)}")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    dtype = _dtype_argument("tensor", dtype)
    if isinstance(data, TensorBase):
        torch_warn("To copy construct from a tensor, it is recommended to use "
                   "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                   "requires_grad_(True), rather than torch.tensor(sourceTensor).")
    if isinstance(data, _np.ndarray) and (device is None or checked_device(device).type == "cpu"):
        # upstream: the array's own tensor (torch.from_numpy's refusals), copied by ``to``,
        # which keeps a dense array's strides
        t = tensor_from_numpy(data)
        t = call("to.dtype", t, dtype if dtype is not None else t._dtype, False, True)
    else:
        t = tensor_from_data(data, dtype, device)
    # upstream hands the new tensor to the dispatcher once (lift_fresh), so modes see it
    t = call("lift_fresh", t)
    if requires_grad:
        set_requires_grad(t)
    return t


def as_tensor(data, dtype=None, device=None):
    dtype = _dtype_argument("as_tensor", dtype)
    if isinstance(data, TensorBase):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if is_storage(data):   # safetensors reads mmapped files this way
        return tensor_from_storage(data, dtype, device)
    if isinstance(data, _np.ndarray) and D.dtype_from_numpy(data.dtype) is not None and \
            data.dtype.fields is None:
        t = _from_numpy(data)
        return t.to(device=device, dtype=dtype) if (dtype or device) else t
    return tensor_from_data(data, dtype, device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """torch.asarray as upstream's tensor_new.cpp writes it: a tensor, a numpy array (shared) or
    scalar (copied), a buffer (read as ``dtype``), else a sequence (copied); ``copy=False``
    refuses what cannot be aliased; requires_grad defaults to the tensor's own."""
    dtype = _dtype_argument("asarray", dtype)
    force_copy, force_alias, read_only = bool(copy), copy is False, False
    tensor = obj if isinstance(obj, TensorBase) else None
    wants_grad = requires_grad if requires_grad is not None else \
        (tensor is not None and tensor.requires_grad)
    if wants_grad and requires_grad is None:
        torch_warn_once("torch.asarray: unspecified requires_grad now defaults to "
                        "obj.requires_grad instead of False. Pass requires_grad=False explicitly "
                        "to get the old behavior and silence this warning.")
    if tensor is None and isinstance(obj, (_np.ndarray, _np.generic)):
        arr = obj
        if not isinstance(obj, _np.ndarray):
            if force_alias:
                raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or "
                                   "transform it in a ndarray. ")
            arr = _np.asarray(obj)
        tensor = tensor_from_numpy(arr)
        read_only = not arr.flags.writeable
        if arr.ndim == 0:  # a scalar (a 0-d array too): its own storage, copied now
            tensor, force_copy = call("clone", tensor), False
    if tensor is None and type(obj).__name__ == "PyCapsule":
        raise TorchnativeNotImplementedError("torch.asarray(DLPack capsule)",
                                             "torch.from_dlpack reads capsules")
    if tensor is None and _has_buffer(obj):
        tensor = frombuffer(obj, dtype=dtype or D.get_default_dtype(), requires_grad=wants_grad)
    if tensor is None:
        if force_alias:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        if is_storage(obj):  # internal_new_from_data: a tensor over the storage's bytes
            return set_requires_grad(tensor_from_storage(obj, dtype, device), wants_grad)
        tensor = tensor_from_data(obj, dtype, device)
        return set_requires_grad(tensor, wants_grad)
    dev = checked_device(device) if device is not None else None
    wrong_device = dev is not None and dev != tensor.device
    wrong_dtype = dtype is not None and dtype is not tensor.dtype
    if force_copy or (copy is None and (wrong_device or wrong_dtype)):
        if wrong_device or wrong_dtype:
            tensor = tensor.to(dev or tensor.device, dtype or tensor.dtype, False, force_copy)
        else:
            tensor = call("clone", tensor)
    else:
        if wrong_device:
            raise ValueError(f"can't alias tensor from device '{tensor.device}' to '{dev}'.")
        if wrong_dtype:
            raise ValueError(f"can't alias tensor with dtype '{tensor.dtype._cpp_name}' into "
                             f"dtype '{dtype._cpp_name}'.")
        if read_only:
            warn_not_writable()
    if not tensor.is_leaf and not wants_grad:
        return tensor.detach()
    return set_requires_grad(tensor, wants_grad)


def _has_buffer(obj) -> bool:
    """PyObject_CheckBuffer."""
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def from_numpy(arr):
    if isinstance(arr, _np.ndarray):
        if arr.dtype.fields is not None:
            raise unsupported_numpy(arr.dtype)
        if not arr.flags.writeable:
            warn_not_writable()
            return tensor_from_numpy(arr, writable=True)
        return tensor_from_numpy(arr)
    return _from_numpy(arr)  # refuses what is not an array


_READ_ONLY_BUFFER = (
    "The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
    "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
    "You may want to copy the buffer to protect its data or make it writable before converting "
    "it to a tensor. This type of warning will be suppressed for the rest of this program.")


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """tensor_frombuffer: the buffer's bytes from ``offset`` as ``count`` elements of ``dtype``
    (all that fit when negative), shared; its checks and messages."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if view.readonly:
        torch_warn_once(_READ_ONLY_BUFFER)
    size, elsize = view.nbytes, dtype.itemsize
    if not (size > 0 and count != 0):
        raise ValueError(f"both buffer length ({size}) and count ({count}) must not be 0")
    if not 0 <= offset < size:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({size} bytes) minus 1")
    if not (count > 0 or (size - offset) % elsize == 0):
        raise ValueError(f"buffer length ({size - offset} bytes) after offset ({offset} bytes) "
                         f"must be a multiple of element size ({elsize})")
    n = count if count > 0 else (size - offset) // elsize
    if offset + n * elsize > size:
        raise ValueError(f"requested buffer length ({n} * {elsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({size} bytes)")
    raw = _np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view,
                         dtype=_np.uint8, count=n * elsize, offset=offset)
    t = _from_numpy(raw.view(D.numpy_dtype(dtype)))
    return set_requires_grad(t, requires_grad)


def torch_nonzero(input, *, out=None, as_tuple=False):
    return nonzero(input, out=out, as_tuple=as_tuple)


def torch_range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    torch_warn("torch.range is deprecated and will be removed in a future release because "
               "its behavior is inconsistent with Python's range builtin. Instead, use "
               "torch.arange, which produces values in [start, end).")
    kwargs = {"dtype": dtype, "layout": layout, "device": device, "pin_memory": pin_memory}
    t = call("range.out", start, end, step, out=out) if out is not None else \
        call("range.step", start, end, step, **kwargs)
    if requires_grad:
        set_requires_grad(t)
    return t


def numel(input) -> int:
    return input.numel()


def get_device(input) -> int:
    return input.get_device()


def _refuse(name: str, why: str):
    def refused(*args, **kwargs):
        raise TorchnativeNotImplementedError(name, why)

    refused.__name__ = name.rsplit(".", 1)[-1]
    return refused


_SPARSE = "sparse tensors are not implemented in torchnative"

TORCH_FUNCTIONS = {
    "tensor": tensor, "as_tensor": as_tensor, "asarray": asarray, "from_numpy": from_numpy,
    "frombuffer": frombuffer, "nonzero": torch_nonzero, "numel": numel,
    "get_device": get_device, "range": torch_range, **_QUERIES,
    **{n: _refuse(f"torch.{n}", _SPARSE) for n in (
        "sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor",
        "sparse_bsc_tensor", "sparse_compressed_tensor", "spmm", "dsmm", "hsmm", "saddmm")},
}

def _getter_with_torch_function(fget, name: str):
    """A Tensor property getter that tensor-likes and modes see first, as upstream's
    handle_torch_function_getter (the function they receive is ``Tensor.<name>.__get__``)."""
    from ..core.torch_function import _OVERRIDE_BY_TYPE, TLS as tf_state, self_asks

    if name == "shape" and fget is TensorBase.shape.fget:
        from ..core.tensor import _as_size

        def get_shape(self):  # get's steps, with TensorBase.shape's body inline (the most read)
            if (tf_state.stack or _OVERRIDE_BY_TYPE.get(type(self)) is not False) and \
                    self_asks(self, 1):
                import torch
                from torch.overrides import handle_torch_function

                return handle_torch_function(torch.Tensor.shape.__get__, (self,), self)
            return _as_size(self._size)

        return get_shape

    def get(self):
        # a plain tensor under no mode (the type's answer is cached False) takes the getter
        # directly: these properties are read on every line of model code
        if (tf_state.stack or _OVERRIDE_BY_TYPE.get(type(self)) is not False) and \
                self_asks(self, 1):
            import torch
            from torch.overrides import handle_torch_function

            return handle_torch_function(getattr(torch.Tensor, name).__get__, (self,), self)
        return fget(self)

    return get


def _data(self):
    """Tensor.data: a plain alias with its own version counter. Where a dispatch mode or a
    __torch_dispatch__ subclass is in play, upstream's shallow_copy_and_detach asks Python for
    ``aten::detach`` instead (a FakeTensor's data is a FakeTensor)."""
    if not wants_python_dispatch((self,), None):
        return _TENSOR_DATA.fget(self)
    out = call("detach", self)
    out._version_ref = [0]
    return out


_TENSOR_DATA = TensorBase.__dict__["data"]


from .getitem import TENSOR_METHODS as _INDEXING, getitem_entry as _getitem_entry  # noqa: E402

TENSOR_METHODS.update(_INDEXING)
from .subclassing import TENSOR_METHODS as _SUBCLASSING  # noqa: E402

TENSOR_METHODS.update(_SUBCLASSING)
from .python_numbers import TENSOR_METHODS as _NUMBERS  # noqa: E402


def _method_with_torch_function(fn, name: str, parse=None):
    """A hand-written Tensor method that asks __torch_function__ about ``self`` first, as
    python_variable_methods.cpp's do (``check_has_torch_function(self)``; a mode receives
    ``Tensor.<name>``), unless torch._C's own code calls it. ``parse(args, kwargs)``: the
    method's PythonArgParser, where upstream parses before it asks."""
    from ..core.torch_function import _OVERRIDE_BY_TYPE, TLS as tf_state, self_asks

    overrides = _OVERRIDE_BY_TYPE.get

    def method(self, *args, **kwargs):
        if parse is not None:
            parse(args, kwargs)
        # a plain tensor under no mode (the type's answer is cached False) takes the method
        # directly: kernels and model code ask sizes all the time
        if (tf_state.stack or overrides(type(self)) is not False) and \
                self_asks(self, 1):
            import torch
            from torch.overrides import handle_torch_function

            return handle_torch_function(getattr(torch.Tensor, name), (self,), self, *args,
                                         **kwargs)
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


def _arg_parser(name: str, *params: tuple):
    """upstream's PythonArgParser for a hand-written method's one signature, ``params`` as
    (type, name, default): the generated bindings' own parser (binding.Signature) and messages."""
    from ..ops.spellings_table import PyArg, PySignature
    from .binding import Signature, _parse_any

    text = f"{name}({', '.join(f'{t} {n}' + ('' if d is None else f'={d}') for t, n, d in params)})"
    sig = Signature(PySignature(text=text, args=tuple(PyArg(n, t, d, False, "input")
                                                      for t, n, d in params),
                                base=name, outplace=None, deprecated=False, method=True), name)
    return lambda args, kwargs: _parse_any([sig], args, kwargs)


def _dim_parser(name: str):
    """``size``/``stride``'s parser (``(int64_t? dim=None)``), asked only where the call is not
    already a plain int or nothing: those are the hot calls, and the parser accepts them."""
    full = _arg_parser(name, ("int64_t?", "dim", "None"))

    def parse(args, kwargs):
        if kwargs or len(args) > 1 or args and type(args[0]) is not int and args[0] is not None:
            full(args, kwargs)
    return parse


_PARSERS = {"requires_grad_": _arg_parser("requires_grad_", ("bool", "requires_grad", "True")),
            "size": _dim_parser("size"), "stride": _dim_parser("stride")}

# TensorBase's hand-written methods and the number conversions: upstream's
# python_variable_methods.cpp asks __torch_function__ before each (``ndimension``/``nelement`` as
# ``dim``/``numel``, which they are; each its own object, as upstream's)
_HAND_WRITTEN = (
    "apply_", "bfloat16", "bool", "byte", "cdouble", "cfloat", "char", "const_data_ptr", "cpu",
    "cuda", "data_ptr", "detach_", "dim", "double", "element_size", "float", "get_device", "half",
    "int", "ipu", "is_contiguous", "long", "map2_", "map_", "mtia", "numel", "numpy",
    "requires_grad_", "retain_grad", "short", "size", "storage_offset", "stride", "tolist", "type",
    "untyped_storage", "xpu")
_SAME_AS = {"ndimension": "dim", "nelement": "numel"}


def _setter_with_torch_function(fset, name: str):
    """A Tensor property setter that tensor-likes and modes see first, as upstream's
    handle_torch_function_setter (the function they receive is ``Tensor.<name>.__set__``)."""
    from ..core.torch_function import _OVERRIDE_BY_TYPE, TLS as tf_state, self_asks

    def set_(self, value):
        if (tf_state.stack or _OVERRIDE_BY_TYPE.get(type(self)) is not False) and \
                self_asks(self, 1):
            import torch
            from torch.overrides import handle_torch_function

            handle_torch_function(getattr(torch.Tensor, name).__set__, (self, value), self, value)
            return
        fset(self, value)

    return set_


def _not_writable(name: str):
    """Setting or deleting a read-only attribute: CPython's error for upstream's getset
    descriptors."""
    def refuse(self, value=None):
        raise AttributeError(f"attribute '{name}' of 'torch._C.TensorBase' objects is not "
                             "writable")

    return refuse


def _set_volatile(self, value):
    torch_warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.")


def _delete_data(self):
    raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")


TENSOR_METHODS["data"] = property(_getter_with_torch_function(_data, "data"),
                                  _setter_with_torch_function(_TENSOR_DATA.fset, "data"),
                                  _delete_data)
# The getters upstream's python_variable.cpp routes through handle_torch_function_getter (all
# its properties but the two raw slots _grad and _grad_fn, which our autograd writes directly)
_GETTERS_WITH_TORCH_FUNCTION = (
    "T", "H", "mT", "mH", "real", "imag", "grad", "grad_fn", "grad_dtype", "requires_grad",
    "is_leaf", "retains_grad", "output_nr", "_base", "_version", "_cdata", "_backward_hooks",
    "_post_accumulate_grad_hooks", "name", "volatile", "shape", "dtype", "device", "layout",
    "ndim", "nbytes", "itemsize", "is_cpu", "is_cuda", "is_ipu", "is_maia", "is_meta",
    "is_mkldnn", "is_mps", "is_mtia", "is_nested", "is_quantized", "is_sparse", "is_sparse_csr",
    "is_vulkan", "is_xla", "is_xpu")
# the setters it routes through handle_torch_function_setter (real's and imag's do not ask)
_SETTERS_WITH_TORCH_FUNCTION = frozenset((
    "grad", "requires_grad", "_backward_hooks", "_post_accumulate_grad_hooks", "grad_dtype",
    "volatile"))
for _name in _GETTERS_WITH_TORCH_FUNCTION:
    _prop = TENSOR_METHODS.get(_name) or getattr(TensorBase, _name)
    _fset = _set_volatile if _name == "volatile" else _prop.fset
    if _fset is None:
        _fset = _not_writable(_name)
    elif _name in _SETTERS_WITH_TORCH_FUNCTION:
        _fset = _setter_with_torch_function(_fset, _name)
    TENSOR_METHODS[_name] = property(_getter_with_torch_function(_prop.fget, _name), _fset,
                                     _prop.fdel or (_fset if _prop.fset is None else None))
TENSOR_METHODS = {k: v if isinstance(v, property) or k in _SUBCLASSING
                  else _with_torch_function(v, k, True) for k, v in TENSOR_METHODS.items()}
TENSOR_METHODS.update({k: _method_with_torch_function(TensorBase.__dict__[k], k, _PARSERS.get(k))
                       for k in _HAND_WRITTEN})
TENSOR_METHODS.update({k: _method_with_torch_function(TensorBase.__dict__[v], v)
                       for k, v in _SAME_AS.items()})
TENSOR_METHODS.update({k: _method_with_torch_function(v, k) for k, v in _NUMBERS.items()})
# indexing a plain tensor by ints and slices asks no __torch_function__ question it knows the
# answer to (getitem.getitem_entry)
TENSOR_METHODS["__getitem__"] = _getitem_entry(TENSOR_METHODS["__getitem__"])
# from_numpy and frombuffer take no tensor and check no mode upstream (their C++ bindings parse
# without handle_torch_function): a TorchFunctionMode does not see them
_NO_TORCH_FUNCTION = frozenset(("from_numpy", "frombuffer"))
TORCH_FUNCTIONS = {k: v if k in _NO_TORCH_FUNCTION else _with_torch_function(v, k, False)
                   for k, v in TORCH_FUNCTIONS.items()}

TORCH_C = {"torch._C._nn._parse_to": nn_parse_to}
