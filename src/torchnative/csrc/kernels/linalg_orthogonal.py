"""CPU kernels of the orthogonal decompositions and what is built on them
(BatchLinearAlgebra.cpp, LinearAlgebra.cpp): QR (geqrf, orgqr, ormqr), the symmetric and general
eigendecompositions, the SVD and least squares.

numpy's LAPACK computes them (geqrf/orgqr, syevd, geev, gesdd: the drivers upstream calls), in
double precision, rounded once. Householder vectors, eigenvector phases and singular vector
signs are therefore LAPACK's conventions, as upstream's.
"""

from __future__ import annotations

import numpy as np

from ..core.construct import empty
from ..ops.kernel_registry import kernel
from .linalg_common import (INT64, LinAlgError, broadcast_batch, check_floating_or_complex,
                            check_is_matrix, check_square, dispatch, float_or_double, out,
                            out_column_major, real_of, wide)


def _empty(dt):
    return empty((0,), dt)


# --- QR ---------------------------------------------------------------------------------------

@kernel("linalg_qr")
def linalg_qr(A, mode="reduced"):
    fn = "linalg.qr"
    check_is_matrix(A, fn)
    check_floating_or_complex(A, fn, allow_low=True)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    dispatch("geqrf_cpu", A.dtype)
    a = wide(A)
    m, n = a.shape[-2], a.shape[-1]
    if a.size == 0:
        k = m if mode == "complete" else min(m, n)
        q = np.broadcast_to(np.eye(m, k, dtype=a.dtype), a.shape[:-2] + (m, k))
        r = np.zeros(a.shape[:-2] + (k, n), a.dtype)
    elif mode == "r":
        r = np.linalg.qr(a, mode="r")
        return _empty(A.dtype), out(r, A.dtype)
    else:
        q, r = np.linalg.qr(a, mode=mode)
    if mode == "r":
        return _empty(A.dtype), out(r, A.dtype)
    return out(q, A.dtype), out(r, A.dtype)


@kernel("geqrf")
def geqrf(self):
    check_is_matrix(self, "geqrf", "input")
    dispatch("geqrf_cpu", self.dtype)
    a = wide(self)
    m, n = a.shape[-2], a.shape[-1]
    if a.size == 0:
        return out(a, self.dtype), out(np.zeros(a.shape[:-2] + (min(m, n),), a.dtype),
                                       self.dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    return out(np.swapaxes(h, -1, -2), self.dtype), out(tau, self.dtype)


def _reflect(c: np.ndarray, v: np.ndarray, tau: np.ndarray, left: bool) -> np.ndarray:
    """(I - tau v v^H) C from the left, or C (I - tau v v^H) from the right."""
    if left:
        w = np.einsum("...i,...ik->...k", np.conj(v), c)
        return c - tau[..., None, None] * v[..., :, None] * w[..., None, :]
    w = np.einsum("...ki,...i->...k", c, v)
    return c - tau[..., None, None] * w[..., :, None] * np.conj(v)[..., None, :]


def _vector(a: np.ndarray, i: int) -> np.ndarray:
    v = np.array(a[..., :, i], copy=True)
    v[..., :i] = 0
    v[..., i] = 1
    return v


def _check_householder(input, tau, fn):
    check_is_matrix(input, fn, "input")
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if input.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if input.dim() - tau.dim() != 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{input.dim()}")
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != input.dtype:
        raise RuntimeError(f"{fn}: tau dtype {tau.dtype._cpp_name} does not match input dtype "
                           f"{input.dtype._cpp_name}")


@kernel("linalg_householder_product")
def linalg_householder_product(input, tau):
    fn = "torch.linalg.householder_product"
    _check_householder(input, tau, fn)
    dispatch("orgqr_cpu", input.dtype)
    a, t = wide(input), wide(tau)
    m, n = a.shape[-2], a.shape[-1]
    q = np.array(np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape))
    for i in range(t.shape[-1] - 1, -1, -1):  # Q = H_1 ... H_k applied to I's first n columns
        q = _reflect(q, _vector(a, i), t[..., i], left=True)
    return out(q, input.dtype)


