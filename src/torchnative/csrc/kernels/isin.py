"""isin(Tensor, Tensor): membership by equality.

Upstream's CPU kernel compares each element with the test elements (its default loop, taken
when there are few of them) or sorts them first; both answer ``element == test`` for some test
element, so NaN is never found and -0.0 finds 0.0. The common case of a generate loop (a
C-contiguous tensor of token ids against one or a few end-of-sequence ids, one dtype) is
computed here in one or two numpy calls; everything else runs upstream's decomposition, as
before this kernel existed (promotion, empty inputs, strided inputs, the sorting branch).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import from_result
from ..core.tensor import TensorBase
from ..ops.kernel_registry import kernel

_BOOL = D.BY_NAME["bool"]
# the dtypes whose numpy equality is the C++ one (no bit-stored or reduced-float storage)
_PLAIN = frozenset(D.BY_NAME[n] for n in ("int64", "int32", "int16", "int8", "uint8",
                                         "float32", "float64"))
_DECOMPOSED: list = []


@kernel("isin.Tensor_Tensor")
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    x = elements._np
    if type(elements) is type(test_elements) and isinstance(elements, TensorBase) and \
            x is not None and test_elements._np is not None and \
            elements._dtype is test_elements._dtype and elements._dtype in _PLAIN and \
            not (elements._wrapped or test_elements._wrapped) and x.ndim and x.size and \
            x.flags.c_contiguous and test_elements._np.size and \
            test_elements._np.size < 10.0 * pow(x.size, 0.145):
        t = test_elements._np.reshape(-1)
        if t.size == 1:
            r = np.equal(x, t[0])
        else:
            r = np.equal(x[..., None], t).any(-1)
        if invert:
            np.logical_not(r, out=r)
        return from_result(r, _BOOL)
    return _decomposition()(elements, test_elements, assume_unique=assume_unique, invert=invert)


def _decomposition():
    """The door's decomposition of isin.Tensor_Tensor (what served every call before)."""
    if not _DECOMPOSED:
        from ..dispatch.boxing import normalized
        from ..dispatch.call import op
        from ..dispatch.door import _decomposition as decomposition, _guarded_decomposition

        handle = op("isin.Tensor_Tensor")
        _DECOMPOSED.append(_guarded_decomposition(handle, normalized(handle,
                                                                     decomposition(handle))))
    return _DECOMPOSED[0]
