"""torch.tensor from Python data: dtype inference as upstream (tensor_new.cpp), then a copy.

Nested lists/tuples of numbers, tensors and numpy values. Inferred dtype: bool if all bools,
int64 if ints, the default dtype if any float, the default complex dtype if any complex; numpy
arrays and tensors bring their own dtype (promoted with the rest).
"""

from __future__ import annotations

import numbers
import operator
from functools import partial

import numpy as np

from . import dtypes as D
from ..platform.float_state import quiet_enter, quiet_exit
from ..platform.torch_warn import torch_warn_once
from .cast import cast_array
from .int_range import int_bounds
from .typename import typename
from .promotion import promote_types
from .python_classes import plain_tensor_types
from .torch_function import wants_torch_function
from .construct import checked_device, contiguous_strides_of, empty, from_result, \
    tensor_from_numpy, unsupported_numpy
from .tensor import TensorBase, make

_BOOL, _INT, _FLOAT, _COMPLEX = range(4)


def _kind_of_scalar(x) -> int:
    if isinstance(x, (bool, np.bool_)):
        return _BOOL
    if isinstance(x, numbers.Integral):
        return _INT
    if isinstance(x, numbers.Real):
        return _FLOAT
    if isinstance(x, numbers.Complex):
        return _COMPLEX
    raise RuntimeError(f"Could not infer dtype of {typename(x)}")


def is_sequence(x) -> bool:
    """PySequence_Check beyond lists and tuples: an object whose type has ``__getitem__`` and is
    no dict (a range, bytes, a memoryview, a deque, a user's sequence class); a string nests
    without end, arrays and tensors have their own steps."""
    t = type(x)
    return hasattr(t, "__getitem__") and not issubclass(
        t, (dict, str, numbers.Number, np.generic))


_COMPLEX_OF = {D.BY_NAME[r]: D.BY_NAME[c] for r, c in (
    ("float32", "complex64"), ("float64", "complex128"), ("float16", "complex32"))}


def infer_dtype(data):
    """The dtype torch.tensor(data) gets without an explicit dtype."""
    if isinstance(data, TensorBase):
        return data.dtype
    if isinstance(data, np.ndarray):
        dt = D.dtype_from_numpy(data.dtype)
        if dt is None or data.dtype.fields is not None:
            raise unsupported_numpy(data.dtype)
        return dt
    if isinstance(data, np.generic):
        dt = D.dtype_from_numpy(data.dtype)
        if dt is None:
            raise unsupported_numpy(data.dtype)
        return dt
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{typename(data)}'")
    if isinstance(data, (list, tuple)) or is_sequence(data):
        found = None
        # (upstream reads a sequence's items by index up to its length here)
        for item in data if isinstance(data, (list, tuple)) else map(data.__getitem__,
                                                                      range(len(data))):
            dt = infer_dtype(item)
            found = dt if found is None or found is dt else promote_types(found, dt)
        return found if found is not None else D.get_default_dtype()
    kind = _kind_of_scalar(data)
    if kind == _COMPLEX:  # infer_scalar_type's own table: float, double and half have a complex
        complex_of = _COMPLEX_OF.get(D.get_default_dtype())
        if complex_of is None:
            raise RuntimeError("invalid default scalar type for complex")
        return complex_of
    return [D.BY_NAME["bool"], D.BY_NAME["int64"], D.get_default_dtype()][kind]


def materialize_dtype(data):
    """The dtype Python data is read in before the cast to the result dtype: Python numbers at
    full width (float64, complex128, int64, bool), so ``torch.tensor([0.3], dtype=float64)``
    never rounds through the default float dtype; arrays and tensors bring their own."""
    if isinstance(data, TensorBase):
        return data.dtype
    if isinstance(data, np.ndarray):
        if data.dtype.fields is not None:
            raise unsupported_numpy(data.dtype)
        return D.dtype_from_numpy(data.dtype)
    if isinstance(data, np.generic):
        return _full_width(data)
    if isinstance(data, (list, tuple)):
        found = None
        for item in data:
            dt = materialize_dtype(item)
            found = dt if found is None or found is dt else promote_types(found, dt)
        return found if found is not None else D.BY_NAME["float64"]
    kind = _kind_of_scalar(data)
    return D.BY_NAME[("bool", "int64", "float64", "complex128")[kind]]


