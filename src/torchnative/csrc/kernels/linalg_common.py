"""What the torch.linalg kernels share: upstream's LinAlgError, its argument checks
(LinearAlgebraUtils.h) with their messages, _linalg_check_errors' messages for LAPACK info codes,
and numpy arrays in the precision the factorizations run in.

Factorizations run in double precision (complex128 for complex inputs) and are rounded once to
the input's dtype: the values are then at least as close to upstream's float64 rerun as
upstream's own single-precision LAPACK result, which is how the agreement is judged.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..platform import mkl_path
from ..random.fpmath import fma32, fma64
from .support.broadcast import infer_size
from .support.common import arr, wrap


class LinAlgError(RuntimeError):
    """torch._C._LinAlgError: a RuntimeError, so ``except RuntimeError`` catches it as upstream."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "torch._C"

TORCH_C = {"torch._C._LinAlgError": LinAlgError}

_B = D.BY_NAME
F32, F64, C64, C128 = _B["float32"], _B["float64"], _B["complex64"], _B["complex128"]
INT32, INT64 = _B["int32"], _B["int64"]


def broadcast_batch(first: np.ndarray, second: np.ndarray) -> tuple:
    """_linalg_broadcast_batch_dims: the batch shape of two stacks of matrices, broadcast (and
    refused) in the order upstream names them in its message."""
    return infer_size(first.shape[:-2], second.shape[:-2])


def check_is_matrix(A, fn: str, name: str = "A") -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")


def check_square(A, fn: str, name: str = "A") -> None:
    check_is_matrix(A, fn, name)
    m, n = A.shape[-2], A.shape[-1]
    if m != n:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are {m} "
                           f"by {n} matrices")


def check_floating_or_complex(A, fn: str, allow_low: bool = False) -> None:
    dt = A.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {dt._cpp_name}")
    if not allow_low and dt not in (F32, F64, C64, C128):
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {dt._cpp_name}")


def dispatch(kernel: str, dt) -> None:
    """AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES' refusal of any other dtype, by kernel name."""
    if dt not in (F32, F64, C64, C128):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt._cpp_name}\'')


def float_or_double(dt) -> None:
    """The LAPACK-type check of lstsq and matrix_rank's helpers."""
    if dt not in (F32, F64, C64, C128):
        raise RuntimeError("This function doesn't handle types other than float and double")


def check_same_dtype(a, b, fn: str, a_name: str = "A", b_name: str = "B") -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(f"{fn}: Expected {b_name} and {a_name} to have the same dtype, but "
                           f"found {b_name} of type {b.dtype._cpp_name} and {a_name} of type "
                           f"{a.dtype._cpp_name} instead.")


def is_vector_rhs(A, B) -> bool:
    """linalg_solve_is_vector_rhs: B is a (batch of) vector(s) for the square A."""
    return B.dim() == 1 or (A.dim() - 1 == B.dim() and tuple(B.shape) == tuple(A.shape[:-1]))


def uses_A_T(A) -> bool:
    """Upstream factors A^T when A is contiguous and real (lu_factor wants it F-contiguous):
    det and slogdet then save that LU, and their backward formulas rely on it (2.13's solve
    factors A itself)."""
    return A.is_contiguous() and not A.dtype.is_complex


def wide(t) -> np.ndarray:
    """``t``'s values as a C-contiguous float64/complex128 array (a copy)."""
    a = arr(t)
    return np.array(a, dtype=np.complex128 if t.dtype.is_complex else np.float64)


def out(a: np.ndarray, dt) -> object:
    """A new tensor of dtype ``dt`` holding ``a`` (rounded once)."""
    a = np.asarray(a).astype(D.numpy_dtype(dt), copy=False)
    return wrap(a if a.flags.c_contiguous else a.copy(order="C"), dt)


