"""CPU kernels of the linalg factorizations and solvers (BatchLinearAlgebra.cpp): LU, Cholesky,
triangular and general solves, inverse, determinant. Batched over the leading dimensions, with
upstream's checks, info codes and messages (linalg_common.py).

LU is LAPACK's partial pivoting (the first entry of largest |re| + |im| in the column), so the
pivots are upstream's wherever the choice is not a near tie; solves are getrs/trsm substitution.
"""

from __future__ import annotations

import numpy as np

from ..core.construct import empty
from ..ops.kernel_registry import kernel
from .linalg_common import (INT32, check_floating_or_complex, dispatch, is_vector_rhs, uses_A_T,
                            broadcast_batch, check_is_matrix, check_same_dtype, check_square, getrf, out,
                            permutation_of, potrf, real_of, trsm, wide)
from .support.common import arr
from .linalg_common import check_errors as raise_info
from ..platform.torch_warn import torch_warn


# --- LU ---------------------------------------------------------------------------------------

@kernel("linalg_lu_factor_ex")
def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    fn = "torch.linalg.lu_factor_ex"
    check_is_matrix(A, fn)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    dispatch("lu_cpu", A.dtype)
    lu, piv, info = getrf(own(A))
    if check_errors:
        raise_info(info, fn, A.dim() == 2)
    return out(lu, A.dtype), out(piv, INT32), out(info, INT32)



def own(A) -> np.ndarray:
    """``A``'s values in its own precision (a copy): the factorization's rounding is the dtype's."""
    return np.array(arr(A), copy=True, order="C")


def _plu(lu: np.ndarray, piv: np.ndarray):
    """P, L, U from a packed LU and its pivots (A = P L U)."""
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    low = np.tril(lu[..., :, :k], -1)
    idx = np.arange(k)
    low[..., idx, idx] = 1
    up = np.triu(lu[..., :k, :])
    perm = permutation_of(piv, m)
    p = np.zeros(lu.shape[:-2] + (m, m), lu.real.dtype)
    np.put_along_axis(p, perm[..., :, None], 1, axis=-1)
    return np.swapaxes(p, -1, -2), low, up


@kernel("linalg_lu")
def linalg_lu(A, *, pivot=True):
    fn = "linalg.lu"
    check_is_matrix(A, fn)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    dispatch("lu_cpu", A.dtype)
    lu, piv, _ = getrf(own(A))
    p, low, up = _plu(lu, piv)
    return out(p, A.dtype), out(low, A.dtype), out(up, A.dtype)


@kernel("lu_unpack")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    check_is_matrix(LU_data, "torch.lu_unpack", "LU_data")
    if LU_pivots.dtype != INT32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    lu = wide(LU_data)
    piv = np.asarray(LU_pivots._np, dtype=np.int64)
    p, low, up = _plu(lu, np.broadcast_to(piv, lu.shape[:-2] + piv.shape[-1:]))
    dt = LU_data.dtype
    none = empty((0,), dt)
    return (out(p, dt) if unpack_pivots else none,
            out(low, dt) if unpack_data else empty((0,), dt),
            out(up, dt) if unpack_data else empty((0,), dt))


def _getrs(lu: np.ndarray, piv: np.ndarray, b: np.ndarray, adjoint: bool) -> np.ndarray:
    """Solves A x = b (or A^H x = b) from A's LU, batched (shapes broadcast)."""
    n = lu.shape[-1]
    perm = permutation_of(piv, n)
    if not adjoint:
        pb = np.take_along_axis(b, perm[..., :, None], axis=-2)
        return trsm(lu, trsm(lu, pb, upper=False, unit=True), upper=True)
    luh = np.conj(np.swapaxes(lu, -1, -2))
    y = trsm(luh, trsm(luh, b, upper=False), upper=True, unit=True)
    x = np.empty_like(y)
    np.put_along_axis(x, perm[..., :, None], y, axis=-2)
    return x


