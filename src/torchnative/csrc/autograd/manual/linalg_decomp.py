"""FunctionsManual.cpp helpers for the decompositions: SVD, eigen, QR, Cholesky, LU, Householder
products and the matrix exponential.

Written from upstream's formulas (torch/csrc/autograd/FunctionsManual.cpp). Where upstream edits
a fresh tensor in place (filling or scaling a diagonal), this selects the same values out of place
(``where`` on the diagonal), so a double backward records a graph either way.
"""

from __future__ import annotations

from ...core.grad_mode import TLS as _GRAD
from ..cpp_shims import _torch


def _eye_mask(X):
    return _torch().eye(X.shape[-2], X.shape[-1], dtype=_torch().bool)


def _set_diag(X, d):
    return _torch().where(_eye_mask(X), d.diag_embed(), X)


def _fill_diag_one(X):
    return _torch().where(_eye_mask(X), 1., X)


def _scale_diag(X, real_factor=1.0, imag_factor=1.0):
    """X with its diagonal's real part times real_factor and imaginary part times imag_factor."""
    torch = _torch()
    d = X.diagonal(0, -2, -1)
    if X.is_complex():
        d = torch.complex(d.real * real_factor, d.imag * imag_factor)
    else:
        d = d * real_factor
    return _set_diag(X, d)


def _gap_matrix(S):
    """E_jk = S_k^2 - S_j^2 off the diagonal, 1 on it."""
    S2 = S * S
    return _fill_diag_one(S2.unsqueeze(-2) - S2.unsqueeze(-1))


