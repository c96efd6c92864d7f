"""The CompositeImplicitAutograd linalg operators (BatchLinearAlgebra.cpp, LinearAlgebra.cpp),
written as upstream's C++ writes them: each calls the explicit kernels through the door, so
autograd differentiates those and modes see the same operators. ``*_ex`` wrappers drop the info
tensors; the plain forms raise on them with _linalg_check_errors' message.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.tensor import wrap_dim
from ..dispatch.call import call
from ..dispatch.structured import resize_out, typemeta_name, write_into
from ..ops.kernel_registry import COMPOSITE, kernel
from .composite_out import register_out_forms, register_out_kernels
from .linalg_common import (C64, C128, F32, F64, check_errors, check_floating_or_complex,
                            check_is_matrix, check_square, float_or_double)
from .support.common import arr, int_list
from .support.nn_util import may_require_fw_or_bw_grad
from ..platform.torch_warn import torch_warn


@kernel("_linalg_check_errors", meta=True)
def _linalg_check_errors(info, api_name, is_matrix):
    if info.device.type != "meta":  # as upstream's kernel: a meta info has nothing to check
        check_errors(arr(info), api_name, is_matrix)


def _raise_info(info, api, is_matrix):
    # an operator of its own, as upstream: a meta (or fake) info has no values to check
    call("_linalg_check_errors", info, api, is_matrix=is_matrix)


# --- determinants and inverses ----------------------------------------------------------------

@kernel("linalg_det", composite=True)
def linalg_det(A):
    return call("_linalg_det", A)[0]


@kernel("det", composite=True)
def det(self):
    return call("linalg_det", self)


@kernel("linalg_slogdet", composite=True)
def linalg_slogdet(A):
    sign, logabsdet, _, _ = call("_linalg_slogdet", A)
    return sign, logabsdet


@kernel("slogdet", composite=True)
def slogdet(self):
    return call("linalg_slogdet", self)


@kernel("logdet", composite=True)
def logdet(A):
    check_square(A, "logdet")
    check_floating_or_complex(A, "logdet")
    sign, logabsdet = call("linalg_slogdet", A)
    if A.dtype.is_complex:
        return call("add.Tensor", call("log", sign), logabsdet)
    nan = call("scalar_tensor", float("nan"), dtype=logabsdet.dtype)
    return call("where.self", call("eq.Scalar", sign, -1.0), nan, logabsdet)


@kernel("linalg_inv", composite=True)
def linalg_inv(A):
    result, info = call("linalg_inv_ex", A)
    _raise_info(info, "linalg.inv", A.dim() == 2)
    return result


@kernel("inverse", composite=True)
def inverse(self):
    return call("linalg_inv", self)


# --- solvers ----------------------------------------------------------------------------------

@kernel("linalg_solve_ex", composite=True)
def linalg_solve_ex(A, B, *, left=True, check_errors=False):
    result, _, _, info = call("_linalg_solve_ex", A, B, left=left, check_errors=check_errors)
    return result, info


@kernel("linalg_solve", composite=True)
def linalg_solve(A, B, *, left=True):
    result, info = call("linalg_solve_ex", A, B, left=left)
    _raise_info(info, "torch.linalg.solve", A.dim() == 2)
    return result


@kernel("linalg_cholesky", composite=True)
def linalg_cholesky(A, *, upper=False):
    L, info = call("linalg_cholesky_ex", A, upper=upper)
    _raise_info(info, "linalg.cholesky", A.dim() == 2)
    return L


@kernel("linalg_lu_factor", composite=True)
def linalg_lu_factor(A, *, pivot=True):
    LU, pivots, info = call("linalg_lu_factor_ex", A, pivot=pivot)
    _raise_info(info, "torch.linalg.lu_factor", A.dim() == 2)
    return LU, pivots


@kernel("_lu_with_info", composite=True)
def _lu_with_info(self, pivot=True, check_errors=True):
    return call("linalg_lu_factor_ex", self, pivot=pivot)


@kernel("lu_solve", composite=True)
def lu_solve(self, LU_data, LU_pivots):
    return call("linalg_lu_solve", LU_data, LU_pivots, self)


# --- decompositions ---------------------------------------------------------------------------

@kernel("linalg_eigh", composite=True)
def linalg_eigh(A, UPLO="L"):
    return call("_linalg_eigh", A, UPLO, True)


@kernel("linalg_eigvalsh", composite=True)
def linalg_eigvalsh(A, UPLO="L"):
    return call("_linalg_eigh", A, UPLO, may_require_fw_or_bw_grad(A))[0]


@kernel("linalg_eigvals", composite=True)
def linalg_eigvals(A):
    if may_require_fw_or_bw_grad(A):
        return call("linalg_eig", A)[0]
    return call("_linalg_eigvals", A)


@kernel("linalg_svd", composite=True)
def linalg_svd(A, full_matrices=True, *, driver=None):
    return call("_linalg_svd", A, full_matrices, True, driver=driver)


@kernel("linalg_svdvals", composite=True)
def linalg_svdvals(A, *, driver=None):
    return call("_linalg_svd", A, False, may_require_fw_or_bw_grad(A), driver=driver)[1]


@kernel("svd", composite=True)
def svd(self, some=True, compute_uv=True):
    if self.dim() < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                           f"{self.dim()} dimensions instead")
    if compute_uv:
        U, S, Vh = call("linalg_svd", self, not some)
    else:
        S = call("linalg_svdvals", self)
        m, n = self.shape[-2], self.shape[-1]
        batch = list(self.shape[:-2])
        U = call("zeros", batch + [m, m], dtype=self.dtype, device=self.device)
        Vh = call("zeros", batch + [n, n], dtype=self.dtype, device=self.device)
    return U, S, call("adjoint", Vh)


@kernel("linalg_svd.U", composite=True)
def linalg_svd_out(A, full_matrices=True, *, driver=None, U, S, Vh):
    return _svd_into((U, S, Vh), call("_linalg_svd", A, full_matrices, True, driver=driver))


@kernel("linalg_svdvals.out", composite=True)
def linalg_svdvals_out(A, *, driver=None, out):
    _svd_into((out,), call("_linalg_svd", A, False, False, driver=driver)[1:2])
    return out


def _svd_into(outs, results):
    """_linalg_svd's structured out=: each out must have the result's dtype; one resized
    takes the result's strides (column-major U and Vh)."""
    for dest, res in zip(outs, results):
        if res.dtype != dest.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {typemeta_name(res.dtype)}, "
                               f"but got {typemeta_name(dest.dtype)} instead")
    for dest, res in zip(outs, results):
        if tuple(dest.shape) != tuple(res.shape):
            resize_out(dest, res.shape)
            call("as_strided_", dest, list(res.shape), list(res.stride()))
        write_into(dest, res)
    return tuple(outs)


