"""Tensor.__getitem__ / __setitem__ as python_variable_indexing.cpp does them.

Basic indices (ints, slices, None, Ellipsis, bools) become views through the door's ``select``,
``slice`` and ``unsqueeze``; tensors and sequences become advanced indices for ``aten::index``
(reading) or ``aten::index_put_`` (writing). Writes into a basic view use ``copy_``/``fill_``.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from ..core.python_classes import PLAIN as _PLAIN, plain_tensor_types
from ..core.python_data import is_sequence
from ..core.tensor import TensorBase, legacy_type_name
from ..core.typename import typename
from ..platform.torch_warn import torch_warn
from .binding import is_symbolic
from ..core.torch_function import TLS as _TF, _OVERRIDE_BY_TYPE, entry_point
from ..dispatch.call import call as _call, op as _op
from ..dispatch.door import aten_dispatch as _door


def _is_int_index(obj) -> bool:
    if isinstance(obj, bool):
        return False
    if isinstance(obj, numbers.Integral):
        return True
    return (isinstance(obj, TensorBase) and obj.dim() == 0 and not obj.dtype.is_floating_point
            and not obj.dtype.is_complex and obj.dtype.__reduce__() != "bool")


def _as_index_tensor(obj):
    """A list or array index as upstream's indexing_tensor_from_data makes it: bool or uint8 when
    that is what the data holds, else int64 (so ``x[[]]`` and ``x[[1.0, 2.9]]`` index)."""
    if isinstance(obj, TensorBase):
        return obj
    from ..core.python_data import tensor_from_data
    from ..kernels.support.common import INT64

    t = tensor_from_data(obj, None, None)
    if t.dtype.__reduce__() in ("bool", "uint8"):
        return t
    return tensor_from_data(obj, INT64, None)


_INT64_MAX = (1 << 63) - 1


def _bad_step(step: int) -> str:
    # a zero step is refused where CPython unpacks the slice, a negative one by torch
    return "slice step cannot be zero" if step == 0 else "step must be greater than zero"


def _bound(b):
    return b if type(b).__name__ == "SymInt" else int(b)  # int() would specialize a SymInt


def _known_whole(start, stop, length) -> bool:
    """start == 0 and length <= stop, known without adding a guard (a symbolic size is not
    known to fit below INT64_MAX, so a trace keeps that slice, as upstream's)."""
    if type(start) is int and type(stop) is int and type(length) is int:
        return start == 0 and length <= stop
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    return statically_known_true(start == 0) and statically_known_true(length <= stop)


def _is_bool_scalar(obj) -> bool:
    """True/False, or a 0-dim bool tensor: they add a dim of size 1 (True) or 0 (False)."""
    return isinstance(obj, bool) or (isinstance(obj, TensorBase) and obj.dim() == 0 and
                                     obj.dtype.__reduce__() == "bool")


def _count_specified_dims(index: tuple) -> int:
    n = 0
    for obj in index:
        tp = type(obj)
        if tp is slice or tp is int:  # the common indices, decided by their type alone
            n += 1
            continue
        if obj is None or obj is Ellipsis or _is_bool_scalar(obj):
            continue
        if isinstance(obj, TensorBase) and obj.dtype.__reduce__() in ("bool", "uint8"):
            n += obj.dim()
        else:
            n += 1
    return n


_NON_TUPLE = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will "
              "be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 "
              "this will be interpreted as tensor index, x[torch.tensor(seq)], which will result "
              "either in an error or a different result")


def _is_pysequence(obj) -> bool:
    """PySequence_Check: strings too (``is_sequence`` leaves them to torch.tensor's own rule)."""
    return isinstance(obj, str) or is_sequence(obj)


def _wrap_index(index) -> tuple:
    if isinstance(index, tuple):
        return index
    if _treat_sequence_as_tuple(index):
        return tuple(index)  # legacy numpy-style: a list of index objects acts like a tuple
    return (index,)


def _treat_sequence_as_tuple(index) -> bool:
    """upstream's treatSequenceAsTuple (NumPy's heuristic, with its deprecation warning): a
    short sequence (not a tensor or an array) holding a tensor, a sequence, a slice, Ellipsis or
    None is a tuple of indices."""
    if isinstance(index, (TensorBase, np.ndarray)) or not _is_pysequence(index):
        return False
    try:
        n = len(index)
    except Exception:
        return False
    if n >= 32:
        return False
    for i in range(n):
        try:
            obj = index[i]
        except Exception:
            return False
        if isinstance(obj, (TensorBase, slice)) or _is_pysequence(obj) or obj is None or \
                obj is Ellipsis:
            torch_warn(_NON_TUPLE)
            return True
    return False


