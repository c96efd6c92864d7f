"""CPU kernels of the orthogonal decompositions and what is built on them
(BatchLinearAlgebra.cpp, LinearAlgebra.cpp): QR (geqrf, orgqr, ormqr), the symmetric and general
eigendecompositions, the SVD, least squares and the matrix exponential.

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
                            real_of, wide)


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

@kernel("_linalg_svd")
def _linalg_svd(A, full_matrices=False, compute_uv=False, *, driver=None):
    fn = "linalg.svd" if compute_uv else "linalg.svdvals"
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
        return out(u, A.dtype), out(s, rdt), out(vh, A.dtype)
    if not compute_uv:
        s = np.linalg.svd(a, compute_uv=False)
        return _empty(A.dtype), out(s, rdt), _empty(A.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return out(u, A.dtype), out(s, rdt), out(vh, A.dtype)


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


# --- matrix exponential -----------------------------------------------------------------------
# LinearAlgebra.cpp's mexp (Bader, Blanes, Casas 2019: optimized Taylor polynomials of degree 1,
# 2, 4, 8, 12, 18, the last with scaling and squaring), always with the double-precision degree
# bounds: a single matrix takes the cheapest polynomial its 1-norm allows, a batch takes degree 18.

_THETAS = (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
           4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00)
_B12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
         0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
         0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
         -0.00675951846863086359))
_B18 = ((0., -1.00365581030144618291e-01, -8.02924648241156932449e-03,
         -8.92138498045729985177e-04, 0.),
        (0., 3.97849749499645077844e-01, 1.36783778460411720168e+00,
         4.98289622525382669416e-01, -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02,
         -1.40086798182036094347e-05))
_SQRT_177 = 0.1330413469565007072504e+2


def _powers(a, count):
    """[I, A, A^2, A^3, A^6][:count]."""
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    out = [eye, a]
    if count > 2:
        out.append(a @ a)
    if count > 3:
        out.append(a @ out[2])
    if count > 4:
        out.append(out[3] @ out[3])
    return out[:count]


def _combine(mats, coef):
    acc = np.zeros_like(mats[0])
    for m, c in zip(mats, coef):
        acc = acc + c * m
    return acc


def _t1(a):
    i, a1 = _powers(a, 2)
    return i + a1


def _t2(a):
    i, a1, a2 = _powers(a, 3)
    return i + a1 + a2 / 2.0


def _t4(a):
    i, a1, a2 = _powers(a, 3)
    a4 = a2 @ _combine([i, a1, a2], (1 / 2.0, 1 / 6.0, 1 / 24.0))
    return _combine([i, a1, a2, a4], (1.0, 1.0, 0.0, 1.0))


def _t8(a):
    x3 = 2.0 / 3.0
    x1 = x3 * ((1.0 + _SQRT_177) / 88.0)
    x2 = x3 * ((1.0 + _SQRT_177) / 352.0)
    x4 = (-271.0 + 29.0 * _SQRT_177) / (315.0 * x3)
    x5 = (-11.0 + 11.0 * _SQRT_177) / (1260.0 * x3)
    x6 = (-99.0 + 11.0 * _SQRT_177) / (5040.0 * x3)
    x7 = (89.0 - _SQRT_177) / (5040.0 * x3)
    y2 = (857.0 - 58.0 * _SQRT_177) / 630.0
    i, a1, a2 = _powers(a, 3)
    a4 = a2 @ _combine([a1, a2], (x1, x2))
    a8 = _combine([a2, a4], (x3, 1.0)) @ _combine([i, a1, a2, a4], (x4, x5, x6, x7))
    return _combine([i, a1, a2, a4, a8], (1.0, 1.0, y2, 0.0, 1.0))


def _t12(a):
    mats = _powers(a, 4)
    b = [_combine(mats, row) for row in _B12]
    b[2] = b[2] + b[3] @ b[3]
    return b[0] + (b[1] + b[2]) @ b[2]


def _t18(a):
    mats = _powers(a, 5)
    b = [_combine(mats, row) for row in _B18]
    b[3] = b[3] + b[0] @ b[4]
    return b[1] + (b[2] + b[3]) @ b[3]


def _t18_scaled(a, norm):
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.maximum(np.ceil(np.log2(norm / _THETAS[5])), 0)
    s = np.where(np.isnan(s), 0, s)
    r = _t18(a * np.power(2.0, -s)[:, None, None])
    for i in range(int(s.max()) if s.size else 0):
        r = np.where((s > i)[:, None, None], r @ r, r)
    return r


def _expm(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    norm = np.abs(flat).sum(-2).max(-1)
    if flat.shape[0] > 1:
        return _t18_scaled(flat, norm).reshape(a.shape)
    res = np.full_like(flat, np.nan)
    lower = -1.0
    for theta, fn in zip(_THETAS[:5], (_t1, _t2, _t4, _t8, _t12)):
        if lower < norm[0] <= theta:
            res = fn(flat)
        lower = theta
    if norm[0] >= _THETAS[4]:
        res = _t18_scaled(flat, norm)
    return res.reshape(a.shape)


@kernel("linalg_matrix_exp")
def linalg_matrix_exp(self):
    fn = "linalg.matrix_exp"
    check_square(self, fn)
    check_floating_or_complex(self, fn, allow_low=True)
    n = self.shape[-1]
    if n == 0:
        from ..dispatch.call import call

        return call("clone", self)
    if n == 1:
        from ..dispatch.call import call

        return call("exp", self)
    a = wide(self)
    with np.errstate(all="ignore"):
        return out(_expm(a), self.dtype)
