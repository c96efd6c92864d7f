"""FunctionsManual.cpp's forward formulas of the linear-algebra operators (solves, LU, QR,
pseudo-inverse, eigen and singular value decompositions), written from the identities upstream
differentiates: the product rule on the factorization, split by the structure of each factor
(triangular, unitary, diagonal), in upstream's gauges (unit-diagonal L, real diagonal of R,
eigenvectors of unit norm with a real component where upstream fixes one).

An input without a tangent reaches these as zeros (``dispatch._zeros``)."""

from __future__ import annotations

from ...kernels.linalg_common import is_vector_rhs
from ..cpp_shims import _torch


def linalg_solve_jvp(dA, dB, X, LU, pivots, left):
    """X = A^{-1} B: dX = A^{-1} (dB - dA X) (X dA on the right for left=False), through the
    saved LU."""
    torch = _torch()
    vector = is_vector_rhs(LU, X)
    X_ = X.unsqueeze(-1) if vector else X
    dB_ = dB.unsqueeze(-1) if vector else dB
    R_ = dA.matmul(X_) if left else X_.matmul(dA)
    dX_ = torch.linalg.lu_solve(LU, pivots, dB_ - R_, left=left)
    return dX_.squeeze(-1) if vector else dX_


def linalg_lu_solve_jvp(X, LU, pivots, dLU, dB, left, adjoint):
    """X solves op(P L U) X = B; with L = I + tril(LU, -1), U = triu(LU): the tangent of the
    factors (dL = tril(dLU, -1), dU = triu(dLU)) plus the solve of dB."""
    torch = _torch()
    st = torch.linalg.solve_triangular
    S = torch.linalg.lu_solve(LU, pivots, dB, left=left, adjoint=adjoint)
    if left != adjoint:
        # op(A) = A: dX = op2(-U^{-1}(dU + L^{-1} dL U) op2(X)) + S
        R = st(LU, dLU.tril(-1), upper=False, left=True, unitriangular=True)
        U = LU.triu()
        R = -st(U, dLU.triu() + R.matmul(U), upper=True)
        return (R.matmul(X) if left else X.matmul(R.mH)) + S
    # op(A) = A^H: dX = op2(op1(-op3(X)^H P (L dU U^{-1} + dL) L^{-1} P^T)) + S
    P, L, U = torch.lu_unpack(LU, pivots)
    V = X.mH if left else X
    R = st(U, L.matmul(dLU.triu()), upper=True, left=False) + dLU.tril(-1)
    R = st(L, -V.matmul(P).matmul(R), upper=False, left=False, unitriangular=True).matmul(P.mT)
    return (R.mH if left else R) + S


def triangular_solve_jvp(X, A, dA, dB, upper, transpose, unitriangular):
    """torch.triangular_solve: op(A) X = B, dX = op(A)^{-1} (dB - dA X). Upstream's generic
    solve jvp multiplies by dA itself also when ``transpose`` solves with A^T (where the exact
    tangent would use dA^T): its tangent is reproduced as it is."""
    torch = _torch()
    vector = is_vector_rhs(dA, dB)
    contrib = dA.matmul(X.unsqueeze(-1)).squeeze(-1) if vector else dA.matmul(X)
    return torch.triangular_solve(dB - contrib, A, upper, transpose, unitriangular)[0]


def linalg_solve_triangular_forward_AD(A_t, B_t, A, X, upper, left, unitriangular):
    """A X = B (X A = B) with A triangular: only A's triangle (without its diagonal when it is
    unit) moves the solution."""
    torch = _torch()
    k = int(unitriangular)
    proj = A_t.triu(k) if upper else A_t.tril(-k)
    R = B_t - (proj.matmul(X) if left else X.matmul(proj))
    return torch.linalg.solve_triangular(A, R, upper=upper, left=left,
                                         unitriangular=unitriangular)


def linalg_lu_jvp(dA, P, L, U, pivot):
    """A = P L U with L unit lower (m x k) and U upper (k x n), k = min(m, n). On the leading
    k x k block, X = L1^{-1} P^T dA1 U1^{-1} splits into L1^{-1} dL1 (strictly lower) and
    dU1 U1^{-1} (upper); the remaining rows of L (tall) or columns of U (wide) follow."""
    torch = _torch()
    st = torch.linalg.solve_triangular
    m, n = dA.shape[-2], dA.shape[-1]
    k = min(m, n)
    PdA = P.mT.matmul(dA) if pivot else dA
    L1 = L.narrow(-2, 0, k)
    U1 = U.narrow(-1, 0, k)
    X = st(L1, PdA.narrow(-2, 0, k).narrow(-1, 0, k), upper=False, left=True,
           unitriangular=True)
    X = st(U1, X, upper=True, left=False)
    dL1 = L1.matmul(X.tril(-1))
    dU1 = X.triu().matmul(U1)
    if m == n:
        return dL1, dU1
    if m > n:
        # rows below: P^T dA2 = dL2 U + L2 dU
        dL2 = st(U1, PdA.narrow(-2, k, m - k), upper=True, left=False) - \
            L.narrow(-2, k, m - k).matmul(X.triu())
        return torch.cat([dL1, dL2], -2), dU1
    # columns right: P^T dA2 = dL U2 + L dU2
    dU2 = st(L1, PdA.narrow(-1, k, n - k), upper=False, left=True, unitriangular=True) - \
        X.tril(-1).matmul(U.narrow(-1, k, n - k))
    return dL1, torch.cat([dU1, dU2], -1)