@kernel("linalg_lu_solve")
def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    fn = "linalg.lu_solve"
    check_square(LU, "torch.linalg.lu_solve", "LU")
    check_is_matrix(B, "torch.linalg.lu_solve", "B")
    check_floating_or_complex(LU, "torch.linalg.lu_solve", allow_low=True)
    check_same_dtype(LU, B, "linalg.lu_solve", "LU", "B")
    if pivots.dtype != INT32:
        raise RuntimeError(f"{fn}: pivots should be a Tensor of scalar type torch.int32")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{fn}: Expected LU.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    n = LU.shape[-1]
    if left and B.shape[-2] != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if not left and B.shape[-1] != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation XA = B "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    dispatch("linalg.lu_solve_cpu", LU.dtype)
    lu, b = wide(LU), wide(B)
    piv = np.asarray(pivots._np, dtype=np.int64)
    batch = broadcast_batch(b, lu)
    lu = np.broadcast_to(lu, batch + lu.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    if left:
        x = _getrs(lu, piv, np.broadcast_to(b, batch + b.shape[-2:]), adjoint)
    else:  # X A = B  <=>  A^H X^H = B^H
        bh = np.conj(np.swapaxes(np.broadcast_to(b, batch + b.shape[-2:]), -1, -2))
        x = np.conj(np.swapaxes(_getrs(lu, piv, bh, not adjoint), -1, -2))
    return out(x, B.dtype)


# --- determinants -----------------------------------------------------------------------------

def _perm_sign(piv: np.ndarray) -> np.ndarray:
    swaps = (piv != np.arange(1, piv.shape[-1] + 1)).sum(-1)
    return np.where(swaps % 2 == 1, -1.0, 1.0)


def _factor(A):
    """getrf of A (A^T where upstream factors that) in A's own precision, as upstream's LAPACK
    factors it: its exact zero pivots (info) are upstream's."""
    a = own(A)
    return getrf(np.swapaxes(a, -1, -2).copy() if uses_A_T(A) else a)


@kernel("_linalg_det")
def _linalg_det(A):
    check_square(A, "linalg.det")
    check_floating_or_complex(A, "linalg.det", allow_low=True)
    dispatch("lu_cpu", A.dtype)
    lu, piv, _ = _factor(A)
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    det = _perm_sign(piv) * np.prod(diag, axis=-1)
    return out(det, A.dtype), out(lu, A.dtype), out(piv, INT32)


@kernel("_linalg_slogdet")
def _linalg_slogdet(A):
    check_square(A, "linalg.slogdet")
    check_floating_or_complex(A, "linalg.slogdet")
    lu, piv, _ = _factor(A)
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    mag = np.abs(diag)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = np.where(mag == 0, 0, diag / np.where(mag == 0, 1, mag))
        logabs = np.sum(np.log(mag), axis=-1)
    sign = _perm_sign(piv) * np.prod(unit, axis=-1)
    return (out(sign, A.dtype), out(logabs, real_of(A.dtype)), out(lu, A.dtype),
            out(piv, INT32))


# --- general solve and inverse ----------------------------------------------------------------

@kernel("_linalg_solve_ex")
def _linalg_solve_ex(A, B, *, left=True, check_errors=False):
    fn = "linalg.solve"
    check_floating_or_complex(A, fn, allow_low=True)
    if A.dtype != B.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype._cpp_name} and B of type {B.dtype._cpp_name} instead")
    vector = is_vector_rhs(A, B)
    check_square(A, fn)
    if not vector:
        check_is_matrix(B, fn, "B")
    n = A.shape[-1]
    b = wide(B)
    if vector:
        b = b[..., :, None] if left else b[..., None, :]
    k = b.shape[-2] if left else b.shape[-1]
    if k != n:
        eq = "AX = B" if left else "XA = B"
        shown = f"{b.shape[-2]}x{b.shape[-1]}"
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {shown})")
    dispatch("lu_cpu", A.dtype)
    x, lu, piv, info = _solve(A, b, left)
    if vector:
        x = x[..., 0] if left else x[..., 0, :]
    if check_errors:
        raise_info(info, "torch.linalg.solve_ex", A.dim() == 2)
    return out(x, A.dtype), out(lu, A.dtype), out(piv, INT32), out(info, INT32)


def _solve(A, b: np.ndarray, left: bool):
    """(X, LU, pivots, info) of A X = b (X A = b unless ``left``), ``b`` a wide array of
    matrices: A's own LU (upstream 2.13 factors A, never A^T, here), in A's precision as its
    LAPACK factors it (so its exact zero pivots), then the triangular solves in double."""
    a = own(A)
    batch = broadcast_batch(b, a)
    lu, piv, info = getrf(np.broadcast_to(a, batch + a.shape[-2:]).copy())
    lu = lu.astype(b.dtype, copy=False)
    b = np.broadcast_to(b, batch + b.shape[-2:])
    with np.errstate(all="ignore"):
        if left:
            x = _getrs(lu, piv, b, False)
        else:  # X A = B  <=>  A^H X^H = B^H
            bh = np.conj(np.swapaxes(b, -1, -2))
            x = np.conj(np.swapaxes(_getrs(lu, piv, bh, True), -1, -2))
    return x, lu, piv, info


@kernel("linalg_inv_ex")
def linalg_inv_ex(A, *, check_errors=False):
    fn = "linalg.inv"
    check_square(A, fn)
    check_floating_or_complex(A, fn)
    n = A.shape[-1]
    wide_dt = np.complex128 if A.dtype.is_complex else np.float64
    # upstream's inverse is linalg_solve_ex(A, I)
    x, _, _, info = _solve(A, np.broadcast_to(np.eye(n, dtype=wide_dt), tuple(A.shape)), True)
    if check_errors:
        raise_info(info, "linalg.inv_ex", A.dim() == 2)
    return out(x, A.dtype), out(info, INT32)


# --- Cholesky ---------------------------------------------------------------------------------

@kernel("linalg_cholesky_ex")
def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    fn = "linalg.cholesky"
    check_square(A, fn)
    check_floating_or_complex(A, fn, allow_low=True)
    dispatch("cholesky_cpu", A.dtype)
    low, info = potrf(wide(A), upper)
    low = np.triu(low) if upper else np.tril(low)
    if check_errors:
        raise_info(info, "linalg.cholesky_ex", A.dim() == 2)
    return out(low, A.dtype), out(info, INT32)


