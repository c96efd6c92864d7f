"""Sum-like reductions: sum, nansum, mean, nanmean, prod, logsumexp, any/all, count_nonzero; and
the pieces every reduction module shares (dim lists, result dtypes, upstream's dtype refusals).

Accumulation. Floating and complex sums (and mean, which upstream computes as a sum divided by
the count, float16/bfloat16 summed in float32) follow upstream's cascade order bit for bit
(support/cascade_sum.py): the iteration geometry TensorIterator builds, SumKernel.cpp's loops and
the split across intra-op threads. Integer sums are exact in any order.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.cast import cast_array
from ..core.construct import from_result
from ..core.tensor import TensorBase
from .copy import strides_for
from .reduction_dims import check_ndim, dim_list, reduce_axes, reduced_numel, reduced_shape  # noqa: F401
from .reduction_cols import COL_PLANS as _COL_PLANS, col_plan
from .reduction_sum_rows import ROW_SUM_PLANS as _ROW_SUM_PLANS, sum_rows_plan
from .reduction_mean_plan import MEAN_PLANS as _MEAN_PLANS, mean_plan
from .support.cascade_sum import CascadeSum, exact, geometry
from .support.common import BOOL, INT64, arr, as_compute, wrap
from .support.parallel import get_num_threads
from ..ops.kernel_registry import kernel

_B = D.BY_NAME
UINT8 = _B["uint8"]
ALL_TYPES = frozenset(_B[n] for n in "uint8 int8 int16 int32 int64 float32 float64".split())
LOWP = frozenset((_B["float16"], _B["bfloat16"]))
COMPLEX_T = frozenset((_B["complex64"], _B["complex128"]))
ALL_LOWP = ALL_TYPES | LOWP                       # AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16)
ALL_LOWP_BOOL = ALL_LOWP | {BOOL}                 # ... AND3(..., Bool)
FLOAT_LOWP = frozenset((_B["float32"], _B["float64"])) | LOWP
SUM_TYPES = ALL_LOWP | COMPLEX_T | {BOOL}         # sum/prod (dispatched on the result dtype)


# ---- dims ---------------------------------------------------------------------------------------

def reduced_size(t: TensorBase, axes, keepdim: bool) -> tuple:
    return reduced_shape(t._size, axes, keepdim)


# ---- results and refusals -----------------------------------------------------------------------

# Casts numpy performs exactly as upstream does (round to nearest even, integers wrap), taken
# without the general cast machinery: this is the hot path of every small reduction.
_PLAIN_CASTS = {(np.dtype(np.float64), np.dtype(np.float32)),
                (np.dtype(np.complex128), np.dtype(np.complex64))}


def finish(result, dt: D.dtype) -> TensorBase:
    """A new contiguous tensor of dtype ``dt`` holding ``result`` (rounded once, as casts do)."""
    a = np.asarray(result)
    npdt = D.numpy_dtype(dt)
    if a.dtype != npdt and (a.dtype, npdt) in _PLAIN_CASTS:
        a = a.astype(npdt)
    return wrap(a if a.flags.c_contiguous else a.copy(order="C"), dt)


def not_implemented(name: str, dt: D.dtype):
    """Upstream's AT_DISPATCH refusal: '"sum_cpu" not implemented for 'Half''."""
    raise NotImplementedError(f'"{name}" not implemented for \'{dt._cpp_name}\'')


def dispatch(name: str, dt: D.dtype, allowed) -> None:
    if dt not in allowed:
        not_implemented(name, dt)


def is_integral(dt: D.dtype) -> bool:
    return dt in D.INTEGRAL or dt is BOOL


def widened(a: np.ndarray) -> np.ndarray:
    """``a``'s values in the accumulation dtype (float64 / complex128 for floating, else as is)."""
    if a.dtype.kind == "f" and a.dtype != np.float64:
        return a.astype(np.float64)
    if a.dtype.kind == "c" and a.dtype != np.complex128:
        return a.astype(np.complex128)
    return a


def pairwise_sum(a: np.ndarray, axes: tuple, keepdim: bool) -> np.ndarray:
    """Integers summed over ``axes``, wrapping in their own dtype (bool: logical or, as C++
    ``bool + bool`` stored back in a bool); exact in any order."""
    return np.add.reduce(a, axis=axes, dtype=a.dtype, keepdims=keepdim)


