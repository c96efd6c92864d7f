"""What the pointwise kernels share: operands in the compute dtype, Scalar conversions with
upstream's two semantics, dtype-support checks with upstream's messages, broadcast errors.

Upstream's TensorIterator casts every input to the common dtype before the loop (a static_cast:
integers wrap, float64 -> bfloat16 goes through float32); ``operand`` does the same and then
widens float16/bfloat16 to float32 (opmath), so a kernel computes once and ``wrap`` rounds once.
A ``Scalar`` argument read with ``Scalar.to<T>()`` (alpha, clamp bounds, activation parameters)
is instead *checked*: out-of-range values raise "value cannot be converted to type ... without
overflow" (``checked``).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..platform.cpp_names import scalar_cpp
from ..platform.float_state import quiet  # noqa: F401  (re-exported to the kernels)
from ..core import dtypes as D
from ..core.cast import cast_array, readable
from ..core.construct import from_result
from ..core.tensor import TensorBase, dense_run
from .support.common import arr, opmath, result_type, wrap  # noqa: F401  (result_type: re-exported)
from .support.iteration import ti_perm
from .support.broadcast import broadcast_shape  # noqa: F401  (re-exported to other kernels)
from .support.scalar import overflows, plain_float

B = D.BY_NAME
BOOL, U8, I64 = B["bool"], B["uint8"], B["int64"]
F16, BF16, F32, F64 = B["float16"], B["bfloat16"], B["float32"], B["float64"]
C32, C64, C128 = B["complex32"], B["complex64"], B["complex128"]
F8 = frozenset(B[n] for n in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"))

# AT_DISPATCH type groups (the barebones unsigned types are in none of them)
INTEGRAL = frozenset(B[n] for n in ("uint8", "int8", "int16", "int32", "int64"))
FLOATING = frozenset((F32, F64))
REDUCED = frozenset((F16, BF16))
# complex32 is in AT_DISPATCH's complex groups here, but reaches a kernel only for the operators
# upstream computes it in (dispatch/bit_stored_ops.py); it computes in complex64 (opmath).
COMPLEX = frozenset((C32, C64, C128))
ALL = INTEGRAL | FLOATING
FLOAT_H = FLOATING | REDUCED                 # FLOATING_TYPES_AND2(Half, BFloat16)
ALL_H = ALL | REDUCED                        # ALL_TYPES_AND2(Half, BFloat16)
ALL_HB = ALL_H | {BOOL}
ALL_HC = ALL_H | COMPLEX
ALL_HBC = ALL_HB | COMPLEX
FLOAT_HC = FLOAT_H | COMPLEX
INTEGRAL_B = INTEGRAL | {BOOL}

_OPMATH: dict = {}


def compute_dtype(dt: D.dtype) -> np.dtype:
    """common.opmath, memoized (it is asked on every call)."""
    cdt = _OPMATH.get(dt)
    if cdt is None:
        cdt = _OPMATH[dt] = opmath(dt)
    return cdt


# dtypes whose storage type is their compute type (no opmath widening, no cast on the way in)
NATIVE = frozenset(D.BY_NAME[n] for n in ("float32", "float64", "int64", "int32", "int16",
                                         "int8", "uint8", "complex64", "complex128"))


def check(kernel: str, dt: D.dtype, allowed) -> None:
    """AT_DISPATCH's refusal for a dtype outside the kernel's type group."""
    if dt not in allowed:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt._cpp_name}\'')


def py_dtype(v) -> D.dtype:
    """The dtype of a c10::Scalar made from a Python (or numpy) number."""
    dt = _PY_DTYPE.get(type(v))
    if dt is not None:
        return dt
    if isinstance(v, (bool, np.bool_)):
        return BOOL
    if isinstance(v, numbers.Integral):
        return I64
    if isinstance(v, numbers.Real):
        return F64
    if isinstance(v, numbers.Complex):
        return C128
    raise TypeError(f"expected a number, got {type(v).__name__}")


_PY_DTYPE = {bool: BOOL, int: I64, float: F64, complex: C128}


def operand(x, dt: D.dtype, cdt: np.dtype):
    """Tensor or Python number ``x`` cast to ``dt`` (upstream's static_cast), held in ``cdt``."""
    if isinstance(x, TensorBase):
        a = x._np
        if a is None:
            a = arr(x)
        if x._dtype is not dt:
            if x._wrapped:  # a Python number: the scalar path, without the cast machinery
                return scalar_value(a.item(), dt, cdt)
            a = cast_array(a, x._dtype, dt)
        if a.dtype == cdt:
            return a
        return (readable(a, dt) if dt in D.BIT_STORED else a).astype(cdt)
    return scalar_value(x, dt, cdt)


def scalar_value(v, dt: D.dtype, cdt: np.dtype):
    """A Python number as a wrapped-number tensor would enter the loop: cast to ``dt``
    (integers wrap modulo 2**bits, floats round, through float32 for 16-bit floats)."""
    src = py_dtype(v)
    if src is dt or (dt in FLOATING and src is not C128):
        return _to_f32(v) if dt is F32 else cdt.type(v)
    a = cast_array(np.asarray(v, dtype=D.numpy_dtype(src)), src, dt)
    if a.dtype == cdt:
        return a
    return (readable(a, dt) if dt in D.BIT_STORED else a).astype(cdt)


def _to_f32(v):
    if -3.4e38 < v < 3.4e38:
        return np.float32(v)
    with quiet():  # 1e40 -> inf, as static_cast<float> does; NaN stays NaN
        return np.float32(v)


def original_f32(x):
    """A single-element operand in float32 straight from its own dtype: upstream's reduced-float
    kernels read a scalar second operand with ``original_scalar_value<float>`` (no bfloat16
    rounding first)."""
    if isinstance(x, TensorBase):
        a = arr(x)
        if x._dtype in REDUCED or x._dtype is F32:
            return a.astype(np.float32)
        return cast_array(a, x._dtype, F32).reshape(a.shape)
    if isinstance(x, complex):
        x = x.real
    return _to_f32(float(x))


def is_scalar_operand(x) -> bool:
    """TensorIterator's is_scalar(operand): one element, broadcast over the whole output."""
    return not isinstance(x, TensorBase) or x.numel() == 1


# ---- Scalar.to<T>() ---------------------------------------------------------------------------


def checked(v, dt: D.dtype):
    """``Scalar.to<T>()`` for ``dt``: c10::checked_convert, as a numpy scalar of dt's compute
    dtype. Out-of-range values raise upstream's RuntimeError instead of wrapping."""
    if type(v) is float:  # the optimizers' alpha, value, weight on float32/float64
        f = plain_float(v, dt)
        if f is not None:
            return f
    cdt = opmath(dt)
    if isinstance(v, TensorBase):
        v = v.item()
    if dt in COMPLEX:
        w = complex(v)
        if overflows(w, dt):
            raise RuntimeError(f"value cannot be converted to type {scalar_cpp(dt._name)} "
                               "without overflow")
        return cdt.type(w)
    if isinstance(v, (complex, np.complexfloating)):
        if v.imag != 0:  # c10::overflows: a complex with an imaginary part fits no real type
            raise RuntimeError(f"value cannot be converted to type {scalar_cpp(dt._name)} "
                               "without overflow")
        v = v.real
    if dt is BOOL:
        return np.bool_(v != 0)
    if dt in INTEGRAL:
        info = np.iinfo(D.numpy_dtype(dt))
        if isinstance(v, (float, np.floating)):
            bad = not np.isfinite(v) or v < info.min or v > info.max
            if not bad:
                return cdt.type(int(v))
        else:
            v = int(v)
            # c10 lets a negative value through to an unsigned type if its magnitude fits
            bad = v > info.max or (v < info.min and not (info.min == 0 and -v <= info.max))
            if not bad:
                return np.asarray(v).astype(cdt)
        raise RuntimeError(f"value cannot be converted to type {scalar_cpp(dt._name)} without "
                           "overflow")
    v = float(v)
    if overflows(v, dt):
        raise RuntimeError(f"value cannot be converted to type {scalar_cpp(dt._name)} without "
                           "overflow")
    if dt in REDUCED:  # the value a scalar_t holds, then widened
        return np.float32(cast_array(np.asarray(v, np.float64), F64, dt).astype(np.float32))
    return cdt.type(v)


# ---- shapes -----------------------------------------------------------------------------------
def shapes_of(*xs):
    return [x._size for x in xs if isinstance(x, TensorBase)]


def broadcasting(fn, *operands):
    """Call ``fn()``; a numpy broadcasting failure becomes upstream's message."""
    try:
        return fn()
    except ValueError:
        broadcast_shape(*shapes_of(*operands))
        raise


# ---- output layout (TensorIterator's) -----------------------------------------------------------
def _c_strides(shape) -> tuple:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


_ITER_STRIDES: dict = {}
_ITER_STRIDES_MAX = 4096


def iter_strides(shape: tuple, tensors) -> tuple:
    """The strides (in elements) TensorIterator gives a new output of ``shape`` computed from
    ``tensors``: contiguous, channels-last or the shared strides when all inputs agree (its fast
    setup), else the inputs' dimension order (reorder_dimensions), ties broken by later inputs.
    The answer depends only on the shape and the inputs' sizes and strides, so it is kept per
    pattern: a model repeats the same few (a rotary half of a transposed head, every step)."""
    key = (tuple(shape), *[(t._size, t._stride) for t in tensors])
    hit = _ITER_STRIDES.get(key)
    if hit is None:
        hit = _iter_strides(tuple(shape), tensors)
        if len(_ITER_STRIDES) >= _ITER_STRIDES_MAX:
            _ITER_STRIDES.clear()
        _ITER_STRIDES[key] = hit
    return hit


def _iter_strides(shape: tuple, tensors) -> tuple:
    nd = len(shape)
    if nd <= 1 or not tensors:
        return _c_strides(shape)
    if all(t._size == shape for t in tensors):
        if all(t.is_contiguous() for t in tensors):
            return _c_strides(shape)
        if nd == 4 and all(_is_channels_last(t) for t in tensors):
            n, c, h, w = shape
            return (h * w * c, 1, w * c, c)
        first = tensors[0]._stride
        if all(t._non_overlapping_and_dense() and t._stride == first for t in tensors):
            return tuple(first)
    ops = []
    for t in tensors:
        off = nd - len(t._size)
        st = [0] * nd
        for i, (sz, s) in enumerate(zip(t._size, t._stride)):
            st[off + i] = 0 if (sz == 1 and shape[off + i] != 1) else s
        ops.append(st)

    perm = ti_perm(shape, ops)  # perm[0] is the fastest-moving dimension
    out = [0] * nd
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def _is_channels_last(t) -> bool:
    from ..core.layouts import channels_last

    return t.is_contiguous(memory_format=channels_last)


def finish(r, dt: D.dtype, *operands):
    """The result array as a tensor of ``dt``, laid out as TensorIterator lays out its output
    (numpy's own choice is kept when it already agrees, so the common case copies nothing)."""
    if type(r) is not np.ndarray:
        r = np.asarray(r)
    if r.ndim > 1 and not (r.flags.c_contiguous and _all_c(operands)):
        if r.size and r.dtype == _TO_NUMPY.get(dt):
            # numpy's order (C, or its inputs' own) already has TensorIterator's layout in most
            # such calls (a decode step's rotary halves, a prefill's transposed projections):
            # the strides the steps below settle on, kept per geometry
            key = (r.shape, r.strides, r.dtype,
                   *[(t._size, t._stride) for t in operands if isinstance(t, TensorBase) and t._size])
            plan = _C_PLANS.get(key, _NO_PLAN)
            if plan is _NO_PLAN:
                plan = _c_plan(r, [t for t in operands if isinstance(t, TensorBase) and t._size])
                if len(_C_PLANS) >= _ITER_STRIDES_MAX:
                    _C_PLANS.clear()
                _C_PLANS[key] = plan
            if plan is True:
                return from_result(r, dt)
            if plan is not None:
                strides, nbytes = plan
                t = from_result(r if nbytes is None else np.ndarray(r.shape, r.dtype, r, 0, nbytes),
                                dt)
                t._stride = strides
                return t
        tensors = [t for t in operands if isinstance(t, TensorBase) and t._size]
        if tensors:
            want = iter_strides(r.shape, tensors)
            item = r.dtype.itemsize
            have = tuple(s // item for s in r.strides)
            if have != want:
                nbytes = tuple(s * item for s in want)
                if r.size and r.flags.c_contiguous and _same_layout(r.shape, have, want):
                    # only the strides of size-1 dimensions differ: same memory, no copy
                    r = np.ndarray(r.shape, r.dtype, r, 0, nbytes)
                else:
                    view = np.ndarray(r.shape, r.dtype, np.empty(r.size, dtype=r.dtype), 0,
                                      nbytes)
                    np.copyto(view, r)
                    r = view
                t = wrap(r, dt)
                # numpy calls an array contiguous whatever its size-1 strides are, so ``wrap``
                # may have given the canonical ones: the tensor keeps TensorIterator's
                if t._stride != want and _same_layout(r.shape, t._stride, want):
                    t._stride = want
                    if t._np is not None and t._np.size and t._np.flags.c_contiguous:
                        a = t._np
                        t._np = np.ndarray(a.shape, a.dtype, a, 0,
                                           tuple(s * a.dtype.itemsize for s in want))
                return t
    return wrap(r, dt)


_C_PLANS: dict = {}
_NO_PLAN = object()
_TO_NUMPY = D._TO_NUMPY


def _c_plan(r: np.ndarray, tensors: list):
    """What ``finish`` makes of a non-empty result ``r`` of its storage dtype: True where it is
    the tensor as it is (C-contiguous, canonical strides); (the tensor's strides, None) where
    ``r`` already has TensorIterator's strides in another order and fills one run of memory (its
    storage, when asked for: ``dense_run``); for a C-contiguous ``r``, (the tensor's strides, the
    array's byte strides) where only size-1 strides differ; None where the general steps decide
    (a copy into another layout, or no tensor operand to follow)."""
    if not tensors:
        return None
    item = r.dtype.itemsize
    want = iter_strides(r.shape, tensors)
    have = tuple(s // item for s in r.strides)
    if not r.flags.c_contiguous:
        return (want, None) if have == want and dense_run(r) is not None else None
    if have == want:
        return True
    if not _same_layout(r.shape, have, want):
        return None
    return want, tuple(s * item for s in want)


def _same_layout(shape, a, b) -> bool:
    """Two stride tuples address the same elements: they differ only where the size is 1."""
    for n, x, y in zip(shape, a, b):
        if x != y and n != 1:
            return False
    return True


def _all_c(operands) -> bool:
    """Every tensor operand C-contiguous: TensorIterator's output is then C-contiguous too."""
    for t in operands:
        if isinstance(t, TensorBase) and t._np is not None and not t._np.flags.c_contiguous:
            return False
    return True

