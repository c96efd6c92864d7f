"""log_sigmoid.out (Activation.cpp): log_sigmoid_forward_out into ``out`` with a throwaway
buffer. The input's dtype is dispatched first (an integer input names log_sigmoid_cpu); ``out``
then takes the input's size by resize_as_ (no deprecation warning, its strides kept when the
size already matches) and must hold the input's dtype, as the kernel's typed pointer demands."""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import kernel


@kernel("log_sigmoid.out")
def log_sigmoid_out(self, *, out):
    result = call("log_sigmoid_forward", self)[0]
    if tuple(out._size) != tuple(self._size):
        call("resize_", out, list(self._size))
    if out._dtype is not self._dtype:
        raise RuntimeError(f"expected scalar type {self._dtype._cpp_name} but found "
                           f"{out._dtype._cpp_name}")
    call("copy_", out, result)
    return out
