"""complex32's own operator: ``chalf`` (the rest of complex32 reaches the shared kernels, which
compute it in complex64; see dispatch/bit_stored_ops.py)."""

from __future__ import annotations

from ..core import dtypes as D
from ..dispatch.call import convert_to
from ..ops.kernel_registry import kernel

_C32 = D.BY_NAME["complex32"]


@kernel("chalf")
def chalf(self, memory_format=None):
    """``self.to(torch.complex32, memory_format=...)``: self when it already is one."""
    return convert_to(self, None, _C32, False, False, memory_format)
