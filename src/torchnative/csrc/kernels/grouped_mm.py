"""``_grouped_mm``: the grouped GEMM of mixture-of-experts layers (GroupedMMUtils.h, the CPU
fallback upstream registers as CompositeExplicitAutograd).

Four forms: 2-d x 3-d with offsets (token rows grouped by expert), 3-d x 2-d with offsets,
2-d x 2-d with offsets (the contraction dim grouped: each group's product is one output matrix)
and 3-d x 3-d (a plain batched product). ``offs`` holds int32 cumulative group ends. The output
is allocated with upstream's padded strides (rows aligned to 16 bytes). Rows (or columns) past
the last offset are never written by upstream (its output is uninitialised there); here they are
zero.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..core.device import CPU
from .support.common import arr
from .linalg import _batched, _gemm, _operand
from ..ops.kernel_registry import kernel

_B = D.BY_NAME
_ALLOWED = {_B["bfloat16"]: "BFloat16", _B["float32"]: "Float", _B["float16"]: "Half"}


def _check_strides(mat) -> None:
    """check_valid_strides_and_return_transposed: one of the last two dims has stride 1 and the
    other spans it, padded to 16 bytes (the data-pointer alignment check is the allocator's)."""
    size, stride = mat._size, mat._stride
    end = len(size) - 1
    align = 16 // mat._dtype.itemsize
    if stride[end - 1] == 1 and stride[end] >= max(1, size[end - 1]):
        if stride[end] % align:
            raise RuntimeError("strides should be multiple of 16 bytes")
    elif stride[end] == 1 and stride[end - 1] >= max(1, size[end]):
        if stride[end - 1] % align:
            raise RuntimeError("strides should be multiple of 16 bytes")
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(stride)} for strides and "
                           f"{list(size)} for sizes")


def _validate(a, b, offs, bias, out_dtype):
    for name, m in (("mat_a", a), ("mat_b", b)):
        if m._dtype not in _ALLOWED:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                               f"{m._dtype._cpp_name}")
    if a.dim() not in (2, 3):
        raise RuntimeError("mat_a has to be 2 or 3d")
    if b.dim() not in (2, 3):
        raise RuntimeError("mat_b has to be 2 or 3d")
    a2, b2 = a.dim() == 2, b.dim() == 2
    if (not a2 or not b2) and a._size[-1] != b._size[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    _check_strides(a)
    _check_strides(b)
    if (offs is not None) != (a2 or b2):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
        if offs._dtype is not _B["int32"]:
            raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    dt = out_dtype if out_dtype is not None else a._dtype
    if dt is not a._dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    return dt


def _output(a, b, offs, dt):
    a2, b2 = a.dim() == 2, b.dim() == 2
    if a2 and b2:
        size = (offs._size[0], a._size[0], b._size[1])
    elif a2:
        if offs._size[0] != b._size[0]:
            raise RuntimeError("matrix batch sizes have to match")
        size = (a._size[0], b._size[-1])
    elif b2:
        if offs._size[0] != a._size[0]:
            raise RuntimeError("matrix batch sizes have to match")
        size = (a._size[1], b._size[1])
    else:
        if a._size[0] != b._size[0]:
            raise RuntimeError("batched dimension has to match")
        size = (a._size[0], a._size[1], b._size[-1])
    align = 16 // dt.itemsize
    padded = (size[-1] + align - 1) // align * align
    stride = (padded, 1) if a2 != b2 else (size[1] * padded, padded, 1)
    out = empty(size, dt, CPU, stride=stride)
    arr(out)[...] = 0
    return out


def _store(out_view: np.ndarray, prod: np.ndarray) -> None:
    out_view[...] = prod.astype(out_view.dtype, copy=False)


@kernel("_grouped_mm")
def _grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None):
    dt = _validate(self, mat2, offs, bias, out_dtype)
    out = _output(self, mat2, offs, dt)
    if out.numel() == 0:
        return out
    a, b, o = _operand(self, dt), _operand(mat2, dt), arr(out)
    if offs is None:
        _store(o, _batched(a, b))
        return out
    start = 0
    for group, end in enumerate(int(e) for e in arr(offs)):
        if self.dim() == 2 and mat2.dim() == 3:
            if end > start:
                _store(o[start:end], _gemm(a[start:end], b[group]))
        elif self.dim() == 3:
            if end > start:
                _store(o[:, start:end], _gemm(a[group], b[:, start:end]))
        else:
            _store(o[group], _gemm(a[:, start:end], b[start:end]) if end > start else
                   np.zeros(o.shape[1:], o.dtype))
        start = end
    return out
