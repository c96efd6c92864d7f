"""as_strided_scatter's self gradient as FunctionsManual.cpp computes it (Note [as_strided_scatter
backward support]: autograd admits only a contiguous self). Upstream places the gradient of the
scattered slice into zeros of self's geometry — the positions src overwrote, not the ones self
kept — so its own gradcheck of this formula fails; we reproduce what it returns."""

from __future__ import annotations


def as_strided_scatter_backward(grad, input_geometry, src_geometry, sizes, strides,
                                storage_offset):
    grad_ = grad.contiguous()
    grad_slice = grad_.as_strided(list(sizes), list(strides), storage_offset)
    buffer = grad_.new_zeros(list(input_geometry.sizes))
    result = buffer.as_strided(list(input_geometry.sizes), list(input_geometry.strides))
    result_slice = buffer.as_strided(list(sizes), list(strides), storage_offset)
    result_slice.copy_(grad_slice)
    return result


as_strided_scatter_backward_symint = as_strided_scatter_backward
