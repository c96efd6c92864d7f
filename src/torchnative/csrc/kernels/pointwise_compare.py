"""Comparisons (eq/ne/lt/le/gt/ge), logical and bitwise ops, shifts, where and masked_fill.

Comparisons and logical ops compute in the common dtype of their inputs (so ``uint8 < -1``
compares with 255, as upstream does) and return bool. Shifts follow upstream's CPU kernel: a
negative or too-large shift gives 0 (left) or the sign fill (right), never C's undefined result.
"""

from __future__ import annotations

import numpy as np

from ..platform.cpp_names import scalar_cpp, typemeta
from ..core import dtypes as D
from ..core.mem_overlap import YES, internal_overlap
from ..core.tensor import TensorBase
from .support.common import arr, wrap
from .support.scalar import scalar_to
from .pointwise_base import (ALL_HB, BOOL, COMPLEX, INTEGRAL, INTEGRAL_B, U8,
                             broadcast_shape, broadcasting, check, checked, finish, operand,
                             shapes_of)
from .pointwise_binary import apply2, dtype2
from ..dispatch.structured import inplace_wrapper
from ..ops.kernel_registry import kernel
from ..platform.torch_warn import torch_warn, torch_warn_once


def _compare(name, fn, ordered):
    def op(self, other):
        dt = dtype2(self, other)
        if ordered:
            check(f"{name}_cpu", dt, ALL_HB)
        return apply2(fn, self, other, dt, BOOL)

    op.__name__ = name
    kernel(f"{name}.Tensor", f"{name}.Scalar")(op)
    return op


eq = _compare("eq", np.equal, False)
ne = _compare("ne", np.not_equal, False)
lt = _compare("lt", np.less, True)
le = _compare("le", np.less_equal, True)
gt = _compare("gt", np.greater, True)
ge = _compare("ge", np.greater_equal, True)


def _truth(x):
    return x if x.dtype == np.bool_ else x != 0


def _logical(name, fn):
    def op(self, other):
        dt = dtype2(self, other)
        return apply2(lambda x, y: fn(_truth(x), _truth(y)), self, other, dt, BOOL)

    op.__name__ = name
    kernel(name)(op)
    return op


logical_and = _logical("logical_and", np.logical_and)
logical_or = _logical("logical_or", np.logical_or)
logical_xor = _logical("logical_xor", np.logical_xor)


# ---- bitwise ------------------------------------------------------------------------------------
def _bitwise(name, fn):
    def op(self, other):
        dt = dtype2(self, other)
        check(f"bitwise_{name}_cpu", dt, INTEGRAL_B)
        return apply2(fn, self, other, dt)

    op.__name__ = f"bitwise_{name}"
    kernel(f"bitwise_{name}.Tensor", f"bitwise_{name}.Scalar", f"bitwise_{name}.Scalar_Tensor")(op)
    return op


bitwise_and = _bitwise("and", np.bitwise_and)
bitwise_or = _bitwise("or", np.bitwise_or)
bitwise_xor = _bitwise("xor", np.bitwise_xor)


def _shift_count(y) -> np.ndarray:
    """The shift count as upstream reads it: ``static_cast<make_signed_t<T>>(b)``."""
    if y.dtype.kind == "u":
        y = y.view(y.dtype.str.replace("u", "i"))
    return y.astype(np.int64)


def _lshift(x, y):
    """(unsigned)a << b, and 0 for a negative or too-large count."""
    n = _shift_count(y)
    bad = (n < 0) | (n >= x.dtype.itemsize * 8)
    ux = x.view(x.dtype.str.replace("i", "u")) if x.dtype.kind == "i" else x
    r = np.left_shift(ux, np.where(bad, 0, n).astype(ux.dtype)).view(x.dtype)
    return np.where(bad, x.dtype.type(0), r)


def _rshift(x, y):
    """a >> b; a negative or too-large count shifts by the maximum (sign fill, or 0)."""
    n = _shift_count(y)
    signed = x.dtype.kind == "i"
    max_shift = x.dtype.itemsize * 8 - signed
    bad = (n < 0) | (n >= max_shift)
    if not signed:  # C's int promotion: an unsigned value shifted by its width is 0
        r = np.right_shift(x, np.where(bad, 0, n).astype(x.dtype))
        return np.where(bad, x.dtype.type(0), r)
    return np.right_shift(x, np.where(bad, max_shift, n).astype(x.dtype))


def _shift(name, kname, fn):
    def op(self, other):
        dt = dtype2(self, other)
        check(kname, dt, INTEGRAL)
        return apply2(fn, self, other, dt)

    op.__name__ = name
    return op


