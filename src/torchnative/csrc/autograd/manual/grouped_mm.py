"""FunctionsManual.cpp's backward formulas of ``_grouped_mm`` (mixture-of-experts GEMMs): each
gradient is itself a grouped GEMM over the same offsets, taken column-major when the input was."""

from __future__ import annotations

from ..cpp_shims import _torch
from .pointwise import maybe_multiply


def _column_major(sizes, strides) -> bool:
    n = len(sizes)
    return strides[n - 2] == 1 and strides[n - 1] == sizes[n - 2]


def _check_strided(*layouts) -> None:
    if any(layout != _torch().strided for layout in layouts):
        raise RuntimeError("only strided layout supported for grouped mm")


def _grouped_mm_mat1_backward(grad, mat2, sizes, strides, layout, offs, alpha):
    _check_strided(grad.layout, mat2.layout, layout)
    if _column_major(sizes, strides):
        grad_in = _torch()._grouped_mm(mat2, grad.transpose(-2, -1), offs).transpose(-2, -1)
    else:
        grad_in = _torch()._grouped_mm(grad, mat2.transpose(-2, -1), offs)
    return maybe_multiply(grad_in, alpha)


def _grouped_mm_mat2_backward(grad, mat1, sizes, strides, layout, offs, alpha):
    _check_strided(grad.layout, mat1.layout, layout)
    if _column_major(sizes, strides):
        grad_in = _torch()._grouped_mm(grad.transpose(-2, -1), mat1, offs).transpose(-2, -1)
    else:
        grad_in = _torch()._grouped_mm(mat1.transpose(-2, -1), grad, offs)
    return maybe_multiply(grad_in, alpha)