@kernel("ormqr")
def ormqr(self, input2, input3, left=True, transpose=False):
    fn = "torch.ormqr"
    check_is_matrix(self, fn, "input")
    check_is_matrix(input3, fn, "other")
    if self.dim() - input2.dim() != 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {input2.dim()} and input.ndim is equal to "
                           f"{self.dim()}")
    if self.dim() != input3.dim():
        raise RuntimeError(f"{fn}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {input3.dim()} and input.ndim "
                           f"is equal to {self.dim()}")
    k = input2.shape[-1]
    other_dim = input3.shape[-2] if left else input3.shape[-1]
    if self.shape[-2] != other_dim:
        raise RuntimeError(f"{fn}: Expected other.shape[{-2 if left else -1}] to be equal to "
                           f"input.shape[-2], but got other.shape[{-2 if left else -1}] = "
                           f"{other_dim} and input.shape[-2] = {self.shape[-2]}")
    if k > other_dim:
        raise RuntimeError(f"{fn}: Expected input.shape[-1] to be greater than or equal to "
                           f"tau.shape[-1]")
    for t, name in ((input2, "tau"), (input3, "other")):
        if t.dtype != self.dtype:
            raise RuntimeError(f"{fn}: Expected input and {name} to have the same dtype, but "
                               f"input has dtype {self.dtype._cpp_name} and {name} has dtype "
                               f"{t.dtype._cpp_name}")
    dispatch("ormqr_cpu", self.dtype)
    a, t, c = wide(self), wide(input2), wide(input3)
    # Q = H_1 ... H_k; Q^H = H_k^H ... H_1^H with H_i^H = I - conj(tau_i) v v^H
    order = list(range(k))
    if left != transpose:
        order.reverse()
    for i in order:
        tau = np.conj(t[..., i]) if transpose else t[..., i]
        c = _reflect(c, _vector(a, i), tau, left)
    return out(c, self.dtype)


# --- eigendecompositions ----------------------------------------------------------------------

def _check_finite(a: np.ndarray, msg: str) -> None:
    if not np.isfinite(a).all():
        raise RuntimeError(msg)


@kernel("_linalg_eigh")
def _linalg_eigh(A, UPLO="L", compute_v=True):
    fn = "linalg.eigh" if compute_v else "linalg.eigvalsh"
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    check_square(A, fn)
    dispatch("linalg_eigh_cpu", A.dtype)
    a = wide(A)
    if not np.isfinite(a).all():
        raise LinAlgError(f"{fn}: The algorithm failed to converge because the input matrix is "
                          "ill-conditioned or has too many repeated eigenvalues (error code: "
                          f"{max(a.shape[-1] - 1, 1)}).")
    uplo = UPLO.upper()
    if a.size == 0:
        w = np.zeros(a.shape[:-1], np.float64)
        v = a
    elif compute_v:
        w, v = np.linalg.eigh(a, UPLO=uplo)
    else:
        w, v = np.linalg.eigvalsh(a, UPLO=uplo), None
    values = out(w, real_of(A.dtype))
    return values, (out(v, A.dtype) if compute_v else _empty(A.dtype))


def _check_eig(A, fn):
    check_square(A, fn)
    dt = A.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {dt._cpp_name}")
    dispatch("linalg_eig_out_cpu", dt)


def _eig(A, fn):
    _check_eig(A, fn)
    a = wide(A)
    _check_finite(a, "torch.linalg.eig: input tensor should not contain infs or NaNs.")
    cdt = A.dtype if A.dtype.is_complex else A.dtype.to_complex()
    if a.size == 0:
        return cdt, np.zeros(a.shape[:-1], np.complex128), np.zeros(a.shape, np.complex128)
    w, v = np.linalg.eig(a)
    return cdt, w.astype(np.complex128), v.astype(np.complex128)


@kernel("linalg_eig")
def linalg_eig(self):
    cdt, w, v = _eig(self, "linalg.eig")
    return out(w, cdt), out(v, cdt)


@kernel("_linalg_eigvals")
def _linalg_eigvals(self):
    _check_eig(self, "linalg.eigvals")
    a = wide(self)
    _check_finite(a, "torch.linalg.eig: input tensor should not contain infs or NaNs.")
    cdt = self.dtype if self.dtype.is_complex else self.dtype.to_complex()
    w = np.linalg.eigvals(a) if a.size else np.zeros(a.shape[:-1], np.complex128)
    return out(w.astype(np.complex128), cdt)


# --- SVD --------------------------------------------------------------------------------------