@kernel("svd.U", composite=True)
def svd_out(self, some=True, compute_uv=True, *, U, S, V):
    # V receives Vh through a transposed view, then is conjugated in place: the functional's
    # lazy conjugate view has no out= counterpart
    if compute_uv:
        if V.dim() >= 2:
            call("transpose_", V, -2, -1)
        call("linalg_svd.U", self, not some, U=U, S=S, Vh=V)
        call("transpose_", V, -2, -1)
        if V.dtype.is_complex:
            call("conj_physical_", V)
        return U, S, V
    for dest in (U, V):
        if dest.dtype != self.dtype:
            raise RuntimeError(f"torch.svd: Expected out tensor to have dtype "
                               f"{self.dtype._cpp_name} but got {dest.dtype._cpp_name} instead")
    call("linalg_svdvals.out", self, out=S)
    batch, m, n = list(self.shape[:-2]), self.shape[-2], self.shape[-1]
    for dest, shape in ((U, batch + [m, m]), (V, batch + [n, n])):
        resize_out(dest, shape)
        call("zero_", dest)
    return U, S, V


@kernel("qr", composite=True)
def qr(self, some=True):
    return call("linalg_qr", self, "reduced" if some else "complete")


@kernel("orgqr", composite=True)
def orgqr(self, input2):
    return call("linalg_householder_product", self, input2)