def out_column_major(a: np.ndarray, dt):
    """A new tensor of dtype ``dt`` holding ``a`` with batched column-major strides, as upstream
    allocates what LAPACK writes (LD, ldl_solve's result, the SVD's U and Vh)."""
    shape = a.shape
    stride = [1] * len(shape)
    if len(shape) >= 2:
        stride[-1] = max(shape[-2], 1)
        acc = max(shape[-2] * shape[-1], 1)
        for i in range(len(shape) - 3, -1, -1):
            stride[i] = acc
            acc *= max(shape[i], 1)
    t = empty(shape, dt, stride=stride)
    if a.size:
        arr(t)[...] = a
    return t


def real_of(dt):
    return dt.to_real() if dt.is_complex else dt


def check_errors(info: np.ndarray, api: str, is_matrix: bool) -> None:
    """_linalg_check_errors: the first nonzero info code raises upstream's message and type."""
    flat = np.asarray(info).reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size == 0:
        return
    i = int(bad[0])
    code = int(flat[i])
    where = "" if is_matrix else f"(Batch element {i}): "
    if code < 0:
        raise RuntimeError(f"{api}: {where}Argument {-code} has illegal value. Most certainly "
                           "there is a bug in the implementation calling the backend library.")
    if "inv" in api:
        raise LinAlgError(f"{api}: {where}The diagonal element {code} is zero, the inversion "
                          "could not be completed because the input matrix is singular.")
    if "solve" in api:
        raise LinAlgError(f"{api}: {where}The solver failed because the input matrix is "
                          "singular.")
    if "cholesky" in api:
        raise LinAlgError(f"{api}: {where}The factorization could not be completed because the "
                          f"input is not positive-definite (the leading minor of order {code} "
                          "is not positive-definite).")
    if "svd" in api:
        raise LinAlgError(f"{api}: {where}The algorithm failed to converge because the input "
                          "matrix is ill-conditioned or has too many repeated singular values "
                          f"(error code: {code}).")
    if "eig" in api or "syevd" in api:
        raise LinAlgError(f"{api}: {where}The algorithm failed to converge because the input "
                          "matrix is ill-conditioned or has too many repeated eigenvalues "
                          f"(error code: {code}).")
    if "lstsq" in api:
        raise LinAlgError(f"{api}: {where}The least squares solution could not be computed "
                          "because the input matrix does not have full rank (error code: "
                          f"{code}).")
    if "lu_factor" in api:
        raise RuntimeError(f"{api}: {where}U[{code},{code}] is zero and using it on lu_solve "
                           "would result in a division by zero. If you still want to perform "
                           "the factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")
    raise RuntimeError(f"{api}: Unknown error code: {code}.")


# --- LAPACK's algorithms over batches of matrices (numpy arrays, last two dims the matrix) ----

def _pivot_magnitude(col: np.ndarray) -> np.ndarray:
    # i?amax compares |re| + |im| for complex (BLAS's cabs1), |x| for real
    return np.abs(col.real) + np.abs(col.imag) if np.iscomplexobj(col) else np.abs(col)


def getrf(a: np.ndarray):
    """LU with partial pivoting (getrf): (LU, 1-based int32 pivots, int32 info) per matrix,
    computed in ``a``'s precision (pass float32 to get sgetrf's zero pivots). info is the first
    zero pivot (1-based), 0 when none; the factorization continues past it as LAPACK's does.
    Unblocked (getf2's order): bit for bit with upstream's for most matrices up to 16 columns,
    on either of MKL's paths (``_update``)."""
    *batch, m, n = a.shape
    lu = np.array(a, copy=True).reshape(int(np.prod(batch, dtype=np.int64)), m, n)
    b = lu.shape[0]
    k = min(m, n)
    piv = np.zeros((b, k), np.int32)
    info = np.zeros(b, np.int32)
    rows = np.arange(b)
    tiny = np.finfo(lu.dtype).tiny  # LAPACK's sfmin
    for j in range(k):
        p = j + np.argmax(_pivot_magnitude(lu[:, j:, j]), axis=1) if b else np.zeros(0, int)
        piv[:, j] = p + 1
        top = lu[rows, j, :].copy()
        lu[rows, j, :] = lu[rows, p, :]
        lu[rows, p, :] = top
        d = lu[:, j, j]
        zero = d == 0
        info[(info == 0) & zero] = j + 1
        if j + 1 < m:
            # the column is scaled by the pivot's reciprocal (division only below the safe
            # minimum), as upstream's LAPACK does: a quotient would round differently
            scale = np.where(zero, 1, d)
            with np.errstate(all="ignore"):
                recip = (np.ones((), lu.dtype) / scale).astype(lu.dtype)
                col = lu[:, j + 1:, j]
                scaled = np.where((np.abs(scale) >= tiny)[:, None], col * recip[:, None],
                                  col / scale[:, None])
            lu[:, j + 1:, j] = np.where(zero[:, None], col, scaled)
            _update(lu[:, j + 1:, j + 1:], lu[:, j + 1:, j:j + 1], lu[:, j:j + 1, j + 1:])
    return lu.reshape(*batch, m, n), piv.reshape(*batch, k), info.reshape(batch)


