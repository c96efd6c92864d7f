"""TensorBase: a view (dtype, sizes, strides, offset) onto an untyped storage.

Dense (cpu) tensors keep a numpy array viewing their storage bytes (``_np``), made once when
the tensor is made; meta tensors have a storage without bytes and ``_np`` None. Views share the
storage and a version counter. Operator methods are not written here: they are generated from
upstream's binding table (spellings.py) and all reach the door. What is here is what upstream
writes by hand in python_variable.cpp / python_variable_methods.cpp: metadata, autograd fields,
conversions to Python values.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as D
from .device import CPU
from .layouts import contiguous_format, channels_last, channels_last_3d, preserve_format, strided
from .refuse import TorchnativeNotImplementedError
from .size import Size
from .symbolic_sizes import is_symbolic, symbolic_numel
from .grad_mode import TLS as _GRAD_TLS
from .python_classes import TENSOR as _TENSOR_CLASS
from .python_classes import STORAGE as _STORAGE, storage_class as _storage_class, tensor_class
from .storage import StorageBase
from .torch_function import disabled_torch_function_impl
from .typename import TP_NAMES, type_name_of
from .cast import readable
from .conj_neg_bits import CONJ, logical_array
from ..platform.torch_warn import torch_warn

# the dtypes tensor_to_numpy converts (aten_to_numpy_dtype)
_NUMPY_DTYPES = frozenset(D.BY_NAME[n] for n in (
    "float64", "float32", "float16", "complex128", "complex64", "int64", "int32", "int16", "int8",
    "uint8", "uint16", "uint32", "uint64", "bool"))


class _TensorMeta(type):
    """torch._C._TensorMeta: TensorBase's metaclass. As upstream's (THPVariableMetaType_init), a
    subclass must derive from torch.Tensor, and one that defines __torch_dispatch__ but keeps
    Tensor's default __torch_function__ has __torch_function__ disabled (FakeTensor and other
    dispatch subclasses are not seen by __torch_function__)."""

    def __init__(cls, name, bases, namespace, **kwargs):
        super().__init__(name, bases, namespace, **kwargs)
        tensor = tensor_class()
        if tensor is None or cls is tensor:
            return  # TensorBase itself, and torch.Tensor as it is defined
        if tensor not in cls.__mro__:
            raise RuntimeError("Cannot subclass _TensorBase directly")
        if getattr(cls, "__torch_dispatch__", None) is getattr(tensor, "__torch_dispatch__", None):
            return
        impl = getattr(cls, "__torch_function__", None)
        default = getattr(tensor.__torch_function__, "__func__", None)
        if getattr(impl, "__func__", impl) is default:
            cls.__torch_function__ = disabled_torch_function_impl


def contiguous_strides(size) -> tuple:
    strides = []
    acc = 1
    for s in reversed(size):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def dense_run(a: np.ndarray) -> np.ndarray | None:
    """The memory of an array whose elements fill one run in another dimension order than C's
    (numpy's K-order result of strided inputs), as a flat view starting at its first element;
    None when they do not (a copy would be needed, so no storage can be made of it)."""
    if not a.size or min(a.strides, default=0) < 0:
        return None
    c = a.transpose(sorted(range(a.ndim), key=a.strides.__getitem__, reverse=True))
    return c.reshape(-1) if c.flags.c_contiguous else None


def numpy_view(storage, dt, size, stride, offset):
    """The numpy array over ``storage`` that a tensor with this geometry reads and writes."""
    data = storage._data
    if data is None:
        return None
    key = (stride if type(stride) is tuple else tuple(stride), dt)
    geometry = _BYTE_STRIDES.get(key)
    if geometry is None:
        npdt = D.numpy_dtype(dt)  # refuses, by name, a dtype without storage
        if len(_BYTE_STRIDES) > 4096:
            _BYTE_STRIDES.clear()
        item = npdt.itemsize
        geometry = _BYTE_STRIDES[key] = (npdt, item, tuple(s * item for s in key[0]))
    npdt, item, nbytes = geometry
    if 0 in size:
        return np.empty(size, npdt)  # no element to share; the offset may lie past the buffer
    try:
        return np.ndarray(size, npdt, data, offset * item, nbytes)
    except ValueError:
        if len(size) > MAX_DIMS:
            raise too_many_dims(len(size)) from None
        raise


MAX_DIMS = 64  # numpy 2's bound on an array's dimensions (NPY_MAXDIMS)


def too_many_dims(ndim: int) -> Exception:
    return TorchnativeNotImplementedError(
        f"a tensor of {ndim} dimensions",
        f"our tensors are numpy arrays, which hold at most {MAX_DIMS} dimensions")


# (element strides, dtype) -> (numpy dtype, item size, byte strides): every view's array needs
# them, and a model's views repeat a few dozen geometries
_BYTE_STRIDES: dict = {}


_new_tuple = tuple.__new__


def _as_size(sizes: tuple) -> Size:
    """Size(sizes) for a tensor's own sizes: read on every line of model code, so a tuple of
    plain ints (what Size would check and copy element by element) becomes one directly."""
    for s in sizes:
        if type(s) is not int:
            return Size(sizes)
    return _new_tuple(Size, sizes)


def wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def numel_of(t) -> int:
    """``t``'s element count: ``Tensor.numel`` as torch._C's own code asks it (the public method
    asks __torch_function__ first)."""
    n = 1
    for s in t._size:
        if type(s) is not int:
            return symbolic_numel(t)
        n *= s
    return n


def contiguous_of(t) -> bool:
    """``t.is_contiguous()`` (the default format) as torch._C's own code asks it."""
    return _is_contiguous(t._size, t._stride)


def _autograd_not_loaded(t):
    raise RuntimeError("the autograd layer (torchnative.csrc.autograd) is not loaded")


# Installed by the autograd layer when it is imported (core sits below it and cannot import it):
# a view's grad_fn, refreshed if its base changed in place since, and Tensor.retain_grad.
_view_grad_fn = _retain_grad = _autograd_not_loaded


# Installed by an upper layer whose tensors hold no values of their own (functorch's
# BatchedTensor): called as (tensor, "item" | "bool") before a value is read from a tensor
# without storage, it raises that layer's error for its tensors and returns for others.
no_values_error: list = [None]


def register_autograd(view_grad_fn, retain_grad) -> None:
    global _view_grad_fn, _retain_grad
    _view_grad_fn, _retain_grad = view_grad_fn, retain_grad


def _constructors_not_loaded(cls, args, kwargs):
    raise RuntimeError("torchnative.csrc.core.python_data is not loaded: torch.Tensor(...) "
                       "needs it")


# torch.Tensor(...): the binding layer's legacy constructor (python/legacy_ctor.py), installed
# when it is imported
_legacy_new = _constructors_not_loaded


def register_legacy_new(legacy_new) -> None:
    global _legacy_new
    _legacy_new = legacy_new


# slots a tensor gets only when they are used (a leaf's gradient accumulator, hooks, grad_dtype,
# the views a root refreshes after an in-place change, forward-AD tangents, functorch's
# wrappers, a gradient buffer's ownership, a from_numpy tensor's borrowed memory)
LAZY_SLOTS = ("_tn_grad_acc", "_tn_backward_hooks", "_tn_post_acc_hooks", "_tn_grad_dtype",
              "_tn_views", "_tn_fw", "_tn_fw_nonview", "_tn_batched", "_tn_vmap",
              "_tn_functional", "_tn_wrapper", "_tn_borrowed", "_tn_fresh", "_tn_buffer_owned",
              "_tn_wrapped_number", "_tn_sym_numel", "_tn_zero", "_tn_grad_level")


TP_NAMES[_TensorMeta] = "torch._C._TensorMeta"


def set_requires_grad(t, requires_grad: bool = True):
    """AutogradMeta::set_requires_grad, what a factory's ``requires_grad=`` does (its message is
    not ``requires_grad_``'s)."""
    if requires_grad and not (t._dtype.is_floating_point or t._dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return t.requires_grad_(requires_grad)


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If "
    "you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. "
    "See github.com/pytorch/pytorch/pull/30531 for more information.")


class TensorBase(metaclass=_TensorMeta):
    __slots__ = ("_st", "_dtype", "_size", "_stride", "_offset", "_np", "_version_ref",
                 "_requires_grad", "_grad", "_grad_fn", "_view_base", "_retains_grad",
                 "_output_nr", "_wrapped", "_tn_view", "_tn_inference",
                 "_math_bits",  # lazy conjugate/negative bits (core/conj_neg_bits.py)
                 # set only where used, read with a default (LAZY_SLOTS): upstream keeps these
                 # in C++, out of the instance __dict__ a user sees
                 *LAZY_SLOTS, "__weakref__", "__dict__")

    def __new__(*args, **kwargs):
        # a wildcard signature: dynamo's polyfill for Tensor.__new__ must match ours or it
        cls, *args = args
        if cls is TensorBase:
            raise TypeError("Cannot directly construct TensorBase; subclass it and then "
                            "construct that")
        return _legacy_new(cls, args, kwargs)

    def __init__(self, *args, **kwargs):
        pass

    # --- geometry ----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return _as_size(self._size)

    def size(self, dim=None):
        if dim is None:
            return _as_size(self._size)
        return self._size[wrap_dim(dim, len(self._size))] if self._size else \
            _scalar_dim(dim)

    def stride(self, dim=None):
        if dim is None:
            # a new tuple per call, as upstream's: tensors share stride tuples (memoized
            # geometries), and pickle would write a shared one as a back-reference (torch.save's
            # bytes would differ from upstream's)
            return (*self._stride,)
        return self._stride[wrap_dim(dim, len(self._size))] if self._size else \
            _scalar_dim(dim)

    def dim(self) -> int:
        return len(self._size)

    @property
    def ndim(self) -> int:
        return len(self._size)

    numel = numel_of

    def storage_offset(self) -> int:
        return self._offset

    def is_contiguous(self, memory_format=contiguous_format) -> bool:
        if memory_format is contiguous_format or memory_format is preserve_format:
            return _is_contiguous(self._size, self._stride)
        if memory_format is channels_last:
            return len(self._size) == 4 and _is_contiguous(
                _perm(self._size, (0, 2, 3, 1)), _perm(self._stride, (0, 2, 3, 1)))
        if memory_format is channels_last_3d:
            return len(self._size) == 5 and _is_contiguous(
                _perm(self._size, (0, 2, 3, 4, 1)), _perm(self._stride, (0, 2, 3, 4, 1)))
        raise RuntimeError(f"unsupported memory format {memory_format}")

    def _non_overlapping_and_dense(self) -> bool:
        if _is_contiguous(self._size, self._stride):
            return True  # c10: contiguous (empty included) implies non-overlapping and dense
        pairs = sorted((st, sz) for sz, st in zip(self._size, self._stride) if sz != 1)
        expected = 1
        for st, sz in pairs:
            if st != expected:
                return False
            expected *= sz
        return True

    # --- dtype, device, storage --------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def layout(self):
        return strided

    @property
    def _storage(self):
        """The storage. A kernel's fresh result gets its storage object only when something
        asks for it (a view, data_ptr, saving): its numpy array already owns the bytes."""
        st = self._st
        if st is None:
            a = self._np
            flat = a.reshape(-1) if a.flags.c_contiguous else dense_run(a)
            # StorageBase._wrap's fields, set inline: every first view of a result passes here
            cls = _STORAGE[0] if _STORAGE else _storage_class(StorageBase)
            st = self._st = cls.__new__(cls)
            st._data = flat.view(np.uint8)
            st._nbytes = flat.nbytes
            st._device = CPU
            # numpy owns a from_numpy array's bytes: upstream's storage over them is fixed
            st._resizable = not hasattr(self, "_tn_borrowed")
        return st

    @_storage.setter
    def _storage(self, storage) -> None:
        self._st = storage

    @property
    def device(self):
        st = self._st
        return CPU if st is None else st._device

    def get_device(self) -> int:
        return -1

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    is_cuda = is_mps = is_xpu = is_ipu = is_mtia = is_maia = property(lambda self: False)
    is_sparse = is_sparse_csr = is_quantized = is_mkldnn = is_vulkan = is_nested = \
        property(lambda self: False)

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    def is_signed(self) -> bool:
        return self._dtype.is_signed

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._dtype.itemsize

    def data_ptr(self) -> int:
        base = self._storage.data_ptr()
        return base + self._offset * self._dtype.itemsize if base else 0

    def untyped_storage(self):
        return self._storage

    def _storage_impl(self):
        return self._storage

    def storage_type(self):
        import torch

        return getattr(torch, _LEGACY_STORAGE.get(self._dtype._name, "UntypedStorage"))

    @property
    def _cdata(self) -> int:
        return id(self)

    def _is_view(self) -> bool:
        return self._view_base is not None

    @property
    def _base(self):
        return self._view_base

    @property
    def _has_symbolic_sizes_strides(self) -> bool:
        return is_symbolic(self._size) or is_symbolic(self._stride)

    # --- autograd fields -----------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        if self._requires_grad:
            return True
        b = self._view_base  # a view of a base that gained history since (upstream's grad_fn)
        return b is not None and (b._requires_grad or b._grad_fn is not None)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        # python_variable.cpp's setter, stricter than requires_grad_(): a bool only, and no
        # change at all of a non-leaf's flag
        if type(value) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if not self.is_leaf:
            raise RuntimeError("you can only change requires_grad flags of leaf variables." + (
                "" if value else " If you want to use a computed variable in a subgraph that "
                "doesn't require differentiation use var_no_grad = var.detach()."))
        if value and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True):
        if not self.is_leaf and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._tn_inference and not _GRAD_TLS.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        g = self._grad
        if g is None and (self._grad_fn is not None or self._view_base is not None) and \
                not self.is_leaf and not self._retains_grad:
            torch_warn(_NON_LEAF_GRAD)
        return g

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value._dtype != self._dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value._size != self._size:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def grad_fn(self):
        if self._view_base is not None:
            return _view_grad_fn(self)  # refreshed if the base was modified in place since
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        _retain_grad(self)

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        if self._tn_inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_ref[0]

    def _bump_version(self) -> None:
        self._version_ref[0] += 1
        if self._st is not None:
            self._st._tn_writes += 1

    @property
    def data(self):
        # a plain Tensor, as upstream's variable_data(); a subclass gets its own type back from
        # __torch_function__ (the binding layer's getter)
        out = alias(self, _tensor_class())
        out._version_ref = [0]  # changes are invisible to autograd
        return out

    @data.setter
    def data(self, new) -> None:
        if not isinstance(new, TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(new).__name__}")
        self._storage, self._dtype = new._storage, new._dtype
        self._size, self._stride, self._offset = new._size, new._stride, new._offset
        self._np = new._np

    def detach_(self):
        if self._view_base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    # --- Python values -----------------------------------------------------------------------
    def _scalar_value(self, first: bool = False):
        """The one value as a Python number; with ``first``, the first of any number of values
        (``aten::_local_scalar_dense``'s kernel reads the first element; the public ``item`` and
        the number conversions, which check the count and dispatch that operator, are the
        binding layer's)."""
        if self._np is None and no_values_error[0] is not None:
            no_values_error[0](self, "item")
        n = numel_of(self)
        if n != 1 and not (first and n):
            raise RuntimeError("_local_scalar_dense: Empty tensor not supported" if first else
                               f"a Tensor with {n} elements cannot be converted to Scalar")
        if self._np is None:  # upstream's _local_scalar_dense meta kernel refuses so
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        a = logical_array(self) if self._math_bits else self._np
        if n != 1:
            a = a[(slice(0, 1),) * a.ndim]
        a = readable(a, self._dtype)
        v = a.reshape(()).item() if a.ndim else a.item()
        if self._dtype in D.REDUCED_FLOATING or self._dtype.is_floating_point:
            return float(v)
        return v

    item = _scalar_value

    def tolist(self):
        if self._np is None:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        a = readable(logical_array(self), self._dtype)
        if self._dtype.is_floating_point and a.dtype.kind not in "fc":
            return a.astype(np.float64).tolist()
        return a.tolist()

    def numpy(self, *, force: bool = False):
        # tensor_to_numpy's checks in its order: without force the device, grad mode with
        # requires_grad, the conjugate and negative bits; then the copy to the CPU (a meta
        # tensor has no data) and the dtype numpy has (not bfloat16, complex32, float8...)
        if not force:
            if self._np is None:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            if _GRAD_TLS.grad_enabled and self.requires_grad:
                raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                                   "tensor.detach().numpy() instead.")
            if self._math_bits:
                which = ("conjugate", "conj") if self._math_bits & CONJ else ("negative", "neg")
                raise RuntimeError(f"Can't call numpy() on Tensor that has {which[0]} bit set. "
                                   f"Use tensor.resolve_{which[1]}().numpy() instead.")
        elif self._np is None:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if self._dtype not in _NUMPY_DTYPES:
            raise TypeError(f"Got unsupported ScalarType {self._dtype._cpp_name}")
        if self._math_bits:
            return logical_array(self)
        self._storage._tn_aliased = True  # writes through the array are not seen
        return self._np

    # --- conversions ---------------------------------------------------------------------------
    def type(self, dtype=None, non_blocking=False, *, memory_format=None):
        """THPVariable_type: the legacy type string, or this tensor as a dtype, a legacy type
        or its name ("torch.FloatTensor"; "torch.Tensor" is the default dtype's)."""
        if dtype is None:
            return legacy_type_name(self._dtype)
        kw = {} if memory_format is None else {"memory_format": memory_format}
        if isinstance(dtype, D.dtype):
            return self.to(dtype, non_blocking=non_blocking, **kw)
        if isinstance(dtype, type):
            name = "torch.Tensor" if dtype is _TENSOR_CLASS[0] else type_name_of(dtype)
        elif isinstance(dtype, str):
            name = dtype
        else:
            raise TypeError("dtype must be a type, str, or dtype object")
        if name == "torch.Tensor":
            return self.to(D.get_default_dtype(), non_blocking=non_blocking, **kw)
        target = _LEGACY_BY_NAME.get(name)
        if target is None and name.startswith("torch.cuda.") and \
                "torch." + name[len("torch.cuda."):] in _LEGACY_BY_NAME:
            raise TorchnativeNotImplementedError(f"Tensor.type({name!r})",
                                                 "torchnative has no CUDA device")
        if target is None:
            raise ValueError(f"invalid type: '{name}'")
        return self.to(target, non_blocking=non_blocking, **kw)

    def cpu(self, memory_format=preserve_format):
        return self.to("cpu", memory_format=memory_format)

    def cuda(self, *args, **kwargs):
        raise TorchnativeNotImplementedError("Tensor.cuda()", "torchnative has no CUDA device")

    def xpu(self, *args, **kwargs):
        raise TorchnativeNotImplementedError("Tensor.xpu()", "torchnative has no XPU device")

    def _conversion(name):
        def convert(self, memory_format=preserve_format):
            return self.to(D.BY_NAME[name], memory_format=memory_format)

        return convert

    float = _conversion("float32")
    double = _conversion("float64")
    half = _conversion("float16")
    bfloat16 = _conversion("bfloat16")
    int = _conversion("int32")
    long = _conversion("int64")
    short = _conversion("int16")
    char = _conversion("int8")
    byte = _conversion("uint8")
    bool = _conversion("bool")
    cfloat = _conversion("complex64")
    cdouble = _conversion("complex128")
    del _conversion

    # --- subclasses ----------------------------------------------------------------------------
    @staticmethod
    def _make_subclass(cls, data, requires_grad=False, **kwargs):
        # upstream's C++ calls the flag ``require_grad``; dynamo's polyfill (whose signature must
        # match ours) calls it ``requires_grad``. Both spellings are accepted.
        requires_grad = kwargs.pop("require_grad", requires_grad)
        t = alias(data, cls)
        t._requires_grad = False
        if requires_grad:
            t.requires_grad_(True)
        return t

    @staticmethod
    def _make_wrapper_subclass(cls, size, strides=None, storage_offset=None,
                               memory_format=None, dtype=None, layout=strided, device=None,
                               pin_memory=False, requires_grad=False,
                               dispatch_sizes_strides_policy=None, dispatch_device=False,
                               dispatch_layout=False, _extra_dispatch_keys=None,
                               storage_size=None):
        """A tensor of ``cls`` with metadata but no data: __torch_dispatch__ subclasses keep
        their real data elsewhere (upstream: a storage-less TensorImpl with the Python key)."""
        from .device import device as _device
        from .storage import storage_class

        dt = dtype or D.get_default_dtype()
        dev = CPU if device is None else _device(device)
        size = tuple(size)
        stride = tuple(strides) if strides is not None else contiguous_strides(size)
        t = make(storage_class()._wrap(None, 0, dev), dt, size, stride, storage_offset or 0, cls)
        t._tn_wrapper = True
        if requires_grad:
            t.requires_grad_(True)
        return t

    @property
    def _python_dispatch(self) -> bool:
        return bool(getattr(self, "_tn_wrapper", None)) or \
            getattr(type(self), "__torch_dispatch__", None) is not _default_torch_dispatch()

    def _fix_weakref(self) -> None:
        """Upstream re-links the C++ weak reference; Python objects need nothing."""

    def __getstate__(self):
        # upstream's TensorBase is a C type: object.__getstate__ sees only the instance __dict__
        # (None when empty), never the tensor's fields. Tensor.__reduce_ex__ and torch.save
        # depend on it; our fields are all slots, so the __dict__ is the user's alone.
        return dict(self.__dict__) or None

    def _use_count(self) -> int:
        import sys

        return sys.getrefcount(self) - 1

    def const_data_ptr(self) -> int:
        return self.data_ptr()

    @property
    def grad_dtype(self):
        return getattr(self, "_tn_grad_dtype", None)

    @grad_dtype.setter
    def grad_dtype(self, value) -> None:
        self._tn_grad_dtype = value

    @property
    def _backward_hooks(self):
        return getattr(self, "_tn_backward_hooks", None)

    @_backward_hooks.setter
    def _backward_hooks(self, value) -> None:
        self._tn_backward_hooks = value

    @property
    def _post_accumulate_grad_hooks(self):
        return getattr(self, "_tn_post_acc_hooks", None)

    @_post_accumulate_grad_hooks.setter
    def _post_accumulate_grad_hooks(self, value) -> None:
        self._tn_post_acc_hooks = value

    @property
    def name(self):
        return None

    @property
    def volatile(self) -> bool:
        torch_warn("volatile was removed (Variable.volatile is always False)")
        return False

    is_xla = property(lambda self: False)

    def __len__(self) -> int:
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def __hash__(self) -> int:
        return id(self)

    def __delitem__(self, index):
        raise TypeError("'Tensor' object does not support item deletion")

    def _refused_device_move(name):
        def move(self, *args, **kwargs):
            raise TorchnativeNotImplementedError(f"Tensor.{name}()",
                                                 f"torchnative has no {name.upper()} device")

        move.__name__ = name
        return move

    ipu = _refused_device_move("ipu")
    mtia = _refused_device_move("mtia")
    del _refused_device_move

    def _view_func(self, new_base, symint_visitor_fn=None, tensor_visitor_fn=None):
        raise TorchnativeNotImplementedError("Tensor._view_func", "view replay is not implemented")

    _view_func_unsafe = _view_func

    def _rev_view_func_unsafe(self, new_view):
        raise TorchnativeNotImplementedError("Tensor._rev_view_func_unsafe",
                                             "view replay is not implemented")

    def _dtensor__new__(cls, *args, **kwargs):
        raise TorchnativeNotImplementedError("DTensor", "distributed tensors are not implemented")

    _dtensor__new__ = staticmethod(_dtensor__new__)

    # --- element-wise Python callables (cpu only, as upstream) ---------------------------------
    def apply_(self, callable):
        flat = self._np.reshape(-1) if self._np.flags.c_contiguous else None
        if flat is None:
            raise TorchnativeNotImplementedError("Tensor.apply_ on a non-contiguous tensor")
        for i, v in enumerate(flat.tolist()):
            flat[i] = callable(v)
        self._bump_version()
        return self

    def map_(self, tensor, callable):
        other = np.broadcast_to(tensor._np, self._np.shape)
        out = np.vectorize(callable, otypes=[self._np.dtype])(self._np, other)
        self._np[...] = out
        self._bump_version()
        return self

    def map2_(self, x, y, callable):
        a = np.broadcast_to(x._np, self._np.shape)
        b = np.broadcast_to(y._np, self._np.shape)
        self._np[...] = np.vectorize(callable, otypes=[self._np.dtype])(self._np, a, b)
        self._bump_version()
        return self