@kernel("matrix_exp", composite=True)
def matrix_exp(self):
    return call("linalg_matrix_exp", self)


@kernel("linalg_diagonal", composite=True)
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return call("diagonal", A, offset, dim1, dim2)


# --- norms ------------------------------------------------------------------------------------

def _backshift(d0, d1, ndim):
    return [d for d in range(ndim) if d not in (d0, d1)] + [d0, d1]


def _reverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _matrix_norm_checks(A, dim, dtype, low_precision):
    check_is_matrix(A, "linalg.matrix_norm")
    check_floating_or_complex(A, "linalg.matrix_norm", allow_low=low_precision)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {int_list(dim)}")
    dim = [wrap_dim(d, A.dim()) for d in dim]
    if dim[0] == dim[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    _check_norm_dtype(dtype, A.dtype, "linalg.matrix_norm")
    return dim


def _check_norm_dtype(dtype, self_dtype, name):
    if dtype is None:
        return
    from ..core.promotion import promote_types

    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{dtype._cpp_name}")
    if self_dtype.is_complex != dtype.is_complex:
        raise RuntimeError(f"{name}: dtype should be complex if and only if self is complex, but "
                           f"got self as {self_dtype._cpp_name} and dtype as {dtype._cpp_name}")
    if promote_types(self_dtype, dtype) != dtype:
        raise RuntimeError(f"{name}: the dtype of the input ({self_dtype._cpp_name}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({dtype._cpp_name})")


def _to(A, dtype):
    return A if dtype is None else call("_to_copy", A, dtype=dtype) if A.dtype != dtype else A


@kernel("linalg_matrix_norm", composite=True)
def linalg_matrix_norm(A, ord, dim=(-2, -1), keepdim=False, *, dtype=None):
    o = float(ord)
    a = abs(o)
    if a not in (2.0, 1.0, math.inf):
        shown = int(o) if o.is_integer() else o
        raise RuntimeError(f"linalg.matrix_norm: Order {shown} not supported.")
    dim = _matrix_norm_checks(A, list(dim), dtype, a != 2.0)

    def max_min(t, d):
        if o > 0 and t.shape[d] == 0:  # a norm's maximum over nothing is 0, as upstream's
            return call("sum.dim_IntList", t, [d], keepdim)
        return call("amax", t, [d], keepdim) if o > 0 else call("amin", t, [d], keepdim)

    if a == 2.0:
        perm = _backshift(dim[0], dim[1], A.dim())
        sv = call("linalg_svdvals", call("permute", _to(A, dtype), perm))
        result = max_min(sv, -1)
        if keepdim:
            result = call("permute", call("unsqueeze", result, -1), _reverse(perm))
        return result
    if a == math.inf:
        dim = [dim[1], dim[0]]
    if not keepdim and dim[0] < dim[1]:
        dim[1] -= 1
    return max_min(call("linalg_vector_norm", A, 1.0, [dim[0]], keepdim, dtype=dtype), dim[1])


@kernel("linalg_matrix_norm.str_ord", composite=True)
def linalg_matrix_norm_str(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dim = _matrix_norm_checks(A, list(dim), dtype, ord == "fro")
    if ord == "fro":
        return call("linalg_vector_norm", A, 2, dim, keepdim, dtype=dtype)
    A_ = _to(A, dtype)
    perm = _backshift(dim[0], dim[1], A_.dim())
    result = call("sum.dim_IntList", call("linalg_svdvals", call("permute", A_, perm)), [-1],
                  keepdim)
    if keepdim:
        result = call("permute", call("unsqueeze", result, -1), _reverse(perm))
    return result


@kernel("linalg_norm", composite=True)
def linalg_norm(X, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {int_list(dim)}")
    elif ord is not None and X.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {X.dim()}D.")
    if ord is not None and ((dim is not None and len(dim) == 2) or (dim is None and X.dim() == 2)):
        return call("linalg_matrix_norm", X, ord, list(dim) if dim is not None else [0, 1],
                    keepdim, dtype=dtype)
    return call("linalg_vector_norm", X, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)


@kernel("linalg_norm.ord_str", composite=True)
def linalg_norm_str(X, ord, dim=None, keepdim=False, *, dtype=None):
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it mut be of length 1 or 2. "
                               f"Got {int_list(dim)}")
    elif X.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {X.dim()}D.")
    return call("linalg_matrix_norm.str_ord", X, ord, list(dim) if dim is not None else [0, 1],
                keepdim, dtype=dtype)


# --- pseudo-inverse and rank ------------------------------------------------------------------

_LAPACK = (F32, F64, C64, C128)
_EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}


def _check_real_tol(t, fn, name):
    if t is not None and t.dtype.is_complex:
        raise RuntimeError(f"{fn}: {name} tensor of complex type is not supported.")


def _atol_rtol(A, atol, rtol, fn):
    f64 = D.BY_NAME["float64"]
    a = atol if atol is not None else call("zeros", [], dtype=f64, device=A.device)
    _check_real_tol(atol, fn, "atol")
    if rtol is not None:
        _check_real_tol(rtol, fn, "rtol")
        return a, rtol
    real = A.dtype.to_real() if A.dtype.is_complex else A.dtype
    default = call("full", [], _EPS.get(real._name, _EPS["float32"]) *
                   max(A.shape[-1], A.shape[-2]), dtype=f64, device=A.device)
    if atol is None:
        return a, default
    return a, call("where.self", call("gt.Scalar", atol, 0),
                   call("zeros", [], dtype=f64, device=A.device),
                   default)


def _mH(t):
    return call("adjoint", t)


# CompositeExplicitAutogradNonFunctional upstream (it has a derivatives.yaml formula); written
# through the door, so it serves meta tensors too
@kernel("linalg_pinv.atol_rtol_tensor", meta=True)
def linalg_pinv(input, *, atol=None, rtol=None, hermitian=False):
    if input.dim() < 2 or input.dtype not in _LAPACK:
        shape = ", ".join(str(d) for d in input.shape)
        raise RuntimeError(f"linalg.pinv({input.dtype._cpp_name}{{[{shape}]}}): expected a tensor "
                           "with 2 or more dimensions of float, double, cfloat or cdouble types")
    atol, rtol = _atol_rtol(input, atol, rtol, "torch.linalg.pinv")
    if input.numel() == 0:
        U, S, V = call("svd", input)
        return call("matmul", call("mul.Tensor", V, call("unsqueeze", call("reciprocal", S),
                                                             -2)), _mH(U))
    zero = call("zeros", [], dtype=input.dtype.to_real() if input.dtype.is_complex
                else input.dtype, device=input.device)
    if not hermitian:
        U, S, Vh = call("linalg_svd", input, False)
        max_val = call("narrow", S, -1, 0, 1)
        tol = call("max.other", call("unsqueeze", atol, -1),
                   call("mul.Tensor", call("unsqueeze", rtol, -1), max_val))
        S_inv = call("where.self", call("gt.Tensor", S, tol), call("reciprocal", S), zero)
        S_inv = call("_to_copy", S_inv, dtype=input.dtype)
        return call("matmul", call("mul.Tensor", _mH(Vh), call("unsqueeze", S_inv, -2)), _mH(U))
    S, U = call("linalg_eigh", input)
    S_abs = call("abs", S)
    max_val = call("amax", S_abs, [-1], True)
    tol = call("max.other", call("unsqueeze", atol, -1),
               call("mul.Tensor", call("unsqueeze", rtol, -1), max_val))
    S_inv = call("where.self", call("gt.Tensor", S_abs, tol), call("reciprocal", S), zero)
    S_inv = call("_to_copy", S_inv, dtype=input.dtype)
    return call("matmul", call("mul.Tensor", U, call("unsqueeze", S_inv, -2)), _mH(U))


def _float_tols(A, atol, rtol):
    a = 0.0 if atol is None else atol
    if rtol is None:
        real = A.dtype.to_real() if A.dtype.is_complex else A.dtype
        default = _EPS.get(real._name, _EPS["float32"]) * max(A.shape[-1], A.shape[-2])
        rtol = 0.0 if (atol is not None and atol > 0) else default
    f64 = D.BY_NAME["float64"]
    return (call("full", [], a, dtype=f64, device=A.device),
            call("full", [], rtol, dtype=f64, device=A.device))


@kernel("linalg_pinv.atol_rtol_float", composite=True)
def linalg_pinv_float(input, *, atol=None, rtol=None, hermitian=False):
    a, r = _float_tols(input, atol, rtol)
    return call("linalg_pinv.atol_rtol_tensor", input, atol=a, rtol=r, hermitian=hermitian)


@kernel("linalg_pinv", composite=True)
def linalg_pinv_rcond(input, rcond, hermitian=False):
    return call("linalg_pinv.atol_rtol_float", input, atol=0.0, rtol=rcond, hermitian=hermitian)


@kernel("linalg_pinv.rcond_tensor", composite=True)
def linalg_pinv_rcond_tensor(input, rcond, hermitian=False):
    atol = call("zeros", [], dtype=rcond.dtype, device=rcond.device)
    return call("linalg_pinv.atol_rtol_tensor", input, atol=atol, rtol=rcond,
                hermitian=hermitian)


@kernel("pinverse", composite=True)
def pinverse(self, rcond=1e-15):
    return call("linalg_pinv", self, rcond, False)


@kernel("linalg_matrix_rank.atol_rtol_tensor", composite=True)
def linalg_matrix_rank(input, *, atol=None, rtol=None, hermitian=False):
    check_is_matrix(input, "linalg.matrix_rank")
    atol, rtol = _atol_rtol(input, atol, rtol, "torch.linalg.matrix_rank")
    float_or_double(input.dtype)
    if input.numel() == 0:
        return call("zeros", list(input.shape[:-2]), dtype=D.BY_NAME["int64"],
                    device=input.device)
    if not hermitian:
        S = call("linalg_svdvals", input)
        max_S = call("narrow", S, -1, 0, 1)
    else:
        S = call("abs", call("linalg_eigvalsh", input))
        max_S = call("amax", S, [-1], True)
    tol = call("max.other", call("unsqueeze", atol, -1),
               call("mul.Tensor", call("unsqueeze", rtol, -1), max_S))
    return call("sum.dim_IntList", call("gt.Tensor", S, tol), [-1])


@kernel("linalg_matrix_rank.atol_rtol_float", composite=True)
def linalg_matrix_rank_float(input, *, atol=None, rtol=None, hermitian=False):
    a, r = _float_tols(input, atol, rtol)
    return call("linalg_matrix_rank.atol_rtol_tensor", input, atol=a, rtol=r,
                hermitian=hermitian)


@kernel("linalg_matrix_rank", composite=True)
def linalg_matrix_rank_tol(input, tol, hermitian=False):
    return call("linalg_matrix_rank.atol_rtol_float", input, atol=tol, rtol=0.0,
                hermitian=hermitian)


@kernel("linalg_matrix_rank.tol_tensor", composite=True)
def linalg_matrix_rank_tol_tensor(input, tol, hermitian=False):
    return call("linalg_matrix_rank.atol_rtol_tensor", input, atol=tol,
                rtol=call("zeros", [], dtype=tol.dtype, device=tol.device), hermitian=hermitian)


# --- powers, products, Vandermonde ------------------------------------------------------------

@kernel("linalg_matrix_power", composite=True)
def linalg_matrix_power(self, n):
    check_square(self, "linalg.matrix_power")
    if n == 0:
        eye = call("eye", self.shape[-1], dtype=self.dtype)
        return call("copy_", call("clone", self), call("expand", eye, list(self.shape)))
    a = self
    if n < 0:
        a = call("linalg_inv", self)
        n = -n
    if n == 1:
        return call("clone", a)
    if n == 2:
        return call("matmul", a, a)
    if n == 3:
        return call("matmul", call("matmul", a, a), a)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else call("matmul", z, z)
        if bit == 1:
            result = z if result is None else call("matmul", result, z)
    return result


@kernel("matrix_power", composite=True)
def matrix_power(self, n):
    return call("linalg_matrix_power", self, n)


@kernel("linalg_vander", composite=True)
def linalg_vander(x, *, N=None):
    t = x.dtype
    ok = t in (D.BY_NAME["float32"], D.BY_NAME["float64"], D.BY_NAME["complex64"],
               D.BY_NAME["complex128"]) or (not t.is_floating_point and not t.is_complex and
                                            t is not D.BY_NAME["bool"])
    if not ok:
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {t._cpp_name}")
    x_ = call("unsqueeze", x, -1) if x.dim() == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    shape.append(n - 1)
    result = call("cumprod", call("expand", call("unsqueeze", x_, -1), shape), -1)
    shape[-1] = 1
    ones = call("new_ones", result, shape)
    return call("cat", [ones, result], -1)


@kernel("vander", composite=True)
def vander(x, N=None, increasing=False):
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    from ..core.promotion import promote_types

    dt = promote_types(x.dtype, D.BY_NAME["int64"])
    result = call("empty.memory_format", [x.shape[0], n], dtype=dt)
    if n > 0:
        call("fill_.Scalar", result, 1)
        if n > 1:
            tail = call("slice.Tensor", result, 1, 1)
            call("copy_", tail, call("unsqueeze", x, 1))
            call("copy_", tail, call("cumprod", tail, 1))
    return result if increasing else call("flip", result, [1])


@kernel("chain_matmul", composite=True)
def chain_matmul(matrices):
    torch_warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
               "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
               "more tensors rather than multiple parameters.")
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more input tensors")
    if len(matrices) == 1:
        return call("clone", matrices[0])
    return call("linalg_multi_dot", matrices)


