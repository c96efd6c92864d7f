"""Which operators reach their kernels for the dtypes stored as bit patterns.

float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) and complex32 live in numpy as structured dtypes
(``core/float8.py``, ``core/complex_half.py``): a kernel that moves bytes handles them as they are,
one that computes must decode them first. Upstream's CPU build also supports few operators on
them. So a call with such a tensor (or ``dtype=``) reaches its kernel only if the operator is a
view or is listed below as one upstream computes and our kernel handles; an operator upstream
refuses raises upstream's error (measured on torch 2.13.0: the AT_DISPATCH name its kernel
gives); any other refuses by name. Nothing computes on raw bits by accident.
"""

from __future__ import annotations

from ..core import dtypes as D
from ..core.refuse import TorchnativeNotImplementedError

# Byte movers and value-free operators: their kernels copy, index or allocate storage elements.
_MOVES = frozenset("""
    clone copy_ _to_copy _copy_from _copy_from_and_resize cat stack index.Tensor index_select
    masked_select index_put_ index_put _index_put_impl_ _unsafe_index_put where.self
    empty.memory_format empty_like empty_strided new_empty new_empty_strided zeros_like zero_
    zeros fill_.Scalar fill_.Tensor ones_like full full_like new_full new_zeros new_ones ones
    constant_pad_nd roll repeat narrow_copy diag diag_embed contiguous _local_scalar_dense
    lift_fresh lift_fresh_copy detach_ set_.source_Storage set_.source_Storage_storage_offset
    set_.source_Tensor set_ resize_ _resize_output_ resolve_conj resolve_neg _conj_physical
    conj_physical is_same_size is_nonzero item squeeze_ unsqueeze_ t_ transpose_ as_strided_
    detach_copy alias_copy _reshape_copy view_copy expand_copy permute_copy select_copy.int
    slice_copy.Tensor unbind_copy.int split_copy.Tensor _unsafe_view
    _is_zerotensor is_pinned _pin_memory is_floating_point is_complex is_conj is_neg is_signed
    is_inference _has_compatible_shallow_copy_type sym_size.int sym_stride.int sym_numel
    sym_storage_offset is_contiguous is_set_to chalf
""".split())

# Computing operators upstream's CPU build runs on every float8 type (kernels decode first).
_FLOAT8 = _MOVES | frozenset("""
    abs mul.Tensor eq.Tensor eq.Scalar ne.Tensor ne.Scalar isnan any all any.dim all.dim
    any.dims all.dims mm eye eye.m _to_dense
""".split())

# ... and on complex32 (computed in complex64, rounded per part, as upstream's opmath does).
_COMPLEX32 = _MOVES | frozenset("""
    add.Tensor add.Scalar sub.Tensor sub.Scalar mul.Tensor mul.Scalar neg abs eq.Tensor eq.Scalar
    ne.Tensor ne.Scalar isnan isinf isfinite sgn nonzero any all any.dim all.dim any.dims all.dims
    masked_fill.Scalar masked_fill_.Scalar masked_fill.Tensor masked_fill_.Tensor tril triu tril_
    triu_ randn normal_ uniform_ rand isclose allclose _conj view_as_real real imag complex.out
""".split())

# e5m2, the one float8 type with infinities, also has upstream's isinf kernel.
ALLOWED = {"float8": _FLOAT8, "float8_e5m2": _FLOAT8 | {"isinf"}, "complex32": _COMPLEX32}