# upstream's TensorBase is a C type with no __slots__: copyreg._slotnames (Tensor.__deepcopy__
# of a subclass copies every slot it names) must find none of ours. The slots themselves stay.
del TensorBase.__slots__


# --- making tensor objects: every tensor is made by ``make`` so that the fields the door, the
# kernels and autograd read are always set (construct.py builds the rest on these) ---------

def _tensor_class():
    """upstream's torch.Tensor once torch/_tensor.py defined it, else TensorBase."""
    return _TENSOR_CLASS[0] if _TENSOR_CLASS else tensor_class(TensorBase)


def make(storage, dt, size, stride, offset=0, cls=None, version_ref=None, view_base=None,
         np_view=None):
    t = object.__new__(cls or (_TENSOR_CLASS[0] if _TENSOR_CLASS else _tensor_class()))
    t._st = storage
    t._dtype = dt
    t._size = size = size if type(size) is tuple else tuple(size)
    t._stride = stride = stride if type(stride) is tuple else tuple(stride)
    t._offset = offset
    t._np = np_view if np_view is not None else numpy_view(storage, dt, size, stride, offset)
    t._version_ref = version_ref if version_ref is not None else [0]
    t._requires_grad = False
    t._grad = None
    t._grad_fn = None
    t._view_base = view_base
    t._retains_grad = False
    t._output_nr = 0
    t._wrapped = False
    t._tn_view = None  # how a view was made (creation_meta.py)
    t._math_bits = 0
    t._tn_inference = _GRAD_TLS.inference  # an inference tensor (made in inference mode)
    return t


