"""FunctionsManual.cpp helpers for matrix products and linear algebra (the decompositions' and
solvers' backward formulas live in linalg_decomp.py and linalg_solve.py; this module is the one
the formula namespace reads, so it re-exports them)."""

from __future__ import annotations

from ...dispatch.call import call
from ..cpp_shims import _torch, m_conj, not_implemented
from .linalg_decomp import (cholesky_backward, cholesky_jvp,  # noqa: F401
                            householder_product_backward, linalg_eig_backward, linalg_lu_backward, linalg_matrix_exp_differential,
                            linalg_qr_backward, lu_factor_ex_backward, lu_unpack_backward,
                            ormqr_backward, svd_backward)
from .linalg_solve import (cholesky_inverse_backward, cholesky_solve_backward,  # noqa: F401
                           linalg_det_backward, linalg_det_jvp, linalg_lstsq_backward,
                           linalg_lu_solve_LU,
                           linalg_solve_backward, linalg_solve_triangular_backward, pinv_backward,
                           slogdet_backward, slogdet_jvp, triangular_solve_backward)
from .pointwise import maybe_multiply


def strides_or_error(t, name):
    return tuple(t._stride)


# at::t / at::mm as the C++ formulas call them: through the door, without the Python
# bindings' argument parsing (or __torch_function__, which upstream's formulas never reach)
def _t(x):
    return call("t", x)


def _mm(a, b):
    return call("mm", a, b)


def mm_mat1_backward(grad, mat2, sizes, strides, layout, alpha):
    if strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(_t(_mm(m_conj(mat2), _t(grad))), m_conj(alpha))
    return maybe_multiply(_mm(grad, m_conj(_t(mat2))), m_conj(alpha))


def mm_mat2_backward(grad, mat1, sizes, strides, layout, alpha):
    if strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(_t(_mm(_t(grad), m_conj(mat1))), m_conj(alpha))
    return maybe_multiply(_mm(m_conj(_t(mat1)), grad), m_conj(alpha))


def logdet_backward(*a):
    not_implemented("logdet")


def sparse_sparse_matmul_backward(*a):
    not_implemented("sparse matmul")


def renorm_backward(grad, self, p, dim, maxnorm):
    """Rows (slices along ``dim``) whose p-norm exceeds maxnorm were scaled by maxnorm / (norm +
    1e-7): the gradient of that scaling. The norm and its cotangent are taken in the accumulation
    type (double for float on CPU) and the result cast back, as upstream does."""
    from .reduction import norm_backward

    torch = _torch()
    dim = dim % self.dim()
    reduce_dims = [d for d in range(self.dim()) if d != dim]
    acc = torch.float64 if self.dtype in (torch.float32, torch.float64) else \
        torch.complex128 if self.dtype.is_complex else torch.float32
    norm = torch.linalg.vector_norm(self, p, reduce_dims, keepdim=True, dtype=acc)
    real_acc = norm.dtype
    grad_output = self.conj() * grad
    if real_acc != acc:
        grad_output = torch.real(grad_output)
    grad_output = grad_output.sum(reduce_dims, keepdim=True, dtype=real_acc)
    nb = norm_backward(grad_output, self, p, norm, reduce_dims, True)
    invnorm = (norm + 1e-7).reciprocal()
    grad_norm = maxnorm * invnorm * (grad - invnorm * nb)
    return torch.where(norm > maxnorm, grad_norm.to(grad.dtype), grad)