def _full_width(value: np.generic):
    """The dtype a numpy scalar is read in: its kind's widest (store_scalar unpacks it as a
    Python int, double or complex double), so mixing, say, uint32 and int64 values needs no
    promotion between them; uint64 and bool keep their own, and a type with no torch dtype
    (datetime64, ...) is refused as an array of it is."""
    if isinstance(value, np.signedinteger) or isinstance(value, np.unsignedinteger) and \
            value.dtype.itemsize < 8:
        return _INT64
    if isinstance(value, np.floating):  # (a long double rounds to double, as __float__ does)
        return _F64
    if isinstance(value, np.complexfloating):
        return D.BY_NAME["complex128"]
    dt = D.dtype_from_numpy(value.dtype)
    if dt is None:
        raise unsupported_numpy(value.dtype)
    return dt


def _to_numpy(data, npdt):
    if isinstance(data, TensorBase):
        return data.detach()._np
    return data


def _sizes(data) -> tuple:
    """compute_sizes: the lengths along the first items down the nesting. A tensor is no
    sequence: within the nesting it is a value (the data itself, a tensor brings its shape); an
    array is one, down to its elements (a 0-d one has no length); a string is a sequence of
    strings, so it nests past the 64 dims."""
    sizes = []
    seq = data
    while True:
        if isinstance(seq, TensorBase):
            return tuple(sizes) if sizes else tuple(seq.shape)
        if isinstance(seq, np.ndarray):
            if sizes and seq.ndim == 0:
                raise TypeError("len() of unsized object")
            return tuple(sizes) + tuple(seq.shape)
        if isinstance(seq, str) and seq:  # (its items are strings: past the 64 dims)
            raise ValueError(f"too many dimensions '{type(seq).__name__}'")
        if not isinstance(seq, (list, tuple)) and not is_sequence(seq):
            return tuple(sizes)
        n = len(seq)
        sizes.append(n)
        if not n:
            return tuple(sizes)
        seq = seq[0]


_SLOW_ARRAYS = ("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                "consider converting the list to a single numpy.ndarray with numpy.array() "
                "before converting to a tensor.")


def _check_structure(data, sizes, dim, dt):
    """recursive_store's checks, item by item in its order: a sequence of each level's length
    where a level is expected (a tensor there is iterated, as PySequence_Fast iterates it);
    where the nesting ends, a value ``dt``'s unpacking can read (never a sequence, nor
    ``_unreadable``'s values) and, for an integer ``dt``, store within its range
    (``_store_refusal``). A tensor where the nesting ends is read as store_scalar reads it
    (``_read_tensor``). Returns ``data`` with those tensors replaced by their numbers (``data``
    itself when it holds none); the data itself as a tensor or an array is copied whole."""
    if dim == 0 and isinstance(data, (np.ndarray, TensorBase)):
        return data
    if isinstance(data, np.ndarray) and dim < len(sizes):
        return _check_array(data, sizes, dim, dt)
    if dim == len(sizes):
        if isinstance(data, TensorBase):
            data = _read_tensor(data, dt)
        elif isinstance(data, np.ndarray):  # (numpy's conversions refuse all but 0-d ones)
            data = _read_value(data, dt)
        elif isinstance(data, (list, tuple)) or is_sequence(data) or _unreadable(data, dt):
            raise _unpack_refusal(data, dt)
        elif not isinstance(data, (numbers.Number, np.generic)):
            data = _read_object(data, dt)
        if dt in _CHECKED_INTS:
            refusal = _store_refusal(data, dt)
            if refusal is not None:
                raise refusal
        return data
    if isinstance(data, TensorBase):
        try:
            items = list(data)
        except TypeError:  # a 0-d tensor (PySequence_Fast's own message replaces the error)
            raise TypeError("not a sequence") from None
    elif isinstance(data, (list, tuple)):
        items = data
    elif is_sequence(data):
        items = list(data)  # (PySequence_Fast reads a sequence by iteration)
    else:
        raise TypeError("not a sequence")
    if len(items) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(items)})")
    changed = items is not data
    out = []
    for item in items:
        if isinstance(item, np.ndarray):
            torch_warn_once(_SLOW_ARRAYS)
        new = _check_structure(item, sizes, dim + 1, dt)
        changed = changed or new is not item
        out.append(new)
    return out if changed else data