def apply_slicing(self, index: tuple):
    """The basic-indexing view of ``self`` and the advanced indices left (one per dim)."""
    result = self
    dim = 0
    advanced: list = []
    have_advanced = False
    specified = _count_specified_dims(index)
    plain = _PLAIN[0] if _PLAIN else plain_tensor_types()
    ndim = len(self._size) if type(self) in plain else self.dim()
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    for obj in index:
        # slices, Ellipsis and None first: no int index is one of them, and they are the
        # indices model code writes (x[..., :half])
        if type(obj) is slice:
            start, stop, step = obj.start, obj.stop, obj.step
            step = 1 if step is None else int(step)
            if step <= 0:
                raise ValueError(_bad_step(step))
            # as upstream's applySlicing: None bounds become 0 and INT64_MAX, and a slice that
            # keeps the whole dim is not dispatched
            start = 0 if start is None else start if type(start) is int else _bound(start)
            stop = _INT64_MAX if stop is None else stop if type(stop) is int else _bound(stop)
            whole = False
            if step == 1 and (type(start) is not int or start == 0):
                length = (result._size if type(result) in plain else result.shape)[dim]
                # _known_whole's answer for plain ints, without its call
                whole = length <= stop if type(stop) is int and type(length) is int and \
                    type(start) is int else _known_whole(start, stop, length)
            if not whole:
                result = _door(_SLICE[0] or _slice_op(), (result, dim, start, stop, step), {})
            advanced.append(None)
            dim += 1
        elif obj is Ellipsis:
            skip = ndim - specified
            advanced.extend([None] * skip)
            dim += skip
        elif obj is None:
            result = _call("unsqueeze", result, dim)
            advanced.append(None)
            dim += 1
        elif _is_int_index(obj):
            result = _select(result, dim, int(obj))
        elif _is_bool_scalar(obj):
            # upstream: unsqueeze; False then selects nothing there (an empty long index)
            result = _call("unsqueeze", result, dim)
            if not bool(obj):
                from ..kernels.support.common import INT64
                from ..core.construct import empty

                advanced.append(empty((0,), INT64, result.device))
                have_advanced = True
            else:
                advanced.append(None)
            dim += 1
        elif isinstance(obj, TensorBase) or _is_pysequence(obj) or hasattr(obj, "__array__"):
            t = _as_index_tensor(obj)
            kind = t.dtype.__reduce__()
            if kind in ("bool", "uint8"):
                # a mask covers as many dims as it has
                advanced.append(t)
                dim += max(t.dim(), 1) if t.dim() else 1
                if t.dim() == 0:
                    result = _call("unsqueeze", result, dim - 1)
            else:
                advanced.append(t)
                dim += 1
            have_advanced = True
        else:
            try:  # PyNumber_Index: any object with __index__ is an int index
                i = operator.index(obj)
            except TypeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long "
                                 "or byte Variables are valid indices (got "
                                 f"{type(obj).__name__})") from None
            result = _select(result, dim, i)
    return result, (advanced if have_advanced else None)


def _select(result, dim: int, i: int):
    """An int index: a bounds-checked select."""
    size = result.shape[dim]
    if i < -size or i >= size:
        raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
    return _call("select.int", result, dim, i)


# slice.Tensor and select.int, looked up on first use
_SLICE: list = [None]
_SELECT: list = [None]


def _slice_op():
    _SLICE[0] = _op("slice.Tensor")
    return _SLICE[0]


def _select_op():
    _SELECT[0] = _op("select.int")
    return _SELECT[0]


def _index_overrides(index) -> bool:
    """Might ``index`` hand the call to a __torch_function__? False only where every object in it
    is of a type already known not to (ints, slices, None, Ellipsis, plain tensors)."""
    known = _OVERRIDE_BY_TYPE
    if type(index) is tuple:
        for x in index:
            if known.get(type(x)) is not False:
                return True
        return False
    return known.get(type(index)) is not False


def getitem_entry(with_torch_function):
    """Tensor.__getitem__: a plain tensor indexed by ints, slices, None and Ellipsis under no
    torch function mode goes straight to ``getitem``; anything else (a mode, a tensor-like, an
    object not yet classified) goes through ``with_torch_function``, which asks as upstream's
    parser does."""
    def __getitem__(self, index):
        if _TF.stack or _OVERRIDE_BY_TYPE.get(type(self)) is not False or \
                type(index) is not int and _index_overrides(index):
            return with_torch_function(self, index)
        return getitem(self, index)  # (an int overrides nothing)

    __getitem__.__qualname__ = "__getitem__"
    __getitem__.__wrapped__ = getitem
    return entry_point(__getitem__)