# Upstream's refusals: the name AT_DISPATCH reports (NotImplementedError "'<name>' not implemented
# for '<type>'"), by operator (its name before the overload). Measured on torch 2.13.0's CPU build.
_COMMON = {
    "div": "div_cpu", "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "sum": "sum_cpu", "mean": "sum_cpu", "max": "max_all", "min": "min_all", "flip": "flip_cpu",
    "equal": "equal_notnan_cpu", "exp": "exp_vml_cpu", "sqrt": "sqrt_vml_cpu",
    "cumsum": "cumsum_out_cpu", "prod": "prod_out_cpu", "_unique2": "unique", "unique_dim": "unique",
    "angle": "angle_cpu", "pow": "pow", "reciprocal": "reciprocal_cpu", "tanh": "tanh_vml_cpu",
    "sin": "sin_vml_cpu", "log": "log_vml_cpu", "amax": "max_values_cpu", "nan_to_num": "nan_to_num",
    "arange": "arange_cpu", "linspace": "linspace_cpu", "bmm": "bmm", "dot": "dot", "vdot": "dot",
    "masked_scatter": "masked_scatter", "masked_scatter_": "masked_scatter",
    "scatter": "scatter_gather_tensor_cpu", "scatter_": "scatter_gather_tensor_cpu",
    "cumprod": "cumprod_out_cpu",
}
_REFUSED = {
    "float8": {**_COMMON, "add": "add_stub", "sub": "add_stub", "neg": "neg_cpu",
               "sort": "sorting_kernel_method_name", "topk": "topk_cpu", "isinf": "isinf",
               "isfinite": "isfinite", "sign": "sign_cpu", "sgn": "sign_cpu",
               "clamp_min": "clamp_min_scalar_cpu", "clamp": "clamp_scalar_cpu",
               "nonzero": "nonzero_count_cpu", "argmax": "argmax_cpu", "argmin": "argmin_cpu",
               "gather": "gather_expanded_index", "masked_fill": "masked_fill",
               "masked_fill_": "masked_fill", "sigmoid": "sigmoid_cpu_reduced_float",
               "maximum": "maximum_cpu", "minimum": "minimum_cpu", "tril": "tril", "triu": "triu",
               "normal_": "normal_kernel_cpu", "normal": "normal_kernel_cpu",
               "randn": "normal_kernel_cpu", "uniform_": "check_uniform_bounds",
               "rand": "check_uniform_bounds", "relu": "clamp_min_scalar_cpu",
               "mul": "mul_cpu_reduced_float", "allclose": "mul_cpu_reduced_float",
               "isclose": "mul_cpu_reduced_float"},
    "complex32": {**_COMMON, "mm": "addmm_impl_cpu_", "addmm": "addmm_impl_cpu_",
                  "gather": "scatter_gather_tensor_cpu", "sigmoid": "sigmoid_cpu", "eye": "eye"},
}
# complex32's refusals that are RuntimeErrors of their own (upstream's complex checks).
_COMPLEX_ERRORS = {
    "sort": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "topk": (RuntimeError, " topk does not support complex dtypes on CPU"),
    "argmax": (RuntimeError, "argmax(): does not support complex input"),
    "argmin": (RuntimeError, "argmin(): does not support complex input"),
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "sign": (NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex "
             "numbers. Please use torch.sgn instead."),
    "clamp": (NotImplementedError, "clamp is not supported for complex types"),
    "clamp_min": (NotImplementedError, "clamp is not supported for complex types"),
    "clamp_max": (NotImplementedError, "clamp is not supported for complex types"),
    "relu": (NotImplementedError, "clamp is not supported for complex types"),
    "_fft_c2c": (RuntimeError, "MKL FFT doesn't support tensors of type: Half"),
    "_fft_c2r": (RuntimeError, "MKL FFT doesn't support tensors of type: Half"),
}


def family(dt: D.dtype) -> str:
    return "complex32" if dt._name == "complex32" else "float8"


def reaches_kernel(short: str, is_view: bool, dt: D.dtype) -> bool:
    return is_view or short in ALLOWED.get(dt._name, ALLOWED[family(dt)])


def refusal(short: str, dt: D.dtype) -> Exception:
    """The error a call of ``short`` (``name.overload``) on ``dt`` raises when it does not reach
    its kernel: upstream's where measured, else a refusal naming the operator and dtype."""
    fam = family(dt)
    base = short.split(".", 1)[0]
    if fam == "complex32" and base in _COMPLEX_ERRORS:
        kind, msg = _COMPLEX_ERRORS[base]
        return kind(msg)
    name = _REFUSED[fam].get(base)
    if name is not None:
        return NotImplementedError(f'"{name}" not implemented for \'{dt._cpp_name}\'')
    return TorchnativeNotImplementedError(
        f"aten::{short} on {dt!r}",
        "not checked against upstream for this dtype, whose storage is bit patterns")