def svd_backward(gU, gS, gVh, U, S, Vh):
    torch = _torch()
    if gS is None and gU is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:  # svdvals: U diag(gS) Vh
        return torch.matmul(U, gS.unsqueeze(-1) * Vh) if m >= n else \
            torch.matmul(U * gS.unsqueeze(-2), Vh)
    is_complex = U.is_complex()

    def skew(A):
        return A - A.mH

    UhgU = skew(torch.matmul(U.mH, gU)) if gU is not None else None
    VhgV = skew(torch.matmul(Vh, gVh.mH)) if gVh is not None else None
    if is_complex:
        im_u = torch.imag(UhgU.diagonal(0, -2, -1)) if gU is not None else torch.zeros_like(S)
        im_v = torch.imag(VhgV.diagonal(0, -2, -1)) if gVh is not None else torch.zeros_like(S)
        if not torch.allclose(im_u, -im_v, rtol=1e-2, atol=1e-2):
            raise RuntimeError(
                "svd_backward: The singular vectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this phase "
                "term, making it ill-defined.")
    E = _gap_matrix(S)
    if gU is not None:
        if gVh is not None:
            gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
        else:
            gA = (UhgU / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + gS.diag_embed()
    if is_complex and gU is not None and gVh is not None:
        gA = gA + (UhgU.diagonal(0, -2, -1) / (2. * S)).diag_embed()
    if m > n and gU is not None:
        gA = torch.matmul(U, gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - torch.matmul(U, torch.matmul(U.mH, gUSinv))
        return torch.matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = torch.matmul(gA, Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - torch.matmul(torch.matmul(SinvgVh, Vh.mH), Vh)
        return torch.matmul(U, gA)
    return torch.matmul(U, torch.matmul(gA, Vh)) if m >= n else \
        torch.matmul(torch.matmul(U, gA), Vh)


def linalg_eig_backward(gL, gV, L, V, is_hermitian, symeig_eigenvectors=True):
    torch = _torch()
    if not symeig_eigenvectors:
        raise RuntimeError("linalg_eig_backward: torch.symeig(A, eigenvectors=False) is not "
                           "differentiable. Use torch.linalg.eigvalsh(A) instead.")
    if gL is None and gV is None:
        return None
    if gV is None:  # eigvals / eigvalsh: V^{-H} diag(gL) V^H
        if is_hermitian:
            return torch.matmul(V * gL.unsqueeze(-2), V.mH)
        return torch.linalg.solve(V.mH, gL.unsqueeze(-1) * V.mH)
    VhgV = torch.matmul(V.mH, gV)
    diag_VhgV = VhgV.diagonal(0, -2, -1)
    if V.is_complex():
        im = torch.imag(diag_VhgV)
        if not torch.allclose(im, torch.zeros_like(im), rtol=1e-2, atol=1e-2):
            name = "linalg_eigh_backward" if is_hermitian else "linalg_eig_backward"
            raise RuntimeError(
                f"{name}: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined.")
    if is_hermitian:
        VhgV = 0.5 * (VhgV - VhgV.mH)
    else:
        VhgV = VhgV - torch.matmul(V.mH, V * torch.real(diag_VhgV).unsqueeze(-2))
    Lconj = L.conj()
    Econj = _fill_diag_one(Lconj.unsqueeze(-2) - Lconj.unsqueeze(-1))
    gA = VhgV / Econj
    if gL is not None:
        gA = _set_diag(gA, gL.to(gA.dtype))
    if is_hermitian:
        return torch.matmul(V, torch.matmul(gA, V.mH))
    return torch.linalg.solve(V.mH, torch.matmul(gA, V.mH))


def _parse_qr_mode(mode):
    if mode == "reduced":
        return True, True
    if mode == "complete":
        return True, False
    if mode == "r":
        return False, True
    raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                       "(default), 'r', or 'complete'")


def linalg_qr_backward(gQ, gR, Q, R, mode):
    torch = _torch()
    compute_q, reduced = _parse_qr_mode(mode)
    if not compute_q:
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if not (reduced or m <= n):
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if gQ is not None:
        gA = gR.matmul(R.mH) - Q.mH.matmul(gQ) if gR is not None else -Q.mH.matmul(gQ)
    else:
        gA = gR.matmul(R.mH)
    if m >= n:
        X = gA.triu()
        gA = Q.matmul(_scale_diag(X + X.mH, real_factor=0.5))  # syminv's adjoint
        if gQ is not None:
            gA = gA + gQ
        return torch.linalg.solve_triangular(R.mH, gA, upper=False, left=False)
    X = -gA
    skew = (X - X.mH).tril()
    if X.is_complex():
        skew = _scale_diag(skew, imag_factor=0.5)
    gA = Q.matmul(skew)
    gA = torch.linalg.solve_triangular(R.narrow(-1, 0, m).mH, gA, upper=False, left=False)
    shape = list(R.shape)
    shape[-1] = n - m
    gA = torch.cat([gA, gA.new_zeros(shape)], -1)
    if gR is not None:
        gA = gA + Q.matmul(gR)
    return gA


def cholesky_backward(gL, upper, L):
    torch = _torch()
    if gL is None:
        return None
    L_ = L.mH if upper else L
    gL_ = gL.mH if upper else gL
    gA = L_.mH.matmul(gL_).tril()
    gA = 0.5 * (gA + gA.tril(-1).mH)
    gA = torch.linalg.solve_triangular(L_.mH, gA, upper=True, left=True)
    return torch.linalg.solve_triangular(L_, gA, upper=False, left=False)


def cholesky_jvp(dA, L, upper):
    """From A = L L^H: L^{-1} dA L^{-H} = 2 Re-part of L^{-1} dL, whose lower triangle (half
    the diagonal) gives dL = L (tril(X) - diag(X)/2)."""
    torch = _torch()
    L_ = L.mH if upper else L
    dL = torch.linalg.solve_triangular(L_, dA, upper=False, left=True)
    dL = torch.linalg.solve_triangular(L_.mH, dL, upper=True, left=False)
    dL = dL.tril() - dL.diagonal(0, -2, -1).mul(0.5).diag_embed()
    dL = L_.matmul(dL)
    return dL.mH if upper else dL


def linalg_lu_backward(L_grad, U_grad, P, L, U, pivot):
    torch = _torch()
    solve_tri = torch.linalg.solve_triangular
    if L_grad is None and U_grad is None:
        return None
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        A_grad = L.mH.matmul(L_grad).tril(-1) if L_grad is not None else None
        if U_grad is not None:
            term = U_grad.matmul(U.mH).triu()
            A_grad = A_grad + term if A_grad is not None else term
        A_grad = solve_tri(U.mH, A_grad, upper=False, left=False)
        A_grad = solve_tri(L.mH, A_grad, upper=True, left=True, unitriangular=True)
        return P.matmul(A_grad) if pivot else A_grad
    if m < n:  # wide
        U1 = U if n == k else U.narrow(-1, 0, k)
        A_grad = L.mH.matmul(L_grad) if L_grad is not None else None
        if U_grad is not None:
            term = U_grad.triu().matmul(U.mH)
            A_grad = A_grad - term if A_grad is not None else -term
        A_grad = solve_tri(U1.mH, A_grad.tril(-1), upper=False, left=False)
        if U_grad is not None:
            gU1 = U_grad if n == k else U_grad.narrow(-1, 0, k)
            A_grad = torch.cat([A_grad + gU1.triu(), U_grad.narrow(-1, k, n - k)], -1)
        A_grad = solve_tri(L.mH, A_grad, upper=True, left=True, unitriangular=True)
        if U_grad is None:
            A_grad = torch.cat([A_grad, torch.zeros_like(U.narrow(-1, k, n - k))], -1)
        return P.matmul(A_grad) if pivot else A_grad
    # tall
    L1 = L if m == k else L.narrow(-2, 0, k)
    A_grad = U_grad.matmul(U.mH) if U_grad is not None else None
    if L_grad is not None:
        term = L.mH.matmul(L_grad.tril(-1))
        A_grad = A_grad - term if A_grad is not None else -term
    A_grad = solve_tri(L1.mH, A_grad.triu(), upper=True, left=True, unitriangular=True)
    if L_grad is not None:
        gL1 = L_grad if m == k else L_grad.narrow(-2, 0, k)
        A_grad = torch.cat([A_grad + gL1.tril(-1), L_grad.narrow(-2, k, m - k)], -2)
    A_grad = solve_tri(U.mH, A_grad, upper=False, left=False)
    if L_grad is None:
        A_grad = torch.cat([A_grad, torch.zeros_like(L.narrow(-2, k, m - k))], -2)
    return P.matmul(A_grad) if pivot else A_grad


def lu_factor_ex_backward(grad, LU, pivs, pivot):
    torch = _torch()
    P, L, U = torch.lu_unpack(LU, pivs, unpack_data=True, unpack_pivots=pivot)
    k = min(LU.shape[-2], LU.shape[-1])
    return linalg_lu_backward(grad.narrow(-1, 0, k), grad.narrow(-2, 0, k), P, L, U, pivot)


def lu_unpack_backward(L_grad, U_grad, m, n):
    torch = _torch()
    if L_grad is None and U_grad is None:
        return None
    k = min(m, n)

    def L1(X):
        return X.tril(-1) if m == k else X.narrow(-2, 0, k).tril(-1)

    def U1(X):
        return X.triu() if n == k else X.narrow(-1, 0, k).triu()

    if L_grad is not None:
        if U_grad is not None:
            if m == n:
                return L_grad.tril(-1) + U_grad.triu()
            A1 = L1(L_grad) + U1(U_grad)
            A2 = L_grad.narrow(-2, k, m - k) if m > n else U_grad.narrow(-1, k, n - k)
            return torch.cat([A1, A2], -2 if m > n else -1)
        if m >= n:
            return L_grad.tril(-1)
        size = list(L_grad.shape)
        size[-1] = n - m
        return torch.cat([L_grad.tril(-1), torch.zeros(size, dtype=L_grad.dtype)], -1)
    if n >= m:
        return U_grad.triu()
    size = list(U_grad.shape)
    size[-2] = m - n
    return torch.cat([U_grad.triu(), torch.zeros(size, dtype=U_grad.dtype)], -2)


def _reflect(v, t, K, left, k=None):
    """(I - t v v^H) K, or K (I - t v v^H) when not left. With ``k`` (first-order backward, as
    upstream's in-place path) only the rows/columns from k on are touched: v is zero above k."""
    m = v.shape[-2]
    if k is None:
        if left:
            return K - (t.unsqueeze(-1) * v) * v.mH.matmul(K)
        return K - K.matmul(t.unsqueeze(-1) * v) * v.mH
    vk = v.narrow(-2, k, m - k)
    K = K.clone()
    if left:
        u = vk.mH.matmul(K.narrow(-2, k, m - k))
        K.narrow(-2, k, m - k).sub_((t.unsqueeze(-1) * vk) * u)
    else:
        u = K.narrow(-1, k, m - k).matmul(t.unsqueeze(-1) * vk)
        K.narrow(-1, k, m - k).sub_(u * vk.mH)
    return K


def householder_product_backward(grad, result, input_, tau, flip_order=False):
    torch = _torch()
    if grad is None or input_.numel() == 0 or tau.numel() == 0:
        return None, None
    m = input_.shape[-2]
    k = tau.shape[-1]
    # the forward reads the strict lower triangle, with an implicit unit diagonal
    inp = _fill_diag_one(input_.tril(-1))
    cols = inp.narrow(-1, 0, k)
    sigma = tau / (tau * (cols * cols.conj()).sum(-2) - 1.0)  # H(sigma_i) = H(tau_i)^{-1}
    K = result.matmul(grad.mH)

    def flip(i):
        return i if not flip_order else k - i - 1

    apply_left = not flip_order
    # in place on the trailing block when no graph is recorded, out of place (full) otherwise
    in_place = not _GRAD.grad_enabled

    def reflect(i, v, t, K, left):
        return _reflect(v, t, K, left, i if in_place else None)

    z = flip(0)
    K = reflect(z, inp.narrow(-1, z, 1), sigma.narrow(-1, z, 1), K, apply_left)
    v_grads, tau_grads = [None] * k, [None] * k
    for i_idx in range(k):
        i = flip(i_idx)
        v_i, t_i = inp.narrow(-1, i, 1), tau.narrow(-1, i, 1)
        v = v_i.narrow(-2, i, m - i)
        vHK = v.mH.matmul(K.narrow(-2, i, m - i))
        Kv = K.narrow(-1, i, m - i).matmul(v)
        t = t_i.unsqueeze(-1)
        v_grads[i] = (-t * vHK).conj().squeeze(-2) - (t * Kv).squeeze(-1)
        tau_grads[i] = -(vHK.narrow(-1, i, m - i).matmul(v)).conj().squeeze(-1).squeeze(-1)
        if i != flip(k - 1):
            j = i + 1 if not flip_order else i - 1
            K = reflect(j, inp.narrow(-1, j, 1), sigma.narrow(-1, j, 1), K, apply_left)
            K = reflect(i, v_i, t_i, K, not apply_left)
    input_grad = torch.stack(v_grads, -1)
    if k < input_.shape[-1]:
        shape = list(input_.shape)
        shape[-1] = input_.shape[-1] - k
        input_grad = torch.cat([input_grad, torch.zeros(shape, dtype=input_.dtype)], -1)
    return input_grad.tril(-1), torch.stack(tau_grads, -1)


def ormqr_backward(grad, result, self, tau, other, left, transpose, grad_output_mask):
    torch = _torch()
    self_grad = tau_grad = other_grad = None
    if grad is None:
        return self_grad, tau_grad, other_grad
    if grad_output_mask[2]:
        other_grad = torch.ormqr(self, tau, grad, left, not transpose)
    if grad_output_mask[0] or grad_output_mask[1]:
        if left ^ transpose:
            hpb_grad = grad if not transpose else grad.mH
            hpb_result = result if not transpose else result.mH
            self_grad, tau_grad = householder_product_backward(hpb_grad, hpb_result, self, tau)
        else:
            hpb_grad = result.mH if not transpose else result
            hpb_result = grad.mH if not transpose else grad
            self_grad, tau_grad = householder_product_backward(hpb_grad, hpb_result, self, tau,
                                                               flip_order=True)
    return self_grad, tau_grad, other_grad


def linalg_matrix_exp_differential(self, grad, adjoint):
    """The (adjoint) differential of exp at self: exp of the block matrix [[A, G], [0, A]],
    top-right block (Mathias, 1996)."""
    torch = _torch()
    A = self.transpose(-2, -1).conj() if adjoint else self
    n = A.shape[-1]
    meta = torch.cat([torch.cat([A, grad], -1), torch.cat([torch.zeros_like(A), A], -1)], -2)
    return torch.linalg.matrix_exp(meta).narrow(-2, 0, n).narrow(-1, n, n)
