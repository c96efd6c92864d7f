"""torch.linalg.ldl_factor(_ex) and ldl_solve: LAPACK's Bunch-Kaufman LDL^T (sytrf / hetrf with
uplo='L', the unblocked sytf2 / hetf2 that sytrf runs for matrices this size) and its solver
(sytrs / hetrs), so the pivots, the packed layout and the info codes are upstream's.

LD starts as tril(A) (upstream never reads or writes the strict upper triangle), pivots are
LAPACK's 1-based ipiv (a negative pair marks a 2x2 block), info is the first exactly-zero pivot
block (the factorization still completes). Arithmetic runs in double precision (complex128 for
complex inputs) and is rounded once, as the other factorizations here (linalg_common.py).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from .composite_out import register_out_forms
from .linalg_common import (INT32, check_floating_or_complex, check_square, out,
                            out_column_major, wide)
from .linalg_common import check_errors as raise_info
from .support.broadcast import infer_size

_BOOL = D.BY_NAME["bool"]
_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0  # Bunch-Kaufman's growth bound


def _cabs1(x):
    return abs(x.real) + abs(x.imag) if isinstance(x, complex) else abs(x)


def _iamax(v: np.ndarray) -> int:
    """BLAS i?amax: the first index of the largest |x| (|re| + |im| for complex)."""
    mag = np.abs(v.real) + np.abs(v.imag) if np.iscomplexobj(v) else np.abs(v)
    return int(np.argmax(mag))


def _conj(x, herm):
    return np.conj(x) if herm else x


def _swap_rows_cols(a, k, kk, kp, kstep, herm):
    """Interchange rows and columns kk and kp of the trailing matrix a[k:, k:] (lower part)."""
    n = a.shape[0]
    if kp < n - 1:
        t = a[kp + 1:, kk].copy()
        a[kp + 1:, kk] = a[kp + 1:, kp]
        a[kp + 1:, kp] = t
    for j in range(kk + 1, kp):
        t = _conj(a[j, kk], herm)
        a[j, kk] = _conj(a[kp, j], herm)
        a[kp, j] = t
    if herm:
        a[kp, kk] = np.conj(a[kp, kk])
        r = a[kk, kk].real
        a[kk, kk] = a[kp, kp].real
        a[kp, kp] = r
    else:
        a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        if herm:
            a[k, k] = a[k, k].real
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _sytf2(a: np.ndarray, herm: bool):
    """In place on the lower triangle of one matrix: (ipiv, info)."""
    n = a.shape[0]
    ipiv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k].real) if herm else _cabs1(a[k, k].item())
        if k < n - 1:
            imax = k + 1 + _iamax(a[k + 1:, k])
            colmax = _cabs1(a[imax, k].item())
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                jmax = k + _iamax(a[imax, k:imax])
                rowmax = _cabs1(a[imax, jmax].item())
                if imax < n - 1:
                    jmax = imax + 1 + _iamax(a[imax + 1:, imax])
                    rowmax = max(rowmax, _cabs1(a[jmax, imax].item()))
                diag_imax = abs(a[imax, imax].real) if herm else _cabs1(a[imax, imax].item())
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diag_imax >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                _swap_rows_cols(a, k, kk, kp, kstep, herm)
            elif herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                _update_1x1(a, k, herm)
            elif k < n - 2:
                _update_2x2(a, k, herm)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def _update_1x1(a, k, herm):
    n = a.shape[0]
    if k >= n - 1:
        return
    x = a[k + 1:, k].copy()
    tri = np.tril(np.ones((n - k - 1, n - k - 1), bool))
    if herm:  # zher(-1/d): A(i,j) += x(i) * (alpha * conj(x(j))), diagonal kept real
        r1 = 1.0 / a[k, k].real
        sub = a[k + 1:, k + 1:]
        sub[tri] = (sub + x[:, None] * (-r1 * np.conj(x))[None, :])[tri]
        idx = np.arange(n - k - 1)
        sub[idx, idx] = sub[idx, idx].real
        a[k + 1:, k] = r1 * x
        return
    d11 = 1.0 / a[k, k]  # dsyr(-d11) then dscal(d11)
    sub = a[k + 1:, k + 1:]
    sub[tri] = (sub + x[:, None] * (-d11 * x)[None, :])[tri]
    a[k + 1:, k] = d11 * x


def _update_2x2(a, k, herm):
    n = a.shape[0]
    if herm:
        d = abs(a[k + 1, k])
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = 1.0 / (d11 * d22 - 1.0)
        d21 = a[k + 1, k] / d
        d = tt / d
        for j in range(k + 2, n):
            wk = d * (d11 * a[j, k] - d21 * a[j, k + 1])
            wkp1 = d * (d22 * a[j, k + 1] - np.conj(d21) * a[j, k])
            a[j:, j] = a[j:, j] - a[j:, k] * np.conj(wk) - a[j:, k + 1] * np.conj(wkp1)
            a[j, k], a[j, k + 1] = wk, wkp1
            a[j, j] = a[j, j].real
        return
    d21 = a[k + 1, k]
    d11 = a[k + 1, k + 1] / d21
    d22 = a[k, k] / d21
    t = 1.0 / (d11 * d22 - 1.0)
    d21 = t / d21
    for j in range(k + 2, n):
        wk = d21 * (d11 * a[j, k] - a[j, k + 1])
        wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
        a[j:, j] = a[j:, j] - a[j:, k] * wk - a[j:, k + 1] * wkp1
        a[j, k], a[j, k + 1] = wk, wkp1


def _herm(A, hermitian: bool) -> bool:
    # for real types hetrf is sytrf
    return bool(hermitian) and A.dtype.is_complex


@kernel("linalg_ldl_factor_ex")
def linalg_ldl_factor_ex(self, *, hermitian=False, check_errors=False):
    fn = "torch.linalg.ldl_factor_ex"
    check_square(self, fn)
    check_floating_or_complex(self, fn, allow_low=True)
    batch = tuple(self.shape[:-2])
    n = self.shape[-1]
    if self.numel() == 0:
        return out_column_major(np.zeros(tuple(self.shape)), self.dtype), \
            empty(batch + (n,), INT32), out(np.zeros(batch, np.int32), INT32)
    a = np.tril(wide(self)).reshape((-1, n, n))
    piv = np.zeros((a.shape[0], n), np.int32)
    info = np.zeros(a.shape[0], np.int32)
    herm = _herm(self, hermitian)
    for b in range(a.shape[0]):
        piv[b], info[b] = _sytf2(a[b], herm)
    info = info.reshape(batch)
    if check_errors:
        raise_info(info, fn, self.dim() == 2)
    return (out_column_major(a.reshape(tuple(self.shape)), self.dtype),
            out(piv.reshape(batch + (n,)), INT32), out(info, INT32))


@kernel("linalg_ldl_factor", composite=True)
def linalg_ldl_factor(self, *, hermitian=False):
    LD, pivots, info = call("linalg_ldl_factor_ex", self, hermitian=hermitian)
    call("_linalg_check_errors", info, "torch.linalg.ldl_factor", is_matrix=self.dim() == 2)
    return LD, pivots


register_out_forms("linalg_ldl_factor")


def _sytrs(a: np.ndarray, ipiv: np.ndarray, b: np.ndarray, herm: bool) -> np.ndarray:
    """Solves A X = B in place of b from sytf2's (a, ipiv), lower storage."""
    n = a.shape[0]
    k = 0
    while k < n:  # L D X = B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            if k < n - 1:
                b[k + 1:] -= a[k + 1:, k, None] * b[k][None, :]
            b[k] = b[k] * (1.0 / (a[k, k].real if herm else a[k, k]))
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= a[k + 2:, k, None] * b[k][None, :]
                b[k + 2:] -= a[k + 2:, k + 1, None] * b[k + 1][None, :]
            akm1k = a[k + 1, k]
            akm1 = a[k, k] / _conj(akm1k, herm)
            ak = a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = b[k] / _conj(akm1k, herm)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = B (L^H for hetrs)
        if ipiv[k] > 0:
            if k < n - 1:
                b[k] -= _conj(a[k + 1:, k], herm) @ b[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= _conj(a[k + 1:, k], herm) @ b[k + 1:]
                b[k - 1] -= _conj(a[k + 1:, k - 1], herm) @ b[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


@kernel("linalg_ldl_solve")
def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    fn = "torch.linalg.ldl_solve"
    check_square(LD, fn)
    check_floating_or_complex(LD, fn, allow_low=True)
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype._cpp_name} and A of type {LD.dtype._cpp_name} instead.")
    n = LD.shape[-1]
    if B.dim() < 2:  # linearSolveCheckInputs reads B.size(-2) first
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"-2)" if B.dim() == 1 else
                         "Dimension specified as -2 but tensor has no dimensions")
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {fn}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{fn}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex or pivots.dtype == _BOOL:
        raise RuntimeError(f"{fn}: Expected pivots to be integers. Got "
                           f"{pivots.dtype._cpp_name}")
    batch = infer_size(tuple(B.shape[:-2]), tuple(LD.shape[:-2]))
    shape = batch + tuple(B.shape[-2:])
    if LD.numel() == 0 or pivots.numel() == 0:
        return out_column_major(np.broadcast_to(wide(B), shape), B.dtype)
    a = np.broadcast_to(wide(LD), batch + (n, n)).reshape((-1, n, n))
    p = np.broadcast_to(np.asarray(pivots._np, np.int64), batch + (n,)).reshape((-1, n))
    b = np.broadcast_to(wide(B), shape).reshape((-1,) + tuple(B.shape[-2:])).copy()
    herm = _herm(LD, hermitian)
    for i in range(b.shape[0]):
        _sytrs(a[i], p[i], b[i], herm)
    return out_column_major(b.reshape(shape), B.dtype)