def _check_array(a, sizes, dim, dt):
    """An array within the nesting, walked as recursive_store walks any sequence: its lengths
    checked axis by axis in the walk's order, its elements numpy scalars that ``dt``'s unpacking
    reads one by one (the checks run over the whole array: its elements share one type)."""
    depth = len(sizes) - dim
    for k, n in enumerate(a.shape[:depth]):
        if n != sizes[dim + k]:
            raise ValueError(f"expected sequence of length {sizes[dim + k]} at dim {dim + k} "
                             f"(got {n})")
        if n == 0:
            return a
    if a.ndim < depth:  # a number where the walk wants a sequence
        raise TypeError("not a sequence")
    if a.ndim > depth:  # an array where the walk wants a number
        return _read_value(a[(0,) * depth], dt)
    first = a.reshape(-1)[0]
    if _unreadable(first, dt):
        raise _unpack_refusal(first, dt)
    if dt in _CHECKED_INTS:
        if a.dtype.kind == "f":   # (float64 alone: the other floats are unreadable)
            _check_integral(a, a, _F64, dt)
        elif a.dtype == np.uint64:
            if (a > np.uint64(2 ** 63 - 1)).any():
                raise _first_unstorable(a, dt)
            _check_integral(a, a.astype(np.int64), _INT64, dt)
        else:
            _check_integral(a, a.astype(np.int64, copy=False), _INT64, dt)
    return a


def _read_value(value, dt):
    """store_scalar's unpacking of an object that is no Python number: ``__float__`` (floating
    types), ``__complex__``, else ``__index__``; uint64 reads Python ints only."""
    if dt is _UINT64:
        raise _unpack_refusal(value, dt)
    if dt.is_complex:
        return complex(value)
    if dt.is_floating_point:
        return float(value)
    return operator.index(value)


def _read_object(value, dt):
    """store_scalar's unpacking of an object of another kind: what ``dt``'s CPython conversion
    reads (``__complex__``, ``__float__``, ``__index__`` in that order, as far as ``dt``'s kind
    goes), else its TypeError."""
    t = type(value)
    reads = ("__index__",) if not (dt.is_floating_point or dt.is_complex) else \
        ("__float__", "__index__") if dt.is_floating_point else \
        ("__complex__", "__float__", "__index__")
    if dt is _UINT64 or not any(hasattr(t, name) for name in reads):
        raise _unpack_refusal(value, dt)
    return _read_value(value, dt)


def _read_tensor(t, dt):
    """store_scalar's unpacking of a tensor, as of any object (``_read_value``: so one element,
    and an integer dtype refuses a floating tensor).

    Upstream stores with the Python dispatch key excluded, so no dispatch mode sees these reads:
    a plain dense one-element tensor (no __torch_function__ to ask) is read from its array
    directly; anything else through the conversion itself (its errors included)."""
    v = _plain_value(t) if dt is not _UINT64 else None
    src = t._dtype
    if v is None or (src.is_complex and not dt.is_complex) or \
            (src.is_floating_point and not (dt.is_floating_point or dt.is_complex)):
        return _read_value(t, dt)
    return complex(v) if dt.is_complex else float(v) if dt.is_floating_point else int(v)


def _plain_value(t):
    """The one value of a plain dense CPU tensor (torch.Tensor or Parameter, no lazy conjugate
    or negative bit, no bit-stored dtype, no autograd: its conversion warns) that no torch
    function mode or override would see read, as a numpy scalar; else None."""
    a = t._np
    if a is None or a.size != 1 or t._math_bits or t._dtype in D.BIT_STORED or \
            t._requires_grad or t._grad_fn is not None or \
            type(t) not in plain_tensor_types() or wants_torch_function((t,)):
        return None
    return a.reshape(-1)[0]