def lu_factor_ex_jvp(dA, LU, pivs, pivot):
    """The packed LU's tangent: dL below the diagonal, dU on and above it."""
    torch = _torch()
    P, L, U = torch.lu_unpack(LU, pivs, unpack_data=True, unpack_pivots=pivot)
    dL, dU = linalg_lu_jvp(dA, P, L, U, pivot)
    m, n = LU.shape[-2], LU.shape[-1]
    if m == n:
        return dL + dU
    if m > n:  # dL is m x n, dU the top n x n block
        return dL + torch.cat([dU, dU.new_zeros(*dU.shape[:-2], m - n, n)], -2)
    return dU + torch.cat([dL, dL.new_zeros(*dL.shape[:-2], m, n - m)], -1)


def _qr_square_part(Q, R, dA):
    """dA = dQ R + Q dR with Q^H dQ skew-Hermitian and dR R^{-1} upper with a real diagonal:
    T = dR R^{-1} is the upper half of sym(Q^H dA R^{-1}) (its diagonal halved)."""
    torch = _torch()
    dA1 = torch.linalg.solve_triangular(R, dA, upper=True, left=False)
    B = Q.mH.matmul(dA1)
    S = B + B.mH
    d = S.diagonal(0, -2, -1)
    T = S.triu() - (d * 0.5).diag_embed()
    return dA1 - Q.matmul(T), T.matmul(R)


def linalg_qr_jvp(dA, Q, R, mode):
    torch = _torch()
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    m, n = dA.shape[-2], dA.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if m >= n:
        return _qr_square_part(Q, R, dA)
    # wide: A = Q [R1 R2]; the square block as above, then dR2 = Q^H (dA2 - dQ R2)
    dQ, dR1 = _qr_square_part(Q, R.narrow(-1, 0, m), dA.narrow(-1, 0, m))
    dR2 = Q.mH.matmul(dA.narrow(-1, m, n - m) - dQ.matmul(R.narrow(-1, m, n - m)))
    return dQ, torch.cat([dR1, dR2], -1)


def pinv_jvp(A, pinvA, dA):
    """d(A^+) = -A^+ dA A^+ + A^+ A^{+H} dA^H (I - A A^+) + (I - A^+ A) dA^H A^{+H} A^+, with the
    products ordered so that the smaller side's square matrices are formed."""
    m, n = A.shape[-2], A.shape[-1]
    dAh = dA.mH
    pinvAh = pinvA.mH
    if m <= n:
        K = pinvAh.matmul(dAh)
        return pinvA.matmul(K - K.mH - K.matmul(A.matmul(pinvA))) + \
            (dAh - pinvA.matmul(A.matmul(dAh))).matmul(pinvAh.matmul(pinvA))
    K = pinvA.matmul(dA)
    Kh = K.mH
    return (Kh - K - pinvA.matmul(A).matmul(Kh)).matmul(pinvA) + \
        pinvA.matmul(pinvAh).matmul(dAh - dAh.matmul(A).matmul(pinvA))


def linalg_lstsq_solution_jvp(A, B_, dA, dB_):
    """X = A^+ B: dX = d(A^+) B + A^+ dB."""
    torch = _torch()
    vector = is_vector_rhs(A, B_)
    B = B_.unsqueeze(-1) if vector else B_
    dB = dB_.unsqueeze(-1) if vector else dB_
    pinvA = torch.linalg.pinv(A)
    dX = pinv_jvp(A, pinvA, dA).matmul(B) + pinvA.matmul(dB)
    return dX.squeeze(-1) if vector else dX


def linalg_lstsq_residuals_jvp(A, B_, dA, dB_, X_, L):
    """L = |A X - B|^2 per column; X minimizes it, so X's own motion does not count (Danskin):
    dL = 2 Re(r * conj(dA X - dB)) summed over the rows."""
    torch = _torch()
    if L.numel() == 0:
        return L.clone()
    vector = is_vector_rhs(A, B_)
    B = B_.unsqueeze(-1) if vector else B_
    dB = dB_.unsqueeze(-1) if vector else dB_
    X = X_.unsqueeze(-1) if vector else X_
    r = A.matmul(X) - B
    dr = dA.matmul(X) - dB
    return 2 * torch.real(r * dr.conj()).sum(-2)