def _gesdd(a: np.ndarray, full_matrices: bool):
    """gesdd with the singular-vector signs of upstream's MKL build, whose real gesdd chooses
    its path by other thresholds than reference LAPACK (numpy's); the paths pick different
    signs. Measured against upstream: a wide real matrix is always bidiagonalized directly
    (reference LAPACK takes an LQ factorization first once n >= 11m/6); a tall one is
    QR-factorized first once m >= 3n/2 (reference: m >= 11n/6). Complex matrices follow
    reference LAPACK's thresholds. Zero rows or columns steer reference LAPACK onto MKL's path:
    the reflectors leave them zero, so they add only zero singular values, whose vectors are
    dropped."""
    m, n = a.shape[-2], a.shape[-1]
    if np.iscomplexobj(a) or m == n:
        return np.linalg.svd(a, full_matrices=full_matrices)
    if m > n:
        return _gesdd_tall(a, full_matrices)
    if m == 1 or n < (m * 11) // 6:  # one row: gesdd's 1x1 case fixes the sign on either path
        return np.linalg.svd(a, full_matrices=full_matrices)
    p = 1
    while n + max(0, m + p + 1 - n) >= ((m + p) * 11) // 6:
        p += 1
    c = max(0, m + p + 1 - n)
    padded = np.zeros(a.shape[:-2] + (m + p, n + c), a.dtype)
    padded[..., :m, :n] = a
    u, s, vh = np.linalg.svd(padded, full_matrices=False)
    u, s, vh = u[..., :m, :m], s[..., :m], vh[..., :m, :n]
    if not full_matrices:
        return u, s, vh
    # past row m, the direct path's rows are those of P^T (the product of gebrd's right
    # reflectors); the padding's zero singular vectors would come back permuted
    full = np.empty(a.shape[:-2] + (n, n), a.dtype)
    full[..., :m, :] = vh
    flat_full, flat_a = full.reshape(-1, n, n), a.reshape(-1, m, n)
    for i in range(flat_a.shape[0]):
        flat_full[i, m:] = _right_reflectors(flat_a[i])[m:]
    return u, s, full


def _gesdd_tall(a: np.ndarray, full_matrices: bool):
    """A tall real matrix: MKL takes the QR path from m >= 3n/2, reference LAPACK from 11n/6;
    between the two, zero rows bring reference LAPACK to its QR path too."""
    m, n = a.shape[-2], a.shape[-1]
    if not (3 * n) // 2 <= m < (11 * n) // 6:
        return np.linalg.svd(a, full_matrices=full_matrices)
    padded = np.zeros(a.shape[:-2] + ((11 * n) // 6, n), a.dtype)
    padded[..., :m, :] = a
    u, s, vh = np.linalg.svd(padded, full_matrices=False)
    u = u[..., :m, :]
    if not full_matrices:
        return u, s, vh
    # the QR path's columns past n are those of the complete Q of geqrf/orgqr
    q = np.linalg.qr(a, mode="complete")[0]
    return np.concatenate([u, q[..., :, n:]], axis=-1), s, vh


def _larfg(x: np.ndarray):
    """LAPACK's dlarfg: (v with v[0] = 1, tau, beta) with (I - tau v v^T) x = beta e_0."""
    alpha, norm = x[0], np.linalg.norm(x[1:])
    if norm == 0:
        return None, 0.0, alpha
    beta = -np.copysign(np.hypot(alpha, norm), alpha)
    v = x / (alpha - beta)
    v[0] = 1.0
    return v, (beta - alpha) / beta, beta


def _right_reflectors(a: np.ndarray) -> np.ndarray:
    """P^T of gebrd's lower bidiagonalization of a wide real matrix, A = Q B P^T."""
    m, n = a.shape
    x = np.array(a, dtype=np.float64)
    pt = np.eye(n)
    for i in range(m):
        v, tau, _ = _larfg(x[i, i:].copy())
        if v is not None:
            x[i:, i:] -= tau * np.outer(x[i:, i:] @ v, v)
            pt[i:, :] -= tau * np.outer(v, v @ pt[i:, :])
        if i + 1 < m:
            w, tau, _ = _larfg(x[i + 1:, i].copy())
            if w is not None:
                x[i + 1:, i:] -= tau * np.outer(w, w @ x[i + 1:, i:])
    return pt


@kernel("_linalg_svd")
def _linalg_svd(A, full_matrices=False, compute_uv=False, *, driver=None):
    fn = "linalg.svd"  # svdvals too: upstream names the one operator both reach
    check_is_matrix(A, fn)
    check_floating_or_complex(A, "linalg.svd", allow_low=True)
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    dispatch("linalg_svd_cpu", A.dtype)
    a = wide(A)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    if not np.isfinite(a).all():
        raise LinAlgError(f"{fn}: The algorithm failed to converge because the input matrix "
                          "contained non-finite values.")
    rdt = real_of(A.dtype)
    if a.size == 0:
        s = np.zeros(a.shape[:-2] + (k,))
        if not compute_uv:
            return _empty(A.dtype), out(s, rdt), _empty(A.dtype)
        ku, kv = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, ku, dtype=a.dtype), a.shape[:-2] + (m, ku))
        vh = np.broadcast_to(np.eye(kv, n, dtype=a.dtype), a.shape[:-2] + (kv, n))
        return out_column_major(u, A.dtype), out(s, rdt), out_column_major(vh, A.dtype)
    if not compute_uv:
        s = np.linalg.svd(a, compute_uv=False)
        return _empty(A.dtype), out(s, rdt), _empty(A.dtype)
    u, s, vh = _gesdd(a, full_matrices)
    return out_column_major(u, A.dtype), out(s, rdt), out_column_major(vh, A.dtype)


