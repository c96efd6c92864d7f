"""FunctionsManual.cpp helpers for determinants, solvers, inverses and least squares.

Written from upstream's formulas (torch/csrc/autograd/FunctionsManual.cpp): the same products in
the same order, and the same switch between the saved LU (first-order backward) and a fresh,
differentiable solve (when grad mode is on, so double backward sees A).
"""

from __future__ import annotations

from ...core.grad_mode import TLS as _GRAD
from ...kernels.linalg_common import is_vector_rhs, uses_A_T
from ..cpp_shims import _torch
from .reduction import prod_safe_zeros_backward


def _eps(t) -> float:
    """at::native::_get_epsilon of t's real dtype."""
    torch = _torch()
    real = t.real.dtype if t.is_complex() else t.dtype
    return torch.finfo(real).eps


def _diag_rhs(d_diag, pivots):
    """diag_embed(d.unsqueeze(-1).expand_as(pivots)).mT(): the F-transposed right-hand side."""
    return _torch().diag_embed(d_diag.unsqueeze(-1).expand_as(pivots)).mT


def _perturbed_lu(LU):
    """LU with exact zeros on its diagonal replaced by eps: a nearby invertible matrix."""
    torch = _torch()
    diag = LU.diagonal(0, -2, -1)
    return LU + torch.diag_embed(torch.where(diag == 0., _eps(LU), 0.))


def _masked_fmap(mask, f1, f2, t, *ts):
    """f1 on the batch entries where mask holds, f2 elsewhere (upstream's masked_fmap)."""
    torch = _torch()
    n = int(mask.sum()) if mask.dim() else (1 if bool(mask) else 0)
    total = mask.numel()
    if n == total:
        return f1(t, *ts)
    if n == 0:
        return f2(t, *ts)
    not_mask = mask.logical_not()
    ret = torch.empty_like(t)
    ret = ret.index_put((mask,), f1(t[mask], *(x[mask] for x in ts)))
    return ret.index_put((not_mask,), f2(t[not_mask], *(x[not_mask] for x in ts)))


def linalg_det_backward(grad, det, A, LU, pivots):
    torch = _torch()
    if grad is None:
        return None
    if A.numel() == 0:
        return torch.zeros_like(A)  # upstream's gradient of an empty matrix is empty, not None
    d = _diag_rhs(grad * det.conj(), pivots)
    if not _GRAD.grad_enabled:
        return torch.linalg.lu_solve(_perturbed_lu(LU), pivots, d, left=True,
                                     adjoint=not uses_A_T(A))

    def non_singular(A, d, grad):
        return torch.linalg.solve(A.mH, d)

    def singular(A, d, grad):
        # the adjugate of a singular matrix through its SVD
        U, S, Vh = torch.linalg.svd(A)
        alpha = (torch.linalg.det(U) * torch.linalg.det(Vh)).conj() * grad
        D = prod_safe_zeros_backward(alpha.unsqueeze(-1), S, S.dim() - 1)
        return (U * D.unsqueeze(-2)).matmul(Vh)

    return _masked_fmap(det.abs() < 100. * _eps(LU), singular, non_singular, A, d, grad)


def linalg_det_jvp(dA, det, LU, pivots, use_A_T):
    """d det = tr(A^{-1} dA) det, through the saved LU (zeros on its diagonal nudged by eps, so
    a singular A gets the limit of nearby invertible ones)."""
    torch = _torch()
    AinvE = torch.linalg.lu_solve(_perturbed_lu(LU), pivots, dA, left=True, adjoint=use_A_T)
    return AinvE.diagonal(0, -2, -1).sum(-1) * det


def slogdet_jvp(LU, pivots, dA, sign, use_A_T):
    """d logabsdet = Re tr(A^{-1} dA); the sign moves only for complex A (i Im tr(...) sign).
    A real sign's tangent is zero (upstream's efficient zero tensor, zeros here)."""
    torch = _torch()
    tr = torch.linalg.lu_solve(LU, pivots, dA, left=True, adjoint=use_A_T)
    tr = tr.diagonal(0, -2, -1).sum(-1)
    if LU.is_complex():
        return tr.imag * (1j * sign), tr.real
    return torch.zeros(sign.shape, dtype=sign.dtype), tr


