"""linalg_cross's CPU kernel (CrossKernel.cpp) for the floating dtypes: each component is
``a[i+1] * b[i+2] - a[i+2] * b[i+1]``; float and double as upstream's FMA build contracts it,
the first product fused into the subtraction of the rounded second (measured bit for bit),
float16 and bfloat16 rounding each product and the difference (c10's operators). Integer and
complex inputs keep upstream's decomposition (integer products have no rounding to reproduce)."""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.tensor import wrap_dim
from ..ops.kernel_registry import kernel
from ..random.fpmath import fma32, fma64
from .support.common import arr, wrap

_FMA = {D.BY_NAME["float32"]: fma32, D.BY_NAME["float64"]: fma64}
_FLOATS = frozenset(D.BY_NAME[n] for n in ("float32", "float64", "float16", "bfloat16"))
_DECOMPOSED: list = []


def _decomposition(*args, **kwargs):
    if not _DECOMPOSED:
        from ..dispatch.door import _decomposition as find, _guarded_decomposition
        from ..ops.dispatcher import REGISTRY

        op = REGISTRY.find("aten::linalg_cross", "")
        _DECOMPOSED.append(_guarded_decomposition(op, find(op)))
    return _DECOMPOSED[0](*args, **kwargs)


def _check(self, other, dim):
    """linalg_cross's meta checks in upstream's order; the dtype check is the kernel's typed
    pointer on ``other``."""
    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, self.dim())
    if self._size[d] != 3 or other._size[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self._size[d]} and {other._size[d]}")
    shape = []
    for i, (m, n) in enumerate(zip(self._size, other._size)):
        if m != n and m != 1 and n != 1:
            raise RuntimeError(f"The size of tensor a ({m}) must match the size of tensor b ({n}) "
                               f"at non-singleton dimension {i}")
        shape.append(n if m == 1 else m)
    if self._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {self._dtype._cpp_name} but found "
                           f"{other._dtype._cpp_name}")
    return d, tuple(shape)


@kernel("linalg_cross")
def linalg_cross(self, other, *, dim=-1):
    if self.device != other.device or self.dim() == 0:
        return _decomposition(self, other, dim=dim)
    d, shape = _check(self, other, dim)
    if self._dtype not in _FLOATS:
        return _decomposition(self, other, dim=dim)
    a = np.moveaxis(np.broadcast_to(arr(self), shape), d, -1)
    b = np.moveaxis(np.broadcast_to(arr(other), shape), d, -1)
    nxt, last = [1, 2, 0], [2, 0, 1]
    x, y, z, w = a[..., nxt], b[..., last], a[..., last], b[..., nxt]
    fma = _FMA.get(self._dtype)
    with np.errstate(all="ignore"):
        if fma is None:  # c10::Half/BFloat16 round each product and the difference
            r = x * y - z * w
        else:
            r = np.asarray(fma(x, y, -(z * w))).reshape(x.shape).astype(a.dtype)
    return wrap(np.ascontiguousarray(np.moveaxis(r, -1, d)), self._dtype)
