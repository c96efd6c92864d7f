"""Shims for the C++ that derivatives.yaml's formulas are written in: ``at::Tensor`` methods
(``m_<method>``), language helpers (``static_cast``, ``std_vector``, integer division), and the
tensor-making functions that take ``at::TensorOptions``."""

from __future__ import annotations

import math

from ..core.layouts import suggest_memory_format
from ..core.tensor import TensorBase
from ..core.grad_mode import TLS as _GRAD


def _torch():
    import torch

    return torch


def m_defined(x):
    return x is not None


def m_sym_sizes(x):
    return tuple(x._size)


m_sizes = m_sym_sizes


def m_sym_size(x, d=None):
    if d is None:
        return len(x)
    return x.size(d)


def m_size(x, d=None):
    if isinstance(x, TensorBase):
        return x.size(d) if d is not None else tuple(x._size)
    return len(x)


def m_sym_numel(x):
    return x.numel()


m_numel = m_sym_numel


def m_sym_strides(x):
    return tuple(x._stride)


m_strides = m_sym_strides


def m_sym_stride(x, d):
    return x.stride(d)


m_stride = m_sym_stride


def m_storage_offset(x):
    return x._offset


m_sym_storage_offset = m_storage_offset


class Options:
    """at::TensorOptions: the dtype/device a tensor-making helper should use."""

    __slots__ = ("dtype_", "device_")

    def __init__(self, dtype, device=None):
        self.dtype_, self.device_ = dtype, device

    def kw(self) -> dict:
        return {"dtype": self.dtype_, "device": self.device_}


def m_options(x):
    return Options(x._dtype, x.device)


def m_scalar_type(x):
    if isinstance(x, TensorBase):
        return x._dtype
    return _torch()._C._get_default_dtype() if isinstance(x, float) else x


def m_dtype(x, dt=None):
    if isinstance(x, Options):
        return x.dtype_ if dt is None else Options(dt, x.device_)
    return x.dtype


def m_layout(x):
    return x.layout


def m_device(x, d=None):
    if isinstance(x, Options):
        return x if d is None else Options(x.dtype_, d)
    return x.device


def m_has_value(x):
    return x is not None


def m_value(x):
    return x


def m_value_or(x, d):
    return d if x is None else x


def m_toDouble(x):
    return float(x)


m_toFloat = m_toDouble


def m_toLong(x):
    return int(x)


def m_toBool(x):
    return bool(x)


def m_toComplexDouble(x):
    return complex(x)


def m_toSymInt(x):
    return x


def m_to_type(x, t):
    return static_cast(t, x)


def m_conj(x):
    if isinstance(x, TensorBase):
        return x.conj() if x._dtype.is_complex else x
    return x.conjugate() if isinstance(x, complex) else x


def m_sgn(x):
    if isinstance(x, TensorBase):
        return x.sgn()
    return (x / abs(x) if x != 0 else 0 * x) if isinstance(x, complex) else \
        (x > 0) - (x < 0)


def m_abs(x):
    return x.abs() if isinstance(x, TensorBase) else abs(x)


def m_neg(x):
    return x.neg() if isinstance(x, TensorBase) else -x


def m_is_complex(x):
    if isinstance(x, TensorBase):
        return x._dtype.is_complex
    if hasattr(x, "is_complex"):
        return x.is_complex
    return isinstance(x, complex)


def m_isComplex(x):
    return isinstance(x, complex)


def m_isFloatingPoint(x):
    return isinstance(x, float)


def m_isIntegral(x, include_bool=False):
    return isinstance(x, int) and (include_bool or not isinstance(x, bool))


def m_is_floating_point(x):
    return x.is_floating_point()


def m_dim(x):
    return len(x._size)


def m_index(x, indices):
    """at::Tensor::index(indices): advanced indexing, aten::index.Tensor."""
    return _torch().ops.aten.index.Tensor(x, list(indices))


def m_slice(x, dim=0, start=None, end=None, step=1):
    """at::Tensor::slice: aten::slice.Tensor."""
    return _torch().ops.aten.slice.Tensor(x, dim, start, end, step)