_F32 = _B["float32"]


def iterated(self: TensorBase, dt: D.dtype):
    """What TensorIterator reduces for ``self`` in ``dt``: its values (in dt's accumulation
    dtype) and element strides, those of ``self.to(dt)`` (a cast is a copy laid out as
    empty_like's preserve rule lays it out)."""
    a = as_compute(self, dt)
    return a, (self._stride if self._dtype is dt else strides_for(self, None))


def _store_rounding(dt: D.dtype):
    """How ``*out += value`` rounds a float32 value into a float16/bfloat16 output."""
    if dt not in LOWP:
        return exact
    return lambda v: cast_array(v, _F32, dt).astype(np.float32)


def _run_cascade(a: np.ndarray, geom, dt: D.dtype) -> np.ndarray:
    threads = get_num_threads()
    if a.dtype.kind == "c":  # complex adds its parts separately: two real cascades
        out = np.empty(geom.out_shape, a.dtype)
        for part, dest in ((a.real, "real"), (a.imag, "imag")):
            setattr(out, dest, CascadeSum(geom, dt.itemsize, False, exact, threads).run(part))
        return out
    return CascadeSum(geom, dt.itemsize, dt in LOWP, _store_rounding(dt), threads).run(a)


def cascade(self: TensorBase, dt: D.dtype, axes, ignore_nan: bool = False) -> np.ndarray:
    """Upstream's floating sum of ``self`` cast to ``dt`` over ``axes``, keepdim-shaped; a
    float16/bfloat16 sum is returned in float32 (rounded into dt where upstream rounds)."""
    a, strides = iterated(self, dt)
    geom = geometry(self._size, strides, axes)
    if a.size == 0:
        return np.zeros(geom.out_shape, a.dtype)
    if dt in LOWP and not ignore_nan and geom.acc_buffer():
        # ReduceOps.cpp sum_out: the whole sum is redone on self.to(float), rounded once
        a, strides = iterated(self, _F32)
        return _run_cascade(a, geometry(self._size, strides, axes), _F32)
    if ignore_nan:
        a = np.where(np.isnan(a), a.dtype.type(0), a)
    return _run_cascade(a, geom, dt)


# ---- sum, nansum, mean, nanmean -----------------------------------------------------------------

def sum_dtype(self: TensorBase, dtype) -> D.dtype:
    """get_dtype_from_self(self, dtype, promote_integers=True)."""
    if dtype is not None:
        return dtype
    return INT64 if is_integral(self.dtype) else self.dtype


def sum_values(self: TensorBase, out_dt: D.dtype, axes, keepdim, ignore_nan=False,
               name="sum_cpu") -> np.ndarray:
    """The (wide) sums upstream's sum kernel computes into a result of dtype ``out_dt``."""
    dispatch(name, out_dt, SUM_TYPES)
    # make_reduction_from_out_ty: the input is cast to the result dtype (complex stays complex)
    in_dt = out_dt.to_complex() if self._dtype in COMPLEX_T and out_dt not in COMPLEX_T else out_dt
    if in_dt.is_floating_point or in_dt.is_complex:
        s = cascade(self, in_dt, axes, ignore_nan)
        if not keepdim:
            s = s.reshape(reduced_size(self, axes, False))
    else:
        s = pairwise_sum(as_compute(self, in_dt), axes, keepdim)
    if in_dt is not out_dt:  # complex sum into a real result: the copy drops the imaginary part
        s = cast_array(s.astype(D.numpy_dtype(in_dt)), in_dt, out_dt)
    return s


def dense_sum_plan(self, dim, keepdim):
    """The array function computing ``self.sum(dim, keepdim)`` (no dtype argument) from a
    C-contiguous ``self``'s array, as the sum kernel would, or None where the kernel's general
    steps decide. Call the function it returns in the quiet float state."""
    if self._math_bits:
        return None
    x = self._np
    if x is None or not x.flags.c_contiguous:
        return None
    key = (x.shape, self._dtype, dim if dim is None or type(dim) is int else tuple(dim), keepdim)
    plan = _COL_PLANS.get(key)
    if plan is None:
        plan = _COL_PLANS[key] = col_plan(self, dim, keepdim) or False
    if plan:
        return plan
    rows = _ROW_SUM_PLANS.get(key)
    if rows is None:
        rows = _ROW_SUM_PLANS[key] = sum_rows_plan(self, dim, keepdim) or False
    return rows or None


