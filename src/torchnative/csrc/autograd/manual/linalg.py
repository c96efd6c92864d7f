"""FunctionsManual.cpp helpers for matrix products and linear algebra."""

from __future__ import annotations

from ..cpp_shims import m_conj, not_implemented
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
