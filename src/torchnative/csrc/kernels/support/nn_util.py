"""What the matmul and neural-network kernels share: upstream's names for dtypes in messages,
dispatch-type refusals and layout queries."""

from __future__ import annotations

from ...platform.cpp_names import typemeta as _typemeta
from ...core import dtypes as D
from ...core.layouts import is_channels_last_strides
from ...core.tensor import TensorBase
from ...dispatch.call import call



def typemeta(dt: D.dtype) -> str:
    return _typemeta(dt._name, dt._cpp_name)


def scalar_name(dt: D.dtype) -> str:
    """c10's ScalarType name ('Float', 'Long', 'ComplexFloat', ...)."""
    return dt._cpp_name


def not_implemented(kernel_name: str, dt: D.dtype) -> NotImplementedError:
    """What AT_DISPATCH raises for a dtype outside the kernel's list."""
    return NotImplementedError(f"\"{kernel_name}\" not implemented for '{dt._cpp_name}'")


_F32, _F64 = D.BY_NAME["float32"], D.BY_NAME["float64"]
_BOOL = D.BY_NAME["bool"]

def opmath_dtype(dt: D.dtype) -> D.dtype:
    """at::opmath_type: float for float16/bfloat16/float8, else the dtype itself."""
    if dt in D.REDUCED_FLOATING or dt in D.FLOAT8:
        return _F32
    return dt


# ---- calling operators through the door -------------------------------------------------------

def subclass_like(*tensors) -> bool:
    """at::isTensorSubclassLike: a dispatch mode is active or a tensor has the Python key."""
    from ...dispatch import python_dispatch as pd

    if pd.TLS.disabled:
        return False
    if pd.TLS.stack or pd.TLS.infra:
        return True
    return any(isinstance(t, TensorBase) and pd._overrides(t) for t in tensors)


# Installed by the forward-AD layer (autograd/forward/levels.py) when it is imported: does a
# tensor carry a tangent at a visible level? Kernels sit below autograd and cannot ask it.
FORWARD_GRAD = [lambda t: False]


def may_require_fw_or_bw_grad(t) -> bool:
    """at::_may_require_fw_or_bw_grad: whether a backward or forward AD may need more of a
    composite's outputs (grad mode and requires_grad, a tangent, or a subclass-like tensor)."""
    from ...core.grad_mode import is_grad_enabled

    return bool((is_grad_enabled() and t.requires_grad) or FORWARD_GRAD[0](t)
                or subclass_like(t))


def is_channels_last(t) -> bool:
    """Tensor::suggest_memory_format() == ChannelsLast / ChannelsLast3d (ambiguous layouts default
    to contiguous)."""
    return is_channels_last_strides(t._size, t._stride)


def python_key(t) -> bool:
    """Does the tensor carry the Python dispatch key (a subclass overriding __torch_dispatch__)?"""
    from ...dispatch import python_dispatch as pd

    return pd._overrides(t)


def contiguous(t: TensorBase) -> TensorBase:
    """Tensor::contiguous(): itself if contiguous, else a clone (what upstream dispatches)."""
    if t.is_contiguous():
        return t
    from ...core.layouts import contiguous_format

    return call("clone", t, memory_format=contiguous_format)