# --- least squares ----------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@kernel("linalg_lstsq")
def linalg_lstsq(self, b, rcond=None, *, driver=None):
    fn = "torch.linalg.lstsq"
    if self.dim() < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if b.dim() < 1:
        raise RuntimeError(f"{fn}: other must have at least 1 dimension.")
    float_or_double(self.dtype)
    if self.dtype != b.dtype:
        raise RuntimeError(f"{fn}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {self.dtype._cpp_name} and other's dtype "
                           f"{b.dtype._cpp_name}")
    vector = self.dim() - 1 == b.dim()
    m, n = self.shape[-2], self.shape[-1]
    rows = b.shape[-1] if vector else b.shape[-2]
    if m != rows:
        shown = f"{m}x{n} and {b.shape[-2] if not vector else rows}" + (
            "" if vector else f"x{b.shape[-1]}")
        raise RuntimeError(f"{fn}: input.size(-2) should match other.size(-{1 if vector else 2})"
                           f" ({shown})")
    drv = driver if driver is not None else "gelsy"
    if drv not in _DRIVERS:
        raise RuntimeError(f"{fn}: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    a, bb = wide(self), wide(b)
    if vector:
        bb = bb[..., None]
    batch = broadcast_batch(a, bb)
    a = np.broadcast_to(a, batch + a.shape[-2:])
    bb = np.broadcast_to(bb, batch + bb.shape[-2:])
    eps = np.finfo(np.float32 if real_of(self.dtype).itemsize == 4 else np.float64).eps
    rc = eps * max(m, n) if rcond is None or rcond < 0 else rcond
    u, s, vh = (np.linalg.svd(a, full_matrices=False) if a.size else
                (np.zeros(batch + (m, 0)), np.zeros(batch + (0,)), np.zeros(batch + (0, n))))
    smax = s[..., :1] if s.shape[-1] else np.zeros(batch + (1,))
    keep = s > rc * smax
    rank = keep.sum(-1)
    with np.errstate(all="ignore"):
        inv = np.where(keep, 1 / np.where(keep, s, 1), 0)
    uhb = np.einsum("...ji,...jk->...ik", np.conj(u), bb)
    x = np.einsum("...ji,...jk->...ik", np.conj(vh), inv[..., :, None] * uhb)
    if drv == "gels":  # full rank assumed: every singular value used
        with np.errstate(all="ignore"):
            x = np.einsum("...ji,...jk->...ik", np.conj(vh), uhb / s[..., :, None])
    elif drv == "gelsy" and m >= n and a.size:
        x = _gelsy_full_rank(a, bb, rank, x)
    sol = x[..., 0] if vector else x
    rdt = real_of(self.dtype)
    if m > n and drv != "gelsy" and (drv == "gels" or bool((rank == n).all())):
        resid = np.sum(np.abs(np.einsum("...ij,...jk->...ik", a, x) - bb) ** 2, axis=-2)
        residuals = out(resid[..., 0] if vector else resid, rdt)
    else:
        residuals = _empty(rdt)
    ranks = out(rank, INT64) if drv != "gels" else _empty(INT64)
    svals = out(s, rdt) if drv in ("gelsd", "gelss") else _empty(rdt)
    return out(sol, self.dtype), residuals, ranks, svals


def _pivot_order(a: np.ndarray) -> list:
    """geqp3's column order: at each step the column of largest remaining norm (the first of
    equals), the others then orthogonalized against it."""
    r = np.array(a, copy=True)
    order = list(range(r.shape[1]))
    for j in range(r.shape[1]):
        norms = np.linalg.norm(r[:, j:], axis=0)
        k = j + int(np.argmax(norms))
        r[:, [j, k]] = r[:, [k, j]]
        order[j], order[k] = order[k], order[j]
        v = r[:, j] / norms[k - j] if norms[k - j] else r[:, j]
        r[:, j + 1:] -= np.outer(v, np.conj(v) @ r[:, j + 1:])
    return order


def _gelsy_full_rank(a, b, rank, fallback):
    """gelsy's solution where A has full column rank: QR with column pivoting, R x = Q^H b.
    Rank-deficient matrices keep the minimum-norm (SVD) solution, which gelsy's complete
    orthogonal factorization also computes."""
    from .linalg_common import trsm

    n = a.shape[-1]
    x = np.array(fallback, copy=True)
    flat_a = a.reshape(-1, *a.shape[-2:])
    flat_b = b.reshape(-1, *b.shape[-2:])
    flat_x = x.reshape(-1, *x.shape[-2:])
    for i, r in enumerate(np.asarray(rank).reshape(-1)):
        if r != n:
            continue
        order = _pivot_order(flat_a[i])
        q, rr = np.linalg.qr(flat_a[i][:, order])
        with np.errstate(all="ignore"):
            y = trsm(rr, np.conj(q.T) @ flat_b[i], upper=True)
        flat_x[i][order] = y
    return flat_x.reshape(x.shape)