def _unreadable(value, dt) -> bool:
    """Whether store_scalar's unpacking for ``dt`` refuses the number ``value``: uint64 reads
    Python ints only (a Python float or complex is refused in ``_unsigned_ints``' ordered walk,
    among the negative ints); the other integer types and bool read ints through ``__index__``,
    which a numpy float, bool or complex lacks (bool reads a numpy bool as itself), and no
    Python complex; a floating type reads no Python complex."""
    if dt is _UINT64:
        return isinstance(value, np.generic)
    if type(value) is complex:
        return not (dt.is_complex or dt is _BOOL_DT)
    if dt in _CHECKED_INTS:
        return isinstance(value, np.generic) and not isinstance(value, (float, np.integer))
    if dt is _BOOL_DT:  # (a numpy bool is read as one; a complex128 is a Python complex)
        return isinstance(value, np.generic) and \
            not isinstance(value, (float, complex, np.integer, np.bool_))
    return False


def _unpack_refusal(value, dt) -> TypeError:
    """The TypeError of the CPython conversion store_scalar runs for ``dt`` on ``value``:
    PyLong_AsUnsignedLongLong's (uint64), PyFloat_AsDouble's (floating and complex types), else
    PyLong_AsLongLong's; the type named by its tp_name."""
    name = typename(value)
    if dt is _UINT64:
        return TypeError("an integer is required")
    if dt.is_floating_point or dt.is_complex:
        return TypeError(f"must be real number, not {name}")
    return TypeError(f"'{name}' object cannot be interpreted as an integer")


def tensor_from_data(data, dtype=None, device=None):
    """A new cpu/meta tensor holding a copy of ``data``."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{typename(data)}'")
    dev = checked_device(device)
    plain = _plain_numbers(data, dtype) if dev.type == "cpu" else None
    if plain is not None:
        return _from_plain_numbers(data, plain, dev)
    shape = _sizes(data)
    dt = dtype if dtype is not None else infer_dtype(data)
    checked = _check_structure(data, shape, 0, dt)
    if checked is not data and dev.type == "cpu":
        # the tensors within read as numbers (or other sequences as lists): plain numbers now?
        plain = _plain_numbers(checked, dt)
        if plain is not None:
            return _from_plain_numbers(checked, plain, dev)
    data = checked
    out = empty(shape, dt, dev)
    if dev.type == "meta":
        return out
    from .cast import scalar_nans

    src_dt = materialize_dtype(data)
    numbers_only = dtype is not None and _python_numbers_only(data)
    if dt is _UINT64 and (numbers_only or src_dt is _INT64 and
                          not isinstance(data, (TensorBase, np.ndarray))):
        src, src_dt = _unsigned_ints(data), dt  # upstream unpacks each int as unsigned 64-bit
    else:
        try:
            src = np.asarray(_to_numpy(data, D.numpy_dtype(src_dt)), dtype=D.numpy_dtype(src_dt))
        except OverflowError:  # a Python int past int64
            if src_dt is not _INT64:
                raise
            if dt is _BOOL_DT and numbers_only:   # each value's truth, however large
                src, src_dt = np.asarray(np.asarray(data, dtype=object) != 0, dtype=bool), dt
            elif not (dt.is_floating_point or dt.is_complex):
                raise ValueError("Overflow when unpacking long long") from None
            else:
                src, src_dt = np.asarray(np.asarray(data, dtype=object), dtype=np.float64), _F64
    nans = None
    if dt is _BF16:
        # an array or a tensor goes through the copy kernel; a sequence's values are converted
        # one by one
        nans = partial(_copied_nans, data, shape, src_dt is _F64) \
            if isinstance(data, (TensorBase, np.ndarray)) else scalar_nans
    out._np[...] = cast_array(src.reshape(shape), src_dt, dt, nans)
    return out


def _from_plain_numbers(data, plain, dev):
    """The tensor of ``_plain_numbers``' answer for ``data``."""
    src, src_dt, dt = plain   # ``src``: a fresh array, so it can be the result's own
    if dt in _CHECKED_INTS and dt is not src_dt:   # (ints read as int64 fit int64)
        _check_integral(data, src, src_dt, dt)
    if dt is _F32 and src_dt is _F64:
        token = quiet_enter()   # beyond float32's range is inf, as the cast below has it
        try:
            src = src.astype(np.float32)   # rounded once, to nearest even
        finally:
            quiet_exit(token)
    elif dt is not src_dt:
        src = cast_array(src, src_dt, dt)
    if src.dtype == D.numpy_dtype(dt):
        return from_result(src, dt)
    out = empty(src.shape, dt, dev)
    out._np[...] = src
    return out