@kernel("linalg_multi_dot", composite=True)
def linalg_multi_dot(tensors):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    dims = [t.dim() for t in tensors]
    first_1d, last_1d = dims[0] == 1, dims[-1] == 1
    for i, d in enumerate(dims):
        if i in (0, n - 1):
            if d not in (1, 2):
                which = "first" if i == 0 else "last"
                raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got "
                                   f"{d}D")
        elif d != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {d}D")
    dt = tensors[0].dtype
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype != dt:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {dt._cpp_name} and tensor {i} {t.dtype._cpp_name}")
    mats = list(tensors)
    if first_1d:
        mats[0] = call("unsqueeze", mats[0], 0)
    if last_1d:
        mats[-1] = call("unsqueeze", mats[-1], 1)
    for i in range(n - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:
            a, b = mats[i].shape, mats[i + 1].shape
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(a)} and {list(b)} cannot be multiplied")
    if n == 2:
        result = call("mm", mats[0], mats[1])
    elif n == 3:
        a, b, c = mats[0].shape[0], mats[1].shape[0], mats[2].shape[0]
        d = mats[2].shape[1]
        if a * c * (b + d) > b * d * (a + c):  # (AB)C costs more than A(BC)
            result = call("mm", mats[0], call("mm", mats[1], mats[2]))
        else:
            result = call("mm", call("mm", mats[0], mats[1]), mats[2])
    else:
        result = _chain(mats, _order(mats), 0, n - 1)
    if first_1d and last_1d:
        return call("view", result, [])
    if first_1d:
        return call("squeeze.dim", result, 0)
    if last_1d:
        return call("squeeze.dim", result, 1)
    return result