@kernel("cholesky")
def cholesky(self, upper=False):
    torch_warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
        "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results "
        "for all valid (symmetric positive definite) inputs.")
    check_square(self, "cholesky")
    check_floating_or_complex(self, "cholesky", allow_low=True)
    dispatch("cholesky_cpu", self.dtype)
    low, info = potrf(wide(self), upper)
    raise_info(info, "cholesky", self.dim() == 2)
    return out(np.triu(low) if upper else np.tril(low), self.dtype)


@kernel("cholesky_inverse")
def cholesky_inverse(self, upper=False):
    fn = "cholesky_inverse"
    check_square(self, fn, "input")
    dispatch("cholesky_inverse_out_cpu", self.dtype)
    f = wide(self)
    f = np.triu(f) if upper else np.tril(f)
    n = f.shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=f.dtype), f.shape)
    fh = np.conj(np.swapaxes(f, -1, -2))
    with np.errstate(all="ignore"):
        if upper:  # A = U^H U, A^-1 = U^-1 U^-H
            x = trsm(f, trsm(fh, eye, upper=False), upper=True)
        else:  # A = L L^H, A^-1 = L^-H L^-1
            x = trsm(fh, trsm(f, eye, upper=False), upper=True)
    # potri computes one triangle; upstream mirrors it, so the result is exactly Hermitian
    low = np.tril(x, -1)
    diag = np.diagonal(x, axis1=-2, axis2=-1).real
    x = low + np.conj(np.swapaxes(low, -1, -2))
    idx = np.arange(n)
    x[..., idx, idx] = diag
    return out(x, self.dtype)


def _cholesky_solve(b: np.ndarray, f: np.ndarray, upper: bool) -> np.ndarray:
    fh = np.conj(np.swapaxes(f, -1, -2))
    if upper:
        return trsm(f, trsm(fh, b, upper=False), upper=True)
    return trsm(fh, trsm(f, b, upper=False), upper=True)


@kernel("cholesky_solve")
def cholesky_solve(self, input2, upper=False):
    fn = "cholesky_solve"
    if self.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {self.dim()} "
                           "dimensions instead")
    if input2.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.dim()} "
                           "dimensions instead")
    if self.dtype != input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{self.dtype._cpp_name} and A of type {input2.dtype._cpp_name} "
                           "instead.")
    dispatch("cholesky_solve_cpu", self.dtype)
    f, b = wide(input2), wide(self)
    batch = broadcast_batch(b, f)
    f = np.broadcast_to(f, batch + f.shape[-2:])
    f = np.triu(f) if upper else np.tril(f)
    with np.errstate(all="ignore"):
        x = _cholesky_solve(np.broadcast_to(b, batch + b.shape[-2:]), f, upper)
    return out(x, self.dtype)


@kernel("_cholesky_solve_helper")
def _cholesky_solve_helper(self, A, upper):
    f = wide(A)
    f = np.triu(f) if upper else np.tril(f)
    return out(_cholesky_solve(wide(self), f, upper), self.dtype)


# --- triangular solves ------------------------------------------------------------------------

def _triangular(a: np.ndarray, b: np.ndarray, upper, left, unit) -> np.ndarray:
    batch = broadcast_batch(b, a)
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    a = np.triu(a) if upper else np.tril(a)
    with np.errstate(all="ignore"):
        if left:
            return trsm(a, b, upper, unit)
        # X A = B  <=>  A^T X^T = B^T (A^T has the other triangle)
        return np.swapaxes(trsm(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper,
                                unit), -1, -2)


@kernel("linalg_solve_triangular")
def linalg_solve_triangular(self, B, *, upper, left=True, unitriangular=False):
    fn = "linalg.solve_triangular"
    check_is_matrix(self, fn, "A")
    check_is_matrix(B, fn, "B")
    if self.dtype != B.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{self.dtype._cpp_name} and B of type {B.dtype._cpp_name} instead")
    n = self.shape[-1]
    if self.shape[-2] != n:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{self.shape[-2]} by {n} matrices")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    dispatch("triangular_solve_cpu", self.dtype)
    x = _triangular(wide(self), wide(B), upper, left, unitriangular)
    return out(x, self.dtype)


@kernel("triangular_solve")
def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    if self.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {self.dim()} dimensions instead")
    if A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {A.dim()} dimensions instead")
    dispatch("triangular_solve_cpu", self.dtype)
    a, b = wide(A), wide(self)
    batch = broadcast_batch(b, a)
    a = np.broadcast_to(a, batch + a.shape[-2:])
    tri = np.triu(a) if upper else np.tril(a)
    if transpose:
        x = _triangular(np.swapaxes(tri, -1, -2), b, not upper, True, unitriangular)
    else:
        x = _triangular(tri, b, upper, True, unitriangular)
    return out(x, self.dtype), out(np.array(a), A.dtype)