def _update(a: np.ndarray, col: np.ndarray, row: np.ndarray) -> None:
    """getf2's trailing update ``a -= col * row`` in place, rounded as upstream's MKL rounds it
    on this machine: one fused multiply-add per element on its AVX2/AVX-512 branches
    (``platform/mkl_path.py``), a product then a difference on the others (and for complex)."""
    if not a.size:
        return
    if mkl_path.FUSED and a.dtype in (np.float32, np.float64):
        with np.errstate(all="ignore"):
            fused = (fma32 if a.dtype == np.float32 else fma64)(-col, row, a)
        a[...] = np.reshape(fused, a.shape)
        return
    a -= col * row


def permutation_of(piv: np.ndarray, m: int) -> np.ndarray:
    """The row order the pivots (1-based swaps, applied in order) leave: perm[i] is the row of
    the original matrix now at row i."""
    *batch, k = piv.shape
    b = int(np.prod(batch, dtype=np.int64))
    p = np.broadcast_to(np.arange(m), (*batch, m)).reshape(b, m).copy()
    flat = piv.reshape(b, k).astype(np.int64) - 1
    rows = np.arange(p.shape[0])
    for j in range(k):
        t = p[rows, j].copy()
        p[rows, j] = p[rows, flat[:, j]]
        p[rows, flat[:, j]] = t
    return p.reshape(*batch, m)


def trsm(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool = False) -> np.ndarray:
    """Solves a x = b for triangular ``a`` (left side), by substitution, batched (shapes already
    broadcast)."""
    n = a.shape[-1]
    x = np.array(b, copy=True, dtype=np.result_type(a, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        if upper:
            acc = np.einsum("...j,...jk->...k", a[..., i, i + 1:], x[..., i + 1:, :])
        else:
            acc = np.einsum("...j,...jk->...k", a[..., i, :i], x[..., :i, :])
        r = x[..., i, :] - acc
        x[..., i, :] = r if unit else r / a[..., i, i][..., None]
    return x


def potrf(a: np.ndarray, upper: bool = False):
    """Cholesky (potrf) reading the lower triangle (or the upper one): (L, int32 info). info is
    the order of the first leading minor that is not positive definite."""
    if upper:
        a = np.conj(np.swapaxes(a, -1, -2))
    *batch, n, _ = a.shape
    src = a.reshape(int(np.prod(batch, dtype=np.int64)), n, n)
    low = np.zeros_like(src)
    info = np.zeros(src.shape[0], np.int32)
    for j in range(n):
        row = low[:, j, :j]
        d = src[:, j, j].real - np.einsum("bk,bk->b", row, np.conj(row)).real
        bad = ~(d > 0) & (info == 0)
        info[bad] = j + 1
        ok = info == 0
        root = np.sqrt(np.where(ok, d, 1.0))
        low[:, j, j] = np.where(ok, root, low[:, j, j])
        if j + 1 < n:
            col = src[:, j + 1:, j] - np.einsum("bik,bk->bi", low[:, j + 1:, :j], np.conj(row))
            low[:, j + 1:, j] = np.where(ok[:, None], col / root[:, None], 0)
    low = low.reshape(*batch, n, n)
    if upper:
        low = np.conj(np.swapaxes(low, -1, -2))
    return low, info.reshape(batch)