def getitem(self, index):
    # a plain tensor's (torch.Tensor, nn.Parameter) sizes are read from the tensor itself, a
    # subclass's through its own ``shape``/``dim``
    if type(index) is int and type(self) in (_PLAIN[0] if _PLAIN else plain_tensor_types()) \
            and self._size:
        # the common int index of a plain tensor (what the general test below decides for it)
        size = self._size[0]
        if index < -size or index >= size:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {size}")
        return _door(_SELECT[0] or _select_op(), (self, 0, index), {})
    if type(index) is not tuple:  # (a tuple is its own index list: no test below takes it)
        if _is_int_index(index) and self.dim() > 0:
            i = int(index)
            size = self._size[0]
            if i < -size or i >= size:
                raise IndexError(f"index {i} is out of bounds for dimension 0 with size {size}")
            return _call("select.int", self, 0, i)
        if isinstance(index, slice) and self.dim() > 0:
            # a lone slice is always dispatched, whole-dim or not (upstream's THPVariable_getitem)
            step = 1 if index.step is None else int(index.step)
            if step <= 0:
                raise ValueError(_bad_step(step))
            return _call("slice.Tensor", self, 0,
                         0 if index.start is None else _bound(index.start),
                         _INT64_MAX if index.stop is None else _bound(index.stop), step)
        index = _wrap_index(index)
    result, advanced = apply_slicing(self, index)
    if advanced is None:
        if result is self:
            return _call("alias", self)
        return result
    while advanced and advanced[-1] is None:
        advanced.pop()
    return _call("index.Tensor", result, advanced)


def setitem(self, index, value):
    if not isinstance(value, TensorBase):
        if not _assignable_number(value):
            raise TypeError(f"can't assign a {typename(value)} to a "
                            f"{legacy_type_name(self._dtype)}")
        if isinstance(value, np.generic):
            value = value.item()  # unpacked to a Python number, as upstream's checks read it
        value = _scalar_value(self, value)
    index = _wrap_index(index)
    result, advanced = apply_slicing(self, index)
    if advanced is None:
        _copy_to(result, value)
        return
    if isinstance(value, TensorBase):
        value = _strip_leading_ones(value)
    while advanced and advanced[-1] is None:
        advanced.pop()
    if not isinstance(value, TensorBase):
        from ..core.python_data import tensor_from_data

        value = tensor_from_data(value, self.dtype, self.device)
    _call("index_put_", result, advanced, value, False)


def _assignable_number(value) -> bool:
    """valueToTensor's numbers: an int (a numpy integer too) or a bool, a float or a complex (the
    numpy types that are Python floats and complexes: float64, complex128), or a symbolic one;
    other numpy scalars, sequences and arrays are refused."""
    return isinstance(value, (int, float, complex, np.integer)) or is_symbolic(value)


def _scalar_value(self, value):
    """valueToTensor: a Python number as a 0-dim tensor of self's dtype, filled as upstream's
    scalar_tensor_static fills one element (undispatched), then lifted (dispatched)."""
    from ..core.construct import empty
    from ..kernels.copy import fill_scalar

    return _call("lift_fresh", fill_scalar(empty((), self.dtype, self.device), value))


def _copy_to(dst, src):
    """indexing's copy_to: copy_ when the shapes match, fill_ from a 0-dim CPU value, else the
    value without its leading size-1 dims (a view, always), expanded to the destination's shape
    (expand_inplace's message for a value that does not fit), then copy_."""
    shape = dst.shape
    if tuple(shape) == tuple(src.shape):
        _call("copy_", dst, src)
    elif src.dim() == 0 and src.device.type == "cpu":
        _call("fill_.Tensor", dst, src)
    else:
        src = _call("view", src, _without_leading_ones(src.shape))
        if tuple(src.shape) != tuple(shape):
            src = _call("expand", src, list(shape))
        _call("copy_", dst, src)


def _without_leading_ones(size) -> list:
    """upstream's slicePrefix1sSize: the sizes after the leading 1s."""
    size = list(size)
    n = 0
    while n < len(size) and size[n] == 1:
        n += 1
    return size[n:]


def _strip_leading_ones(value: TensorBase):
    """A value for index_put_ without its leading size-1 dims (a view only where it has any)."""
    size = _without_leading_ones(value.shape)
    return _call("view", value, size) if len(size) != value.dim() else value


TENSOR_METHODS = {"__getitem__": getitem, "__setitem__": setitem}