@kernel("sum.dim_IntList")
def sum_dim(self, dim, keepdim=False, *, dtype=None):
    if dtype is None:
        run = dense_sum_plan(self, dim, keepdim)
        if run is not None:
            return from_result(run(self._np), self._dtype)
    out_dt = sum_dtype(self, dtype)
    return finish(sum_values(self, out_dt, reduce_axes(self, dim), keepdim), out_dt)


@kernel("sum")
def sum_all(self, *, dtype=None):
    return sum_dim(self, None, False, dtype=dtype)


@kernel("nansum")
def nansum(self, dim=None, keepdim=False, *, dtype=None):
    if self.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if is_integral(self.dtype):
        return sum_dim(self, dim, keepdim, dtype=dtype)
    out_dt = dtype if dtype is not None else self.dtype
    dispatch("nansum_cpu", out_dt, FLOAT_LOWP)
    values = sum_values(self, out_dt, reduce_axes(self, dim), keepdim, ignore_nan=True,
                        name="nansum_cpu")
    return finish(values, out_dt)


def _check_mean_dtype(self, dtype):
    in_dt = sum_dtype(self, dtype)
    if not (in_dt.is_floating_point or in_dt.is_complex):
        what, dt = ("Optional", dtype) if dtype is not None else ("Input", self.dtype)
        raise RuntimeError("mean(): could not infer output dtype. " + what + " dtype must be "
                           f"either a floating point or complex dtype. Got: {dt._cpp_name}")


@kernel("mean.dim")
def mean_dim(self, dim, keepdim=False, *, dtype=None):
    if dtype is None:
        x = self._np
        if x is not None and x.flags.c_contiguous:
            key = (x.shape, self._dtype, dim if dim is None or type(dim) is int else tuple(dim),
                   keepdim)
            plan = _MEAN_PLANS.get(key)
            if plan is None:
                plan = _MEAN_PLANS[key] = mean_plan(self, dim, keepdim) or False
            if plan:
                return from_result(plan(x), self._dtype)
    # ReduceOps.cpp mean_out on CPU: the sum (float16/bfloat16 summed into float32), divided
    # by the count in the sum's dtype, then rounded into the result's dtype
    _check_mean_dtype(self, dtype)
    out_dt = dtype if dtype is not None else self.dtype
    axes = reduce_axes(self, dim)
    n = self.numel() if not dim_list(dim) or self.dim() == 0 else reduced_numel(self, axes)
    s = sum_values(self, _F32 if out_dt in LOWP else out_dt, axes, keepdim, name="sum_cpu")
    return finish(s / s.dtype.type(n), out_dt)   # 0 / 0: NaN, as upstream


@kernel("mean")
def mean_all(self, *, dtype=None):
    return mean_dim(self, None, False, dtype=dtype)


@kernel("nanmean", composite=True)
def nanmean(self, dim=None, keepdim=False, *, dtype=None):
    # CompositeImplicitAutograd upstream, with no Python decomposition: written as ReduceOps.cpp
    from ..dispatch.call import call

    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {self.dtype._cpp_name}")
    factor = call("sum.dim_IntList", call("logical_not", call("isnan", self)), dim, keepdim)
    return call("div.Tensor", call("nansum", self, dim, keepdim, dtype=dtype), factor)


@kernel("nanmean.out", composite=True)
def nanmean_out(self, dim=None, keepdim=False, *, dtype=None, out):
    from ..dispatch.call import call

    if is_integral(self.dtype):
        raise RuntimeError("nanmean(): integral types and 'Bool' are not supported for nanmean, "
                           "even for empty tensors.")
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {self.dtype._cpp_name}")
    factor = call("sum.dim_IntList", call("logical_not", call("isnan", self)), dim, keepdim)
    call("nansum.out", self, dim, keepdim, dtype=dtype, out=out)
    return call("div_.Tensor", out, factor)