def m_div(x, other, rounding_mode=None):
    """at::Tensor::div(other, rounding_mode): the mode is positional in C++."""
    return x.div(other, rounding_mode=rounding_mode)


def m_vec(x):
    return list(x)


def m_empty(x):
    return len(x) == 0


def m_front(x):
    return x[0]


def m_back(x):
    return x[-1]


def m_get(x):
    return x


def m_item(x):
    return x.item()


def m_requires_grad(x):
    return x.requires_grad


def m_guard_int(x, *a):
    return int(x)


m_expect_int = m_as_int_unchecked = m_guard_int


def m_is_same(a, b):
    return a is b


def m_is_cpu(x):
    return True


def _false(x, *a):
    return False


m_is_xpu = m_is_cuda = m_is_sparse = m_is_sparse_csr = m_is_mkldnn = m_is_nested = _false


def m_mT(x):
    return x.mT


def m_mH(x):
    return x.mH


def m__fw_primal(x, level=0):
    return x


def m_is_contiguous(x, fmt=None):
    return x.is_contiguous() if fmt is None else x.is_contiguous(memory_format=fmt)


def m_is_non_overlapping_and_dense(x):
    return x._non_overlapping_and_dense()


def m_suggest_memory_format(x, channels_last_strides_exact_match=False):
    return suggest_memory_format(x._size, x._stride, channels_last_strides_exact_match)


def m_to(x, *args, **kwargs):
    if args and isinstance(args[0], Options):
        return x.to(dtype=args[0].dtype_)
    return x.to(*args, **kwargs)


def cdiv(a, b):
    """C++ ``/``: integer division truncates toward zero when both sides are integers."""
    if type(a) is int and type(b) is int:
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def cmod(a, b):
    if type(a) is int and type(b) is int:
        return a - cdiv(a, b) * b
    return a % b


def std_vector(*args):
    if not args:
        return []
    if len(args) == 2 and isinstance(args[0], int):
        return [args[1]] * args[0]
    if len(args) == 1 and isinstance(args[0], int):
        return [None] * args[0]
    return list(args[0])


_INTS = {"int64_t", "int", "int32_t", "size_t", "long", "c10::SymInt", "SymInt"}


def static_cast(t, x):
    if t in ("double", "float"):
        return float(x)
    if t in _INTS:
        return int(x)
    if t == "bool":
        return bool(x)
    return x


def GradMode_is_enabled():
    return _GRAD.grad_enabled


def Tensor():
    return None


def not_implemented(name, reason=""):
    msg = f"the derivative for '{name}' is not implemented."
    if reason:
        msg += " " + reason
    raise RuntimeError(msg)


def sqrt(x):
    """C++ ``sqrt`` in a formula: std::sqrt on a number (``sqrt(M_PI)``), at::sqrt on a tensor."""
    return math.sqrt(x) if isinstance(x, (int, float)) else _torch().sqrt(x)


M_PI = math.pi


M_LN2 = math.log(2.0)


std_sqrt = math.sqrt


std_exp = math.exp


std_log = math.log


std_abs = abs


std_pow = pow


std_max = max


std_min = min


std_numeric_limits = None


INT64_MAX = 2 ** 63 - 1


def maybe_wrap_dim(d, n, wrap_scalar=True):
    n = max(n, 1) if wrap_scalar else n
    if d < -n or d >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d + n if d < 0 else d


def _dims(dim, n):
    if dim is None:
        return list(range(n))
    if isinstance(dim, int):
        dim = [dim]
    return [maybe_wrap_dim(d, n) for d in dim]


class TypeAndSize:
    """A saved ``x_info``: x's sizes and options, not its values (FunctionsManual's TypeAndSize)."""

    __slots__ = ("_size", "_dtype", "device")

    def __init__(self, t):
        self._size, self._dtype, self.device = tuple(t._size), t._dtype, t.device

    def zeros(self):
        return _torch().zeros(self._size, dtype=self._dtype, device=self.device)

    def sym_sizes(self):
        return self._size


