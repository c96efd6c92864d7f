"""A tensor's value as a Python number: ``item()``, ``bool()``, ``float()``, ``int()``,
``complex()``, ``operator.index()`` (python_variable_methods.cpp).

Upstream reads the value through ``item()``, which dispatches ``aten::_local_scalar_dense``: a
dispatch mode or a __torch_dispatch__ subclass (FakeTensor) sees that operator, never the
method; a __torch_function__ override or mode sees the method (these are installed with the
binding layer's torch-function wrapper, python/manual_bindings.py). The checks run in upstream's
order: each conversion's own element-count check, then ``item``'s.
"""

from __future__ import annotations

from ..core.tensor import no_values_error, numel_of
from ..dispatch.call import call
from ..platform.torch_warn import torch_warn_once

# float()/complex() of a tensor that requires grad warns once
_SCALAR_OF_GRAD = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                   "behavior.\nConsider using tensor.detach() first.")
_ONE_ELEMENT = "only one element tensors can be converted to Python scalars"
_NOT_AN_INDEX = "only integer tensors of a single element can be converted to an index"


def _refuse_without_values(self, what: str) -> None:
    """A tensor that holds no values here (a functorch BatchedTensor) refuses with vmap's own
    message for ``what``."""
    if self._np is None and no_values_error[0] is not None:
        no_values_error[0](self, what)


def _dispatched(self):
    """at::item: the element-count check, then ``aten::_local_scalar_dense`` through the door."""
    n = numel_of(self)
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    return call("_local_scalar_dense", self)


def item(self):
    _refuse_without_values(self, "item")
    return _dispatched(self)


def _to_real(v, cpp: str):
    """Scalar::to<double|int64_t>() of a complex value: its real part, unless the imaginary part
    is nonzero (c10's checked conversion calls that an overflow)."""
    if type(v) is complex:
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {cpp} without overflow")
        return v.real
    return v


def _dispatch_to(self):
    """python_arg_parsing's dispatch_to<T>: one element, then item() (whose own count check
    that one already passed)."""
    if numel_of(self) != 1:
        raise ValueError(_ONE_ELEMENT)
    return call("_local_scalar_dense", self)


def __bool__(self) -> bool:
    _refuse_without_values(self, "bool")
    n = numel_of(self)
    if n != 1:  # at::is_nonzero's checks, then its item()
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                           if n > 1 else "Boolean value of Tensor with no values is ambiguous")
    return bool(call("_local_scalar_dense", self))


def __float__(self) -> float:
    if self.requires_grad:
        torch_warn_once(_SCALAR_OF_GRAD)
    return float(_to_real(_dispatch_to(self), "double"))


def __int__(self) -> int:
    # a floating tensor converts through double (a Python int does not overflow); the others
    # through int64_t
    if self._dtype.is_floating_point:
        return int(_dispatch_to(self))  # (a Python float)
    v = _to_real(_dispatch_to(self), "int64_t")
    return int(v)


def __complex__(self) -> complex:
    if self.requires_grad:
        torch_warn_once(_SCALAR_OF_GRAD)
    return complex(_dispatch_to(self))


def __index__(self) -> int:
    dt = self._dtype
    if dt.is_floating_point or dt.is_complex or numel_of(self) != 1:
        raise TypeError(_NOT_AN_INDEX)
    return int(_dispatched(self))


TENSOR_METHODS = {"item": item, "__bool__": __bool__, "__nonzero__": __bool__,
                  "__float__": __float__, "__int__": __int__, "__long__": __int__,
                  "__complex__": __complex__, "__index__": __index__}