def _order(mats):
    """The matrix-chain order (the cost table upstream's multi_dot fills)."""
    n = len(mats)
    p = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j] = q
                    split[i][j] = k
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return call("mm", _chain(mats, split, i, k), _chain(mats, split, k + 1, j))


# --- condition number, tensor inverse and solve -----------------------------------------------

def _cond_check_ord(ord):
    if isinstance(ord, str):
        ok = ord in ("fro", "nuc")
    else:
        ok = abs(float(ord)) in (1.0, 2.0, math.inf)
    if not ok:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_scalar_str(ord)}")


def _scalar_str(v):
    if isinstance(v, float) and v.is_integer() and math.isfinite(v):
        return str(int(v))
    return str(v)


def _cond_helper(A, ord):
    inverse, info = call("linalg_inv_ex", A)
    info = call("unsqueeze", call("unsqueeze", info, -1), -1)
    inverse = call("masked_fill.Scalar", inverse, call("gt.Scalar", info, 0), math.inf)
    if isinstance(ord, str):
        norm = "linalg_matrix_norm.str_ord"
    else:
        norm = "linalg_matrix_norm"
    return call("mul.Tensor", call(norm, A, ord), call(norm, inverse, ord))


def _cond_empty(A):
    real = A.dtype.to_real() if A.dtype.is_complex else A.dtype
    return call("zeros", list(A.shape[:-2]), dtype=real, device=A.device)