def alias(t: TensorBase, cls=None) -> TensorBase:
    """A new tensor object over the same storage and geometry (detach, .data, subclassing)."""
    batched = getattr(t, "_tn_batched", None)
    if batched is not None:
        # a functorch BatchedTensor holds no storage: its alias presents the same batch
        out = make(None, t._dtype, t._size, t._stride, 0, cls or type(t), t._version_ref,
                   np_view=batched)
        out._np = None
        out._tn_batched = batched
        return out
    # the same geometry reads through the same array object (no array rebuilt per alias: a
    # saved output is one; nothing changes an array's shape or strides in place)
    out = make(t._storage, t._dtype, t._size, t._stride, t._offset, cls or type(t),
               t._version_ref, np_view=t._np)
    if t._tn_inference:
        out._tn_inference = True  # aliases of inference tensors are inference tensors
    if t._math_bits:
        out._math_bits = t._math_bits  # detach of a conj view reads conjugated too
    return out


def _detached_class(t):
    """The class of ``t.data`` / ``t.detach()``: upstream returns a plain Tensor, which a subclass
    keeping ``__torch_function__`` converts back to its own type; a Parameter (torch function
    disabled) gets a plain Tensor. Pickling a Parameter relies on it."""
    from .torch_function import _has_attr_override

    return type(t) if _has_attr_override(t) else _tensor_class()


