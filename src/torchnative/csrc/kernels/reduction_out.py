"""``out=`` overloads of the reductions whose upstream semantics differ from the door's generic
derivation (compute the functional result, check it casts, copy it in; structured.py):

- the result dtype comes from ``out`` (sum, prod, nansum, mean, cumsum, cumprod, var, std):
  the input is cast to it first and the reduction runs in it, as upstream's meta functions
  infer the dtype from the result tensor;
- ``out`` must have exactly the dtype upstream allocates (selecting reductions, sort, topk,
  norms, scans with indices...), each op checking with its own message.
"""

from __future__ import annotations

from ..platform.cpp_names import typemeta
from ..core import dtypes as D
from ..dispatch.structured import resize_out, write_into
from .support.common import INT64
from ..core.mem_overlap import assert_no_overlap
from .reduction import (all_all, all_dim, all_dims, any_all, any_dim, any_dims, finish, logsumexp,
                        mean_dim, nansum, prod_all, prod_dim, sum_dim)
from .reduction_minmax import (_aminmax_all, _aminmax_dim, aminmax, amax, amin, argmax, argmin,
                               max_dim, min_dim)
from .reduction_scan import _logcumsumexp, cummax, cummin, cumprod, cumsum
from .reduction_stats import (linalg_vector_norm, norm_dim, norm_dim_dtype, std, var)
from .reduction_count import histc
from ..ops.kernel_registry import kernel
from .sorting import kthvalue, median_dim, mode, nanmedian_dim, sort, sort_stable, topk

BOOL, UINT8 = D.BY_NAME["bool"], D.BY_NAME["uint8"]

def _ctype(dt) -> str:
    return typemeta(dt._name, dt._cpp_name)


def _legacy(dt) -> str:
    return f"torch.{dt._cpp_name}Tensor"


