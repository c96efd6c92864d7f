"""``aten::result_type``: the dtype an operator over these operands computes in.

CompositeImplicitAutograd upstream (no operator runs, so no mode or autograd sees it). The
rules are TensorIterator's: dimensioned tensors outrank zero-dim tensors, which outrank Python
numbers, and a lower group can raise only the category (bool < integral < floating < complex),
a Python float or complex counting as the default dtype.
"""

from __future__ import annotations

from ..ops.kernel_registry import kernel
from .support.common import result_type as _result_type


@kernel("result_type.Tensor", "result_type.Scalar", "result_type.Scalar_Tensor",
        "result_type.Scalar_Scalar", composite=True)
def result_type(a, b):
    return _result_type(a, b)