def _default_torch_dispatch():
    """torch.Tensor's __torch_dispatch__ (torch._C._disabled_torch_dispatch_impl, which the
    dispatch layer above defines)."""
    return getattr(tensor_class(), "__torch_dispatch__", None)


def _scalar_dim(dim: int):
    """size(dim)/stride(dim) of a 0-dim tensor: c10's maybe_wrap_dim without wrapping scalars."""
    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def _is_contiguous(size, stride) -> bool:
    if 0 in size:
        return True  # c10: a tensor without elements is contiguous, whatever its strides
    expected = 1
    for sz, st in zip(reversed(size), reversed(stride)):
        if sz == 0:
            return True
        if sz != 1 and st != expected:
            return False
        expected *= sz
    return True


def _perm(seq, order):
    return tuple(seq[i] for i in order)


def legacy_type_name(dt) -> str:
    """The legacy type string of a cpu tensor of ``dt`` (``Tensor.type()``, the type messages
    name): "torch." + the ScalarType's name + "Tensor"."""
    return f"torch.{dt._cpp_name}Tensor"


# the dtypes of the legacy tensor types (torch.FloatTensor, ...; all_declared_types) and typed
# storage classes (torch.FloatStorage, ...), in upstream's order
LEGACY_DTYPES = ("float64", "float32", "float16", "bfloat16", "uint8", "int8", "int16", "int32",
                 "int64", "bool")
_LEGACY_STORAGE = {n: f"{D.BY_NAME[n]._cpp_name}Storage" for n in LEGACY_DTYPES}
# Tensor.type's strings (options_from_string): the cpu types; "torch.cuda." ones name CUDA's
_LEGACY_BY_NAME = {legacy_type_name(D.BY_NAME[n]): D.BY_NAME[n] for n in LEGACY_DTYPES}

TORCH_C = {
    "torch._C._TensorMeta": _TensorMeta,
    "torch._C.TensorBase": TensorBase,
    "torch._C._TensorBase": TensorBase,
}