@kernel("linalg_cond", composite=True)
def linalg_cond(self, p=None):
    if self.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord = 2 if p is None else p
    _cond_check_ord(ord)
    if self.numel() == 0:
        return _cond_empty(self)
    if abs(float(ord)) == 2.0:
        sv = call("linalg_svdvals", self)
        s_max = call("narrow", sv, -1, 0, 1)
        s_min = call("narrow", sv, -1, -1, 1)
        r = call("div.Tensor", s_min, s_max) if float(ord) == -2.0 else \
            call("div.Tensor", s_max, s_min)
        return call("squeeze.dim", r, -1)
    if isinstance(ord, float) and math.isfinite(ord):
        check_square(self, f"linalg.cond(ord={ord:.6f})")
    else:
        check_square(self, f"linalg.cond(ord={_scalar_str(ord)})")
    return _cond_helper(self, ord)


@kernel("linalg_cond.p_str", composite=True)
def linalg_cond_str(self, p):
    if self.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    _cond_check_ord(p)
    if self.numel() == 0:
        return _cond_empty(self)
    check_square(self, f"linalg.cond(ord={p})")
    return _cond_helper(self, p)


def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


@kernel("linalg_tensorinv", composite=True)
def linalg_tensorinv(self, ind=2):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    end, start = list(self.shape[ind:]), list(self.shape[:ind])
    p_end, p_start = _prod(end), _prod(start)
    if p_end != p_start:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {p_end} != {p_start}")
    result, info = call("linalg_inv_ex", call("reshape", self, [p_end, p_end]))
    _raise_info(info, "inv", True)
    return call("reshape", result, end + start)


@kernel("linalg_tensorsolve", composite=True)
def linalg_tensorsolve(self, other, dims=None):
    ndim = self.dim()
    a = self
    if dims is not None:
        dest = list(range(ndim - len(dims), ndim))
        a = call("movedim.intlist", a, list(dims), dest)
    result_shape = list(a.shape[other.dim():])
    rp, op = _prod(result_shape), _prod(other.shape)
    if rp != op:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {rp} != {op}")
    a = call("reshape", a, [rp, rp])
    result = call("linalg_solve", a, call("flatten.using_ints", other))
    return call("reshape", result, result_shape)


register_out_forms(*(name for name, fn in list(COMPOSITE.items())
                     if getattr(fn, "__module__", None) == __name__))

register_out_kernels("linalg_eigvals")