def _out_kernel(name, functional, outs, check=None, dtype_from_out=False):
    """Register ``name``: ``check(self, *outs)``, compute ``functional`` (with ``dtype`` taken
    from the first output when asked), resize and write each output."""

    def run(*args, **kwargs):
        dests = [kwargs.pop(n) for n in outs]
        if check is not None:
            check(args[0], *dests)
        if dtype_from_out and kwargs.get("dtype") is None:
            kwargs["dtype"] = dests[0].dtype
        result = functional(*args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        for dest, r in zip(dests, results):
            resize_out(dest, r._size)
            write_into(dest, r)
        return tuple(dests) if len(dests) > 1 else dests[0]

    run.__name__ = name
    kernel(name)(run)


def _exact(*expected):
    """Outputs must have these dtypes ("self" = the input's): "Expected out tensor to have ..."."""
    def check(self, *dests):
        for want, dest in zip(expected, dests):
            want = self.dtype if want == "self" else want
            if dest.dtype is not want:
                raise RuntimeError(f"Expected out tensor to have dtype {_ctype(want)}, but got "
                                   f"{_ctype(dest.dtype)} instead")
    return check


def _same_as_input(self, out):
    if out.dtype is not self.dtype:
        raise RuntimeError(f"Expected the dtype for input and out to match, but got "
                           f"{self.dtype._cpp_name} for input's dtype and {out.dtype._cpp_name} "
                           "for out's dtype.")


def _scalar_type_equal(self, *dests):
    """check_scalar_type_device_layout_equal: values like the input, indices int64."""
    for want, dest in zip((self.dtype, INT64), dests):
        if dest.dtype is not want:
            raise RuntimeError(f"expected scalar_type {want._cpp_name} but found "
                               f"{dest.dtype._cpp_name}")


def _bytebool(name):
    def check(self, out):
        if out.dtype not in (BOOL, UINT8):
            raise RuntimeError(f"{name} only supports bool tensor for result, got: "
                               f"{out.dtype._cpp_name}")
    return check


def _with_out_dtype(functional):
    """The functional kernel run on the input cast to ``out``'s dtype (var/std.correction_out)."""
    def run(self, *args, out_dtype=None, **kwargs):
        if out_dtype is not None and self.dtype.to_real() is not out_dtype and \
                not self.dtype.is_complex:
            from .support.common import as_compute

            self = finish(as_compute(self, out_dtype), out_dtype)
        return functional(self, *args, **kwargs)
    return run


# ---- the result dtype comes from out ------------------------------------------------------------

for _name, _fn in (("sum.IntList_out", sum_dim), ("prod.int_out", prod_dim),
                   ("nansum.out", nansum), ("cumsum.out", cumsum), ("cumprod.out", cumprod)):
    _out_kernel(_name, _fn, ["out"], dtype_from_out=True)
_out_kernel("sum.out", lambda self, *, dtype=None: sum_dim(self, None, False, dtype=dtype),
            ["out"], dtype_from_out=True)
_out_kernel("prod.out", prod_all, ["out"], dtype_from_out=True)


def _mean_check(self, out):
    if not (out.dtype.is_floating_point or out.dtype.is_complex):
        # upstream sums into the integer result, then its in-place true division fails
        raise RuntimeError(f"result type {D.get_default_dtype()._cpp_name} can't be cast to the "
                           f"desired output type {out.dtype._cpp_name}")


_out_kernel("mean.out", mean_dim, ["out"], _mean_check, dtype_from_out=True)


def _mean_dtype_check(self, out):
    from ..core.promotion import can_cast

    if not can_cast(self.dtype, out.dtype):
        raise RuntimeError("mean.dtype_out(): input types can't be cast to the desired output "
                           f"type {out.dtype._cpp_name}")


_out_kernel("mean.dtype_out", lambda self, *, dtype=None: mean_dim(self, None, False, dtype=dtype),
            ["out"], _mean_dtype_check, dtype_from_out=True)


def _var_out(functional, name):
    def run(self, dim=None, *, correction=None, keepdim=False, out):
        from ..core.promotion import can_cast

        if not self.dtype.is_complex and not can_cast(self.dtype, out.dtype):
            raise RuntimeError(f"result type {self.dtype._cpp_name} can't be cast to the desired "
                               f"output type {out.dtype._cpp_name}")
        r = _with_out_dtype(functional)(self, dim, correction=correction, keepdim=keepdim,
                                        out_dtype=out.dtype if out.dtype.is_floating_point
                                        else None)
        resize_out(out, r._size)
        write_into(out, r)
        return out

    run.__name__ = name
    kernel(name)(run)


_var_out(var, "var.correction_out")
_var_out(std, "std.correction_out")


def _logsumexp_check(self, out):
    if not (out.dtype.is_floating_point or out.dtype.is_complex):
        raise RuntimeError("logsumexp(): Expected floating point type for result tensor, but got: "
                           f"{out.dtype._cpp_name}")


_out_kernel("logsumexp.out", logsumexp, ["out"], _logsumexp_check)

# ---- out must have the dtype upstream allocates -------------------------------------------------

_out_kernel("amax.out", amax, ["out"], _same_as_input)
_out_kernel("amin.out", amin, ["out"], _same_as_input)
_out_kernel("max.dim_max", max_dim, ["max", "max_values"], _exact("self", INT64))
_out_kernel("min.dim_min", min_dim, ["min", "min_indices"], _exact("self", INT64))
_out_kernel("argmax.out", argmax, ["out"], _exact(INT64))
_out_kernel("argmin.out", argmin, ["out"], _exact(INT64))
_out_kernel("aminmax.out", aminmax, ["min", "max"], _exact("self", "self"))
_out_kernel("_aminmax.out", _aminmax_all, ["out0", "out1"], _exact("self", "self"))
_out_kernel("_aminmax.dim_out", _aminmax_dim, ["out0", "out1"], _exact("self", "self"))
_out_kernel("sort.values_stable", sort_stable, ["values", "indices"], _exact("self", INT64))
_out_kernel("sort.values", sort, ["values", "indices"], _exact("self", INT64))
_out_kernel("topk.values", topk, ["values", "indices"], _exact("self", INT64))


def _norm_exact(dtype_of):
    def check(self, out):
        want = dtype_of(self)
        if out.dtype is not want:
            raise RuntimeError(f"Expected out tensor to have dtype {_ctype(want)}, but got "
                               f"{_ctype(out.dtype)} instead")
    return check


def _vector_norm_out(self, ord=2, dim=None, keepdim=False, *, dtype=None, out):
    _norm_exact(lambda s: (dtype or s.dtype).to_real())(self, out)
    r = linalg_vector_norm(self, ord, dim, keepdim, dtype=dtype)
    resize_out(out, r._size)
    write_into(out, r)
    return out


kernel("linalg_vector_norm.out")(_vector_norm_out)
_out_kernel("norm.out", norm_dim, ["out"], _norm_exact(lambda s: s.dtype.to_real()))


def _norm_dtype_out(self, p, dim, keepdim, *, dtype, out):
    _norm_exact(lambda s: dtype.to_real())(self, out)
    r = norm_dim_dtype(self, p, dim, keepdim, dtype=dtype)
    resize_out(out, r._size)
    write_into(out, r)
    return out


kernel("norm.dtype_out")(_norm_dtype_out)

_out_kernel("cummax.out", cummax, ["values", "indices"], _scalar_type_equal)
_out_kernel("cummin.out", cummin, ["values", "indices"], _scalar_type_equal)
_out_kernel("logcumsumexp.out", _logcumsumexp, ["out"], _scalar_type_equal)

def _allany_out(name, functional, what):
    """The input is cast to the result's dtype first (make_reduction_from_out_ty): into a uint8
    result, 0.5 counts as 0."""
    def run(self, *args, out, **kwargs):
        _bytebool(what)(self, out)
        if out.dtype is UINT8 and self.dtype is not UINT8:
            from .support.common import as_compute

            self = finish(as_compute(self, UINT8), UINT8)
        r = functional(self, *args, **kwargs)
        resize_out(out, r._size)
        write_into(out, r)
        return out

    run.__name__ = name
    kernel(name)(run)


for _name, _fn, _what in (("any.out", any_dim, "any"), ("any.dims_out", any_dims, "any"),
                          ("any.all_out", any_all, "any"), ("all.out", all_dim, "all"),
                          ("all.dims_out", all_dims, "all"), ("all.all_out", all_all, "all")):
    _allany_out(_name, _fn, _what)


def _kthvalue_check(self, values, indices):
    assert_no_overlap(self, values)  # Sorting.cpp checks it before sizing the outputs
    if values.dtype is not self.dtype:
        raise RuntimeError("output values must be of same type as input")
    if indices.dtype is not INT64:
        raise RuntimeError("output indices must be of scalar type Long")


_out_kernel("kthvalue.values", kthvalue, ["values", "indices"], _kthvalue_check)


def _median_check(self, values, indices):
    if indices.dtype is not INT64:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have scalar type Long; "
                           f"but got {_legacy(indices.dtype)} instead (while checking arguments "
                           "for median)")
    if values.dtype is not self.dtype:
        raise RuntimeError("Expected tensor for 'values' to have the same type as tensor for "
                           f"argument #2 'self'; but type {_legacy(values.dtype)} does not equal "
                           f"{_legacy(self.dtype)} (while checking arguments for median)")


_out_kernel("median.dim_values", median_dim, ["values", "indices"], _median_check)
_out_kernel("nanmedian.dim_values", nanmedian_dim, ["values", "indices"], _median_check)


def _mode_check(self, values, indices):
    for what, want, dest in (("values", self.dtype, values), ("indices", INT64, indices)):
        if dest.dtype is not want:
            raise RuntimeError(f"expected scalar type '{want._cpp_name}' but got "
                               f"'{dest.dtype._cpp_name}' for {what} output")


_out_kernel("mode.values", mode, ["values", "indices"], _mode_check)


def _histc_check(self, out):
    if out.dtype is not self.dtype:
        raise RuntimeError("torch.histogram: input tensor and hist tensor should have the same "
                           f"dtype, but got input {_ctype(self.dtype)} and hist "
                           f"{_ctype(out.dtype)}")


_out_kernel("histc.out", histc, ["out"], _histc_check)