# integer dtypes whose Python values are stored checked (unpackIntegral); uint64 takes ints only
_CHECKED_INTS = frozenset(D.BY_NAME[n] for n in
                          ("uint8", "uint16", "uint32", "int8", "int16", "int32", "int64"))


def _python_numbers_only(data) -> bool:
    """Whether every leaf of ``data`` is a Python number (no tensor, array or numpy value, which
    are copied with the cast rules instead)."""
    if type(data) in (list, tuple):
        return all(_python_numbers_only(x) for x in data)
    return isinstance(data, (bool, int, float, complex)) and not isinstance(data, np.generic)


def _check_integral(data, src: np.ndarray, src_dt, dt) -> None:
    """store_scalar's checked_convert of Python numbers (read as ``src``) into integer ``dt``:
    a float past the type's range or NaN, or an int past it (negative ints wrap into unsigned
    types, as c10::overflows allows) raise upstream's error; the store then truncates."""
    lo_int, lo, hi = int_bounds(dt)
    if src_dt is _F64:
        token = quiet_enter()
        try:
            bad = np.isnan(src) | (src < float(lo)) | (src > float(hi))
        finally:
            quiet_exit(token)
    elif src_dt is _INT64:
        bad = (src > hi) | (src < lo_int)
    else:
        return      # bools fit every integer type; complex values take the general cast
    if bad.any():
        raise _first_unstorable(data, dt)


def _first_unstorable(data, dt) -> Exception:
    """The error of the first value (in order) that ``dt`` cannot hold."""
    for v in np.asarray(data, dtype=object).reshape(-1):
        refusal = _store_refusal(v, dt)
        if refusal is not None:
            return refusal
    return _overflow(dt)


def _store_refusal(value, dt):
    """store_scalar's checked conversion of one readable value into integer ``dt``, or None: a
    float (a numpy float64 is one) past the range or NaN; an int (a numpy integer through
    ``__index__``) past int64 fails to unpack, one past the range (negative ones wrap into
    unsigned types down to -max) fails the check."""
    lo_int, lo, hi = int_bounds(dt)
    if isinstance(value, float):
        return _overflow(dt) if value != value or value < lo or value > hi else None
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if not -2 ** 63 <= v < 2 ** 63:
            return ValueError("Overflow when unpacking long long")
        return _overflow(dt) if v < lo_int or v > hi else None
    return None


def _overflow(dt) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {dt._name} without overflow")


# the kinds of a Python number or a (nested) sequence of them, by the exact types found: (the dtype
# its values are read in, the dtype inferred without a dtype argument: None for the default
# float dtype); bools mixed with numbers, subclasses and numpy values take the general steps
_PLAIN_KINDS = {frozenset((float,)): ("float64", None), frozenset((int,)): ("int64", "int64"),
                frozenset((float, int)): ("float64", None), frozenset((bool,)): ("bool", "bool")}