# ---- prod -------------------------------------------------------------------------------------

def _prod(self, axes, keepdim, dtype):
    out_dt = sum_dtype(self, dtype)
    dispatch("prod_out_cpu", out_dt, SUM_TYPES)
    in_dt = out_dt.to_complex() if self.dtype.is_complex and not out_dt.is_complex else out_dt
    a = widened(as_compute(self, in_dt))
    with np.errstate(all="ignore"):
        p = np.multiply.reduce(a, axis=axes, dtype=a.dtype, keepdims=keepdim)
    if in_dt is not out_dt:
        from ..core.cast import cast_array

        p = cast_array(p.astype(D.numpy_dtype(in_dt)), in_dt, out_dt)
    return finish(p, out_dt)


@kernel("prod")
def prod_all(self, *, dtype=None):
    return _prod(self, tuple(range(self.dim())), False, dtype)


@kernel("prod.dim_int")
def prod_dim(self, dim, keepdim=False, *, dtype=None):
    return _prod(self, reduce_axes(self, [dim]), keepdim, dtype)


# ---- logsumexp --------------------------------------------------------------------------------

@kernel("logsumexp")
def logsumexp(self, dim, keepdim=False):
    dims = dim_list(dim)
    axes = reduce_axes(self, dims)
    out_dt = D.get_default_dtype() if is_integral(self.dtype) else self.dtype
    if not dims and self.dim():
        # upstream: amax over [] keeps every dim as 1, the sum over [] drops them, and the
        # in-place add of one into the other fails
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                           f"{[1] * self.dim()}")
    x = widened(as_compute(self, out_dt))
    with np.errstate(all="ignore"):
        if x.size == 0:
            return finish(np.log(np.add.reduce(np.exp(x), axis=axes, keepdims=keepdim)), out_dt)
        # max of the real part, infinities replaced by 0 (ReduceOps.cpp logsumexp_out_impl)
        m = np.maximum.reduce(x.real, axis=axes, keepdims=True)
        m = np.where(np.isinf(m), 0.0, m)
        s = np.add.reduce(np.exp(x - m), axis=axes, keepdims=keepdim)
        r = np.log(s) + (m if keepdim else m.reshape(s.shape))
    return finish(r, out_dt)


# ---- any, all, count_nonzero ------------------------------------------------------------------

def _truth(self) -> np.ndarray:
    a = arr(self)
    if self.dtype in LOWP or self.dtype in D.BIT_STORED:
        a = as_compute(self, self.dtype)
    return a if a.dtype == np.bool_ else a != 0


def _allany(self, dim, keepdim, is_all, empty_means_all=True):
    axes = reduce_axes(self, dim, empty_means_all=empty_means_all)
    out_dt = UINT8 if self.dtype is UINT8 else BOOL
    ufunc = np.logical_and if is_all else np.logical_or
    r = ufunc.reduce(_truth(self), axis=axes, keepdims=keepdim) if axes else \
        _truth(self).copy()
    return finish(r, out_dt)


@kernel("all")
def all_all(self):
    return _allany(self, None, False, True)


@kernel("all.dim")
def all_dim(self, dim, keepdim=False):
    return _allany(self, [dim], keepdim, True)


@kernel("all.dims")
def all_dims(self, dim=None, keepdim=False):
    return _allany(self, dim, keepdim, True, empty_means_all=False)


@kernel("any")
def any_all(self):
    return _allany(self, None, False, False)


@kernel("any.dim")
def any_dim(self, dim, keepdim=False):
    return _allany(self, [dim], keepdim, False)


@kernel("any.dims")
def any_dims(self, dim=None, keepdim=False):
    return _allany(self, dim, keepdim, False, empty_means_all=False)


@kernel("count_nonzero.dim_IntList")
def count_nonzero_dims(self, dim):
    axes = reduce_axes(self, dim)
    dispatch("nonzero_count_cpu", self.dtype, ALL_LOWP_BOOL | COMPLEX_T)
    return finish(np.count_nonzero(_truth(self), axis=axes) if axes else
                  _truth(self).astype(np.int64), INT64)


@kernel("count_nonzero")
def count_nonzero(self, dim=None):
    return count_nonzero_dims(self, [] if dim is None else [dim])
