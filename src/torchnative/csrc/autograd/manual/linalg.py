"""FunctionsManual.cpp helpers for matrix products and linear algebra (the decompositions' and
solvers' backward formulas live in linalg_decomp.py and linalg_solve.py; this module is the one
the formula namespace reads, so it re-exports them)."""

from __future__ import annotations

from ..cpp_shims import m_conj, not_implemented
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


def mm_mat1_backward(grad, mat2, sizes, strides, layout, alpha):
    if strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(m_conj(mat2).mm(grad.t()).t(), m_conj(alpha))
    return maybe_multiply(grad.mm(m_conj(mat2.t())), m_conj(alpha))


def mm_mat2_backward(grad, mat1, sizes, strides, layout, alpha):
    if strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(grad.t().mm(m_conj(mat1)).t(), m_conj(alpha))
    return maybe_multiply(m_conj(mat1.t()).mm(grad), m_conj(alpha))


def logdet_backward(*a):
    not_implemented("logdet")


def sparse_sparse_matmul_backward(*a):
    not_implemented("sparse matmul")


def renorm_backward(*a):
    not_implemented("renorm")