def slogdet_backward(grad_sign, grad_logabsdet, A, signdet, LU, pivots):
    torch = _torch()
    if grad_sign is None and grad_logabsdet is None:
        return None
    is_complex = A.is_complex()
    if not is_complex and grad_logabsdet is None:
        return None  # the sign of a real determinant is locally constant
    g = grad_logabsdet
    if is_complex:
        if grad_sign is not None:
            term = 1j * torch.imag(grad_sign.conj() * signdet)
            g = g - term if g is not None else -term
        else:
            g = g.to(A.dtype)
    d = _diag_rhs(g, pivots)
    if not _GRAD.grad_enabled:
        return torch.linalg.lu_solve(LU, pivots, d, left=True, adjoint=not uses_A_T(A))
    return torch.linalg.solve(A.mH, d)


def linalg_solve_backward(gX, X, A, LU, pivots, left, B_requires_grad):
    torch = _torch()
    A_requires_grad = A.requires_grad
    if gX is None or (not A_requires_grad and not B_requires_grad):
        return None, None
    vector = is_vector_rhs(LU, X)
    to_matrix = (lambda t: t.unsqueeze(-1)) if vector else (lambda t: t)
    to_vector = (lambda t: t.squeeze(-1)) if vector else (lambda t: t)
    if _GRAD.grad_enabled:
        gB_ = torch.linalg.solve(A.mH, to_matrix(gX), left=left)
    else:
        gB_ = torch.linalg.lu_solve(LU, pivots, to_matrix(gX), left=left, adjoint=True)
    gA_ = None
    if A_requires_grad:
        X_ = to_matrix(X)
        gA_ = -gB_.matmul(X_.mH) if left else -X_.mH.matmul(gB_)
    return gA_, (to_vector(gB_) if B_requires_grad else None)


def linalg_lu_solve_LU(gX, LU, pivots, X, left, adjoint):
    torch = _torch()
    solve_tri = torch.linalg.solve_triangular
    P, L, U = torch.lu_unpack(LU, pivots, unpack_data=True, unpack_pivots=left == adjoint)
    if left != adjoint:
        gR = solve_tri(U.mH, -(gX if left else gX.mH).matmul(X.mH if left else X), upper=False)
        gL = solve_tri(L.mH, gR.matmul(U.mH), upper=True, left=True,
                       unitriangular=True).tril(-1)
        return gL + gR.triu()
    gR = -P.mT.matmul(X if left else X.mH).matmul(gX.mH if left else gX).matmul(P)
    gR = solve_tri(L.mH, gR, upper=True, left=False, unitriangular=True)
    gU = solve_tri(U.mH, L.mH.matmul(gR), upper=False, left=False).triu()
    return gR.tril(-1) + gU


def triangular_solve_backward(grad_x, grad_m, b, a, x, upper, transpose, unitriangular,
                              output_mask):
    torch = _torch()
    grad_b = grad_a = None
    if grad_x is not None or grad_m is not None:
        if grad_x is not None:
            grad_b = torch.triangular_solve(grad_x, a.conj(), upper, not transpose,
                                            unitriangular)[0]
            if output_mask[1]:
                grad_a = -x.conj().matmul(grad_b.mT) if transpose else -grad_b.matmul(x.mH)
                grad_a = grad_a.triu(int(unitriangular)) if upper else \
                    grad_a.tril(-int(unitriangular))
        if grad_a is None:
            grad_a = torch.zeros(1, dtype=a.dtype).expand_as(a)
        if grad_b is None:
            grad_b = torch.zeros(1, dtype=b.dtype).expand_as(b)
        if output_mask[1] and grad_m is not None:
            grad_a = grad_a.add(grad_m)
    return grad_b, grad_a