class TensorGeometry:
    __slots__ = ("sizes", "strides", "offset", "options")

    def __init__(self, t):
        self.sizes, self.strides, self.offset = t._size, t._stride, t._offset
        self.options = m_options(t)

    def zeros(self):
        return _torch().zeros(self.sizes, **self.options.kw())

    def sym_sizes(self):
        return self.sizes


def _opts(o):
    if o is None:
        return {}
    if isinstance(o, Options):
        return o.kw()
    if isinstance(o, TensorBase):
        return {"dtype": o._dtype}
    return {"dtype": o}  # a ScalarType


def zeros_like(x, opts=None, memory_format=None):
    kw = _opts(opts) if not _is_memfmt(opts) else {"memory_format": opts}
    return _torch().zeros_like(x, **kw)


def ones_like(x, opts=None):
    return _torch().ones_like(x, **({} if _is_memfmt(opts) else _opts(opts)))


def empty_like(x, opts=None):
    return _torch().empty_like(x, **({} if _is_memfmt(opts) else _opts(opts)))


def _is_memfmt(o):
    return o is not None and type(o).__name__ == "memory_format"


def zeros(sizes, opts=None):
    return _torch().zeros(list(sizes), **_opts(opts))


zeros_symint = zeros


def ones(sizes, opts=None):
    return _torch().ones(list(sizes), **_opts(opts))


def empty(sizes, opts=None):
    return _torch().empty(list(sizes), **_opts(opts))


def scalar_tensor(v, opts=None):
    return _torch().scalar_tensor(v, **_opts(opts))


def m_new_zeros(x, sizes, opts=None):
    return x.new_zeros(list(sizes), **_opts(opts))


def m_new_empty(x, sizes, opts=None):
    return x.new_empty(list(sizes), **_opts(opts))


def m_new_ones(x, sizes, opts=None):
    return x.new_ones(list(sizes), **_opts(opts))


def m_new_full(x, sizes, v, opts=None):
    return x.new_full(list(sizes), v, **_opts(opts))


def fmap(seq, fn):
    return [fn(x) for x in seq]


def reverse_list(x):
    return list(reversed(list(x or ())))  # an omitted ``int[1] dims=[]`` arrives as None


reverse_list_symint = reverse_list


MemoryFormat_Contiguous = None  # filled lazily (torch.contiguous_format) by _memory_formats()


LEGACY_CONTIGUOUS_MEMORY_FORMAT = None


def _memory_formats():
    torch = _torch()
    g = globals()
    g["MemoryFormat_Contiguous"] = g["LEGACY_CONTIGUOUS_MEMORY_FORMAT"] = torch.contiguous_format
    g["MemoryFormat_Preserve"] = torch.preserve_format
    g["MemoryFormat_ChannelsLast"] = torch.channels_last


def wrap_opt_if(t, cond):
    return t if cond else None


def _without_derivative(name, inputs, compute):
    """``compute()`` standing for the ATen operator ``name``, which upstream gives no derivative:
    computed without recording, and, when grad mode is on and an input requires grad, its
    outputs get the node upstream's autograd kernel gives such an operator (it raises
    "derivative for aten::<name> is not implemented" when a backward pass reaches it)."""
    from .node import NotImplementedNode, gradient_edge

    prev = _GRAD.grad_enabled
    _GRAD.grad_enabled = False
    try:
        result = compute()
    finally:
        _GRAD.grad_enabled = prev
    edges = [gradient_edge(t) for t in inputs if isinstance(t, TensorBase)]
    if not prev or all(e[0] is None for e in edges):
        return result
    outs = [o for o in (result if isinstance(result, tuple) else (result,))
            if isinstance(o, TensorBase) and (o._dtype.is_floating_point or o._dtype.is_complex)]
    node = NotImplementedNode(f"derivative for aten::{name} is not implemented", edges)
    node._input_meta = tuple((o._size, o._dtype) for o in outs)
    for k, o in enumerate(outs):
        o._grad_fn, o._output_nr, o._requires_grad = node, k, True
    return result
