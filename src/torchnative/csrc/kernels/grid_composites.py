"""meshgrid (TensorShape.cpp) and prelu (Activation.cpp) as upstream's C++ writes them, with
the CPU kernels _prelu_kernel and _prelu_kernel_backward that prelu reaches.

Without these, the door ran upstream's Python references for these CompositeImplicitAutograd
operators, which go down to ``prims::broadcast_in_dim`` (no derivative), so their gradients
(and those of cartesian_prod and combinations, which call meshgrid) were refused. Here they are
views and expands of the inputs (meshgrid) and a reshape of the weight (prelu), each called
through the door, so autograd records the aten operators upstream records.
"""

from __future__ import annotations

import numpy as np

from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from ..platform.torch_warn import torch_warn

def _type_name(t) -> str:
    name = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    return name.get(str(t._dtype).replace("torch.", ""), str(t._dtype))


def _meshgrid(tensors, indexing):
    tensors = list(tensors)
    n = len(tensors)
    if n == 0:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for i in range(n - 1):
        if tensors[i]._dtype != tensors[i + 1]._dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if tensors[i].device != tensors[i + 1].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = False
    if indexing == "xy":
        swap = n >= 2
        if swap:
            tensors[0], tensors[1] = tensors[1], tensors[0]
    elif indexing != "ij":
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    shape = []
    for t in tensors:
        if t.dim() > 1:
            # upstream prints the tensor's values too (C++ operator<<); the type and sizes here
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: [ torch.{_type_name(t)}Tensor"
                               f"{{{','.join(str(s) for s in t._size)}}} ]")
        shape.append(t.numel())
    grids = []
    view_shape = [1] * n
    for i, t in enumerate(tensors):
        view_shape[i] = -1
        grids.append(call("expand", call("view", t, list(view_shape)), list(shape)))
        view_shape[i] = 1
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


_warned_indexing = False


@kernel("meshgrid", composite=True)
def meshgrid(tensors):
    global _warned_indexing
    if not _warned_indexing:  # TORCH_WARN_ONCE: once per process
        _warned_indexing = True
        torch_warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                   "indexing argument.")
    return _meshgrid(tensors, "ij")


@kernel("meshgrid.indexing", composite=True)
def meshgrid_indexing(tensors, *, indexing):
    return _meshgrid(tensors, indexing)


@kernel("prelu", composite=True)
def prelu(self, weight):
    nd = self.dim()
    if self._dtype != weight._dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_type_name(self)} and "
                           f"{_type_name(weight)}")
    if weight.numel() != 1:
        if nd == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self._size[1] if nd > 1 else 1
        if channels != weight.numel():
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.dim() > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    w = weight
    if nd != weight.dim():
        dims = [1] * nd
        if nd > 1:
            dims[1] = weight.numel()
        w = call("reshape", weight, dims)
    return call("_prelu_kernel", self, w)


@kernel("_prelu_kernel")
def _prelu_kernel(self, weight):
    """self > 0 ? self : weight * self, broadcast (upstream's TensorIterator kernel)."""
    return call("where.self", call("gt.Scalar", self, 0), self, call("mul.Tensor", weight, self))


@kernel("_prelu_kernel_backward")
def _prelu_kernel_backward(grad_output, self, weight):
    """(self > 0 ? grad : weight * grad, self > 0 ? 0 : self * grad), in the broadcast shape of
    the three (autograd sums the weight's gradient back to the weight's shape)."""
    pos = call("gt.Scalar", self, 0)
    zero = call("zeros_like", grad_output, dtype=None, layout=None, device=None,
                pin_memory=None, memory_format=None)
    gi = call("where.self", pos, grad_output, call("mul.Tensor", weight, grad_output))
    gw = call("where.self", pos, zero, call("mul.Tensor", self, grad_output))
    shape = list(gi.shape)
    if list(gw.shape) != shape:
        gw = call("contiguous", call("expand", gw, shape))
    return gi, gw


# ---- hardsigmoid_backward (Activation.cpp's CPU kernel) -----------------------------------------

_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))  # upstream's ``scalar_t one_sixth(1.0f / 6.0f)``


@kernel("hardsigmoid_backward")
def hardsigmoid_backward(grad_output, self):
    """grad * one_sixth inside (-3, 3), else 0. upstream computes the constant in float
    (``1.0f / 6.0f``) also for double tensors, so float64 gradients carry float32's sixth."""
    inside = call("logical_and", call("gt.Scalar", self, -3.0), call("lt.Scalar", self, 3.0))
    scaled = call("mul.Scalar", grad_output, _ONE_SIXTH)
    zero = call("zeros_like", scaled, dtype=None, layout=None, device=None, pin_memory=None,
                memory_format=None)
    return call("where.self", inside, scaled, zero)
