"""FunctionsManual.cpp helpers for matrix products and linear algebra (the decompositions' and
solvers' backward formulas live in linalg_decomp.py and linalg_solve.py; this module is the one
the formula namespace reads, so it re-exports them)."""

from __future__ import annotations

from ...dispatch.call import call
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


def renorm_backward(*a):
    not_implemented("renorm")