def _plain_numbers(data, dtype):
    """(values read as materialize_dtype reads them, their dtype, the result dtype) of a Python
    float, int or bool, or a non-empty (nested) list or tuple of them, as the general steps
    below find them; None for anything else (tensors, numpy values, ragged nesting, an int past
    int64, results with their own conversion rules: uint64 and bfloat16)."""
    tp = type(data)
    if tp is list or tp is tuple:
        types = _leaf_types(data)
        kinds = _PLAIN_KINDS.get(frozenset(types)) if types else None
    elif tp is float or tp is int or tp is bool:
        kinds = _PLAIN_KINDS.get(frozenset((tp,)))
    else:
        return None
    if kinds is None:
        return None
    src_dt = D.BY_NAME[kinds[0]]
    dt = dtype if dtype is not None else \
        D.BY_NAME[kinds[1]] if kinds[1] is not None else D.get_default_dtype()
    if dt is _UINT64 or dt is _BF16:
        return None
    try:
        src = np.array(data, D.numpy_dtype(src_dt))
    except (OverflowError, ValueError):   # an int past int64; ragged nesting
        return None
    return src, src_dt, dt


def _leaf_types(data):
    """The exact types of the leaves of a non-empty list or tuple nested through lists and tuples
    only, each level's items all sequences or all leaves; None otherwise (whether the nesting is
    rectangular is numpy's to find)."""
    if not data:
        return None
    first = type(data[0])
    if first is not list and first is not tuple:
        return set(map(type, data))
    types = set()
    for row in data:
        tr = type(row)
        if tr is not list and tr is not tuple:
            return None
        sub = _leaf_types(row)
        if sub is None or list in sub or tuple in sub:
            return None
        types |= sub
    return types


def _copied_nans(data, shape, src_is_f64, values):
    """The converted ``values`` of an array or a tensor (holding a NaN: cast_array calls this only
    then), each NaN stored as upstream's copy kernel stores it into a contiguous result."""
    return _bf16_copy_nans(values, shape, contiguous_strides_of(shape), _element_strides(data),
                           src_is_f64)


def _element_strides(data) -> tuple:
    if isinstance(data, TensorBase):
        return tuple(data._stride)
    item = data.itemsize
    if all(s >= 0 and s % item == 0 for s in data.strides):
        return tuple(s // item for s in data.strides)
    return contiguous_strides_of(data.shape)  # negative strides: upstream refuses such arrays


def _copy_nans_not_loaded(*args):
    raise RuntimeError("torchnative: the copy kernel's bfloat16 NaN rule is not installed "
                       "(import torchnative.csrc.kernels.copy)")


# installed by kernels/copy.py (the layer above): which converter upstream's copy kernel runs
# on each element, so a NaN gets its bits (kernels/simd_lanes.py, copy_nans)
_bf16_copy_nans = _copy_nans_not_loaded


def register_bf16_copy_nans(fn) -> None:
    global _bf16_copy_nans
    _bf16_copy_nans = fn


_INT64, _UINT64, _F64 = D.BY_NAME["int64"], D.BY_NAME["uint64"], D.BY_NAME["float64"]
_F32, _BOOL_DT = D.BY_NAME["float32"], D.BY_NAME["bool"]
_BF16 = D.BY_NAME["bfloat16"]


def _unsigned_ints(data) -> np.ndarray:
    """Python ints as uint64 values, with upstream's errors for a negative one or one past 2**64."""
    values = np.asarray(data, dtype=object)
    for v in values.reshape(-1):
        if isinstance(v, (float, complex)):
            raise _unpack_refusal(v, _UINT64)   # no float is unpacked as an int
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            if v < 0:
                raise OverflowError("can't convert negative int to unsigned")
            if v >= 1 << 64:
                raise OverflowError("int too big to convert")
    return np.asarray(values, dtype=np.uint64)


def from_numpy(arr):
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {typename(arr)})")
    return tensor_from_numpy(arr)


def over_storage(storage, dt, cls):
    """``torch.XTensor(storage)``: a 1-D tensor sharing the whole storage (as many ``dt``
    elements as fit). A typed storage must hold ``dt`` already; an untyped one is taken as is."""
    untyped = getattr(storage, "_untyped_storage", None)
    if untyped is not None:
        if storage.dtype is not dt:
            raise RuntimeError(f"Expected a Storage of type {dt._cpp_name} or an UntypedStorage, "
                               f"but got type {storage.dtype._cpp_name} for argument 1 'storage'")
        storage = untyped
    return make(storage, dt, (storage.nbytes() // dt.itemsize,), (1,), 0, cls)