def linalg_eig_jvp(dA, L, V, is_hermitian):
    """A = V diag(L) V^{-1} with unit-norm eigenvectors: dP = V^{-1} dA V gives dL = diag(dP)
    and dV = V (dP off its diagonal / (L_j - L_i)), minus the part that would change the
    eigenvectors' norms (general case; a unitary V keeps them)."""
    torch = _torch()
    if is_hermitian:
        dP = V.mH.matmul(dA).matmul(V)
    else:
        cdA = dA if dA.is_complex() else dA.to(V.dtype)
        dP = torch.linalg.solve(V, cdA.matmul(V))
    diag = dP.diagonal(0, -2, -1)
    dL = torch.real(diag) if is_hermitian and dA.is_complex() else diag
    gap = L.unsqueeze(-2) - L.unsqueeze(-1)
    off = dP / gap
    off = torch.where(torch.eye(off.shape[-1], dtype=torch.bool), 0, off)
    dX = V.matmul(off)
    if is_hermitian:
        return dL, dX
    return dL, dX - V * torch.real(V.mH.matmul(dX).diagonal(0, -2, -1)).unsqueeze(-2)


def linalg_svd_jvp(dA, U_, S, Vh_, full_matrices):
    """A = U diag(S) V^H: with dP = U^H dA V, dS = Re diag(dP); the off-diagonal part of dP,
    symmetrized against the gaps S_k^2 - S_j^2, rotates U and V (the diagonal's imaginary part
    splits between them in the complex case); a rectangular A adds the component of dA outside
    U's (V's) span. With full_matrices the extra columns (rows) get zero tangents."""
    torch = _torch()
    is_complex = dA.is_complex()
    m, n = dA.shape[-2], dA.shape[-1]
    k = S.shape[-1]
    U = U_.narrow(-1, 0, k) if full_matrices else U_
    Vh = Vh_.narrow(-2, 0, k) if full_matrices else Vh_
    V = Vh.mH
    dP = U.mH.matmul(dA.matmul(V)) if m >= n else U.mH.matmul(dA).matmul(V)
    dS = torch.real(dP.diagonal(0, -2, -1)) if is_complex else dP.diagonal(0, -2, -1)
    dP = dP - dS.diag_embed()
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E = torch.where(torch.eye(k, dtype=torch.bool), 1, E)

    def sym(X):
        return X + X.mH

    diag_half = dP.diagonal(0, -2, -1).div(2. * S) if is_complex else None
    dUaux = sym(dP * S.unsqueeze(-2)) / E
    if is_complex:
        dUaux = dUaux + diag_half.diag_embed()
    dU = U.matmul(dUaux)
    if m > n:
        dAVSinv = dA.matmul(V / S.unsqueeze(-2))
        dU = dU + dAVSinv - U.matmul(U.mH.matmul(dAVSinv))
        if full_matrices:
            dU = torch.cat([dU, dU.new_zeros(*dU.shape[:-1], m - n)], -1)
    dVhaux = sym(dP * (-S).unsqueeze(-1)) / E
    if is_complex:
        dVhaux = dVhaux + diag_half.diag_embed()
    dVh = dVhaux.matmul(Vh)
    if m < n:
        UHdASinv = (U.mH / S.unsqueeze(-1)).matmul(dA)
        dVh = dVh + UHdASinv - UHdASinv.matmul(V).matmul(Vh)
        if full_matrices:
            dVh = torch.cat([dVh, dVh.new_zeros(*dVh.shape[:-2], n - m, n)], -2)
    return dU, dS, dVh


def cholesky_solve_jvp(X, U, dU, dB, upper):
    """X = A^{-1} B with A = U^H U (upper) or U U^H: dA = dK + dK^H, dK = dU^H U (U dU^H), and
    dX = A^{-1} (dB - dA X) through the factor (the generic solve jvp)."""
    torch = _torch()
    dK = dU.mH.matmul(U) if upper else dU.matmul(U.mH)
    dA = dK + dK.mH
    vector = is_vector_rhs(dA, dB)
    contrib = dA.matmul(X.unsqueeze(-1)).squeeze(-1) if vector else dA.matmul(X)
    return torch.cholesky_solve(dB - contrib, U, upper)


def cholesky_inverse_jvp(F, dF, X, upper):
    """Upstream's tangent of X = A^{-1}, A = F^H F (upper) or F F^H: P + P^H with
    P = -X dC X C, C = F (F^H when lower), dC = dF^H (dF). It is not -X dA X (the exact
    tangent): reproduced as upstream computes it."""
    C = F if upper else F.mH
    dC = dF.mH if upper else dF
    P = -X.matmul(dC).matmul(X).matmul(C)
    return P + P.mH