def linalg_solve_triangular_backward(grad, A, X, upper, left, unitriangular, output_mask):
    torch = _torch()
    A_requires_grad, B_requires_grad = output_mask[0], output_mask[1]
    if grad is None or (not A_requires_grad and not B_requires_grad):
        return None, None
    G_B = torch.linalg.solve_triangular(A.mH, grad, upper=not upper, left=left,
                                        unitriangular=unitriangular)
    if A_requires_grad:
        X_H = X.mH
        G_A = -torch.matmul(G_B, X_H) if left else -torch.matmul(X_H, G_B)
        G_A = G_A.triu(int(unitriangular)) if upper else G_A.tril(-int(unitriangular))
        return G_A, (G_B if B_requires_grad else None)
    return None, G_B


def cholesky_solve_backward(grad_x, self, input2, result, upper, output_mask):
    torch = _torch()
    grad_self = grad_input2 = None
    if grad_x is not None:
        grad_self = grad_x.cholesky_solve(input2, upper=upper)
        if output_mask[1]:
            common = torch.matmul(grad_self, result.mH)
            common = common + common.mH
            grad_input2 = -torch.matmul(input2, common) if upper else \
                -torch.matmul(common, input2)
    return grad_self, grad_input2


def cholesky_inverse_backward(grad, L, upper, inverse):
    torch = _torch()
    if grad is None:
        return None
    common = grad + grad.mH
    common = torch.matmul(inverse, torch.matmul(common, inverse))
    return -torch.matmul(L, common) if upper else -torch.matmul(common, L)


def pinv_backward(grad, pinvA, A):
    m, n = A.shape[-2], A.shape[-1]
    pinvAh = pinvA.mH
    gradh = grad.mH
    if m <= n:
        K = gradh.matmul(pinvA)
        KpinvAh = K.matmul(pinvAh)
        return (-(pinvA.matmul(K)).mH + KpinvAh - (A.matmul(pinvA)).matmul(KpinvAh)
                + (pinvAh.matmul(pinvA)).matmul(gradh - K.matmul(A)))
    K = pinvA.matmul(gradh)
    pinvAhK = pinvAh.matmul(K)
    return (-(K.matmul(pinvA)).mH + (gradh - A.matmul(K)).matmul(pinvA).matmul(pinvAh)
            + pinvAhK - pinvAhK.matmul(pinvA).matmul(A))


def linalg_lstsq_backward(gX_, gL_, A, B_, X_, grad_input_mask):
    torch = _torch()
    A_requires_grad, B_requires_grad = grad_input_mask[0], grad_input_mask[1]
    gL_numel = gL_.numel() if gL_ is not None else 0
    if (gX_ is None and not gL_numel) or (not A_requires_grad and not B_requires_grad):
        return None, None
    vector = is_vector_rhs(A, B_)
    to_matrix = (lambda t: t.unsqueeze(-1)) if vector else (lambda t: t)
    to_vector = (lambda t: t.squeeze(-1)) if vector else (lambda t: t)
    B = to_matrix(B_)
    A_grad_X = B_grad_X = A_grad = B_grad = None
    if gX_ is not None:
        gX = to_matrix(gX_)
        pinvA = torch.linalg.pinv(A)
        if A_requires_grad:
            A_grad_X = pinv_backward(gX.matmul(B.mH), pinvA, A)
        if B_requires_grad:
            # pinv rather than lstsq(A^H, gX): gelsy is not deterministic
            B_grad_X = to_vector(pinvA.mH.matmul(gX))
    if gL_numel:
        X = to_matrix(X_)
        r = A.matmul(X) - B
        gL = gL_.unsqueeze(-2)
        if A_requires_grad:
            A_grad_L = 2 * (gL * r).matmul(X.mH)
            A_grad = A_grad_X + A_grad_L if A_grad_X is not None else A_grad_L
        if B_requires_grad:
            B_grad_L = to_vector(-2 * gL * r)
            B_grad = B_grad_X + B_grad_L if B_grad_X is not None else B_grad_L
    else:
        A_grad, B_grad = A_grad_X, B_grad_X
    return A_grad, B_grad