lshift = _shift("lshift", "lshift_cpu", _lshift)
rshift = _shift("rshift", "rshift_cpu", _rshift)
kernel("bitwise_left_shift.Tensor", "bitwise_left_shift.Tensor_Scalar",
       "bitwise_left_shift.Scalar_Tensor", "__lshift__.Tensor", "__lshift__.Scalar")(lshift)
kernel("bitwise_right_shift.Tensor", "bitwise_right_shift.Tensor_Scalar",
       "bitwise_right_shift.Scalar_Tensor", "__rshift__.Tensor", "__rshift__.Scalar")(rshift)


kernel("__ilshift__.Tensor", "__ilshift__.Scalar")(inplace_wrapper(lshift, "__ilshift__"))
kernel("__irshift__.Tensor", "__irshift__.Scalar")(inplace_wrapper(rshift, "__irshift__"))


# ---- where / masked_fill ------------------------------------------------------------------------
@kernel("where.self")
def where(condition, self, other):
    dt = dtype2(self, other)
    cond = condition
    if cond._dtype is U8:
        torch_warn_once("where received a uint8 condition tensor. This behavior is deprecated "
                        "and will be removed in a future version of PyTorch. Use a boolean "
                        "condition instead.")
        c = arr(cond) != 0
    elif cond._dtype is BOOL:
        c = arr(cond)
    else:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with "
                           f"dtype {cond._dtype._cpp_name}")
    npdt = D.numpy_dtype(dt)
    x = operand(self, dt, npdt)
    y = operand(other, dt, npdt)
    r = _where_over_copy(c, x, y, npdt)
    if r is None:
        r = broadcasting(lambda: np.where(c, x, y), condition, self, other)
    return finish(np.asarray(r, dtype=npdt), dt, condition, self, other)


def _where_over_copy(c, x, y, npdt):
    """np.where(c, x, y) as a copy of ``y`` with ``x`` written where ``c`` holds, when ``y``
    already has the result's shape (a logits row with a masked scalar: half np.where's time).
    Only for C-contiguous operands of the result's dtype, whose np.where result is C-contiguous
    too; the same elements, bit for bit. None where np.where itself must run."""
    if type(y) is not np.ndarray or y.size < 1024 or y.dtype != npdt or \
            not (y.flags.c_contiguous and c.flags.c_contiguous) or \
            getattr(x, "dtype", None) != npdt or \
            (type(x) is np.ndarray and not x.flags.c_contiguous):
        return None
    r = y.copy()
    try:  # c and x broadcast to y's shape, or the result is larger than y
        np.copyto(r, x, where=c)
    except ValueError:
        return None
    return r




def _fill_value(self, value):
    """``value.to<scalar_t>()``: checked, and a complex value needs a complex tensor."""
    dt = self._dtype
    if isinstance(value, complex) and dt not in COMPLEX and value.imag != 0:
        raise RuntimeError(f"value cannot be converted to type {scalar_cpp(dt._name)} without "
                           "overflow")
    v = checked(value, dt)
    if dt in D.BIT_STORED:
        return scalar_to(v, dt)
    return np.asarray(v).astype(D.numpy_dtype(dt)) if dt not in COMPLEX else v


def _check_mask(mask):
    if mask._dtype is not BOOL:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{typemeta(mask._dtype._name, mask._dtype._cpp_name)}")


def _value_of(value):
    if isinstance(value, TensorBase):
        if value.dim() != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.dim()} dimension(s).")
        return value.item()
    return value


@kernel("masked_fill.Scalar", "masked_fill.Tensor")
def masked_fill(self, mask, value):
    _check_mask(mask)
    value = _value_of(value)
    shape = broadcast_shape(*shapes_of(mask, self))
    fill = _fill_value(self, value)
    out = np.array(np.broadcast_to(arr(self), shape), order="C")
    np.copyto(out, fill, where=arr(mask))
    return wrap(out, self._dtype)


def warn_if_expanded(self) -> None:
    """masked_fill_'s deprecation warning on a tensor with internal overlap (index_put_ with one
    boolean mask and a one-element value becomes masked_fill_ upstream, and warns it too)."""
    if internal_overlap(self) == YES:
        torch_warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the "
                   "tensor before performing this operation. This also applies to advanced "
                   "indexing e.g. tensor[mask] = scalar")


@kernel("masked_fill_.Scalar", "masked_fill_.Tensor")
def masked_fill_(self, mask, value):
    _check_mask(mask)
    value = _value_of(value)
    shape = broadcast_shape(*shapes_of(self, mask))
    if shape != tuple(self._size):
        raise RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    warn_if_expanded(self)
    fill = _fill_value(self, value)
    target = arr(self)
    if target.size:
        np.copyto(target, fill, where=arr(mask))
    return self
