"""What derivatives.yaml's formulas call that is not an ATen operator: Python versions of
upstream's FunctionsManual.cpp helpers, and shims for C++ methods (``m_<method>``).

Written from upstream's definitions (torch/csrc/autograd/FunctionsManual.cpp); operators are
called through Tensor methods and ``torch.*``, so they reach the door, record a graph when grad
mode is on (create_graph), and use our kernels or upstream's decompositions. Names an
operator of the same name would otherwise take are listed in ``SHADOWS`` with the reason.
"""

from __future__ import annotations

import math

from ..core.tensor import TensorBase
from ..core.grad_mode import TLS as _GRAD


def _torch():
    import torch

    return torch


# --- C++ method shims -----------------------------------------------------------------------

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
    return x.is_non_overlapping_and_dense()


def m_suggest_memory_format(x, channels_last_strides_exact_match=False):
    torch = _torch()
    if x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last) and \
            not x.is_contiguous():
        return torch.channels_last
    if x.dim() == 5 and x.is_contiguous(memory_format=torch.channels_last_3d) and \
            not x.is_contiguous():
        return torch.channels_last_3d
    return torch.contiguous_format


def m_to(x, *args, **kwargs):
    if args and isinstance(args[0], Options):
        return x.to(dtype=args[0].dtype_)
    return x.to(*args, **kwargs)


# --- C++ language helpers ------------------------------------------------------------------

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


# --- tensor-making helpers taking at::TensorOptions ------------------------------------------

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


# --- FunctionsManual ---------------------------------------------------------------------------

def handle_r_to_c(self_st, grad):
    if grad is None:
        return None
    st = self_st._dtype if isinstance(self_st, TensorBase) else self_st
    if not st.is_complex and grad._dtype.is_complex:
        return _torch().real(grad)
    return grad


def maybe_multiply(t, s):
    if type(s) in (int, float, bool) and s == 1:
        return t
    return t * s


def mul_tensor_backward(grad, other, self_st):
    return handle_r_to_c(self_st, grad * m_conj(other))


def div_tensor_self_backward(grad, other, self_st, rounding_mode=None):
    if rounding_mode is not None:
        return _torch().zeros_like(grad, dtype=self_st)
    return handle_r_to_c(self_st, grad / m_conj(other))


def div_tensor_other_backward(grad, self, other, rounding_mode=None):
    if rounding_mode is not None:
        return _torch().zeros_like(grad, dtype=other._dtype)
    return handle_r_to_c(other, -grad * m_conj((self / other) / other))


def pow_backward(grad, self, exponent):
    if not isinstance(exponent, complex) and exponent == 0:
        return _torch().zeros_like(self)
    exp = complex(exponent) if isinstance(exponent, complex) else float(exponent)
    return handle_r_to_c(self, grad * m_conj(exp * self.pow(exp - 1)))


def pow_backward_self(grad, self, exponent):
    torch = _torch()
    out = torch.where(exponent == 0.0, torch.zeros((), dtype=grad.dtype),
                      grad * m_conj(exponent * self.pow(exponent - 1)))
    return handle_r_to_c(self, out)


def pow_backward_exponent(grad, self, exponent, result):
    torch = _torch()
    if isinstance(self, TensorBase):
        if exponent._dtype.is_complex:
            is_real = torch.logical_and(torch.imag(exponent) == 0, torch.real(exponent) >= 0)
            cond = torch.logical_and(self == 0, is_real)
        else:
            cond = torch.logical_and(self == 0, exponent >= 0)
        from ..kernels.support.common import result_type

        self_ = self.to(result_type(self, exponent))
        out = grad * torch.where(cond, torch.zeros((), dtype=grad.dtype),
                                 m_conj(result * self_.log()))
        return handle_r_to_c(exponent, out)
    base = self
    if exponent._dtype.is_complex and not isinstance(base, complex):
        base = complex(base)
    import cmath

    logb = cmath.log(base) if isinstance(base, complex) else (
        math.log(base) if base > 0 else (-math.inf if base == 0 else float("nan")))
    term = m_conj(result * logb)
    if base == 0:
        if exponent._dtype.is_complex:
            cond = torch.logical_and(torch.imag(exponent) == 0, torch.real(exponent) >= 0)
        else:
            cond = exponent >= 0
        return handle_r_to_c(exponent, grad * torch.where(cond, torch.zeros((), dtype=grad.dtype),
                                                          term))
    return handle_r_to_c(exponent, grad * term)


def unsqueeze_multiple(t, dims, n):
    mask = set(_dims(dims, n))
    for i in range(n):
        if i in mask:
            t = t.unsqueeze(i)
    return t


def sum_backward(grad, sizes, dims, keepdim):
    if not keepdim and len(sizes) > 0:
        if dims is not None and (isinstance(dims, int) or len(dims) > 0):
            return unsqueeze_multiple(grad, dims, len(sizes)).expand(sizes)
    return grad.expand(sizes)


def _safe_size(sizes, dims):
    if len(sizes) == 0:
        return 1
    n = 1
    for d in _dims(dims, len(sizes)):
        n *= sizes[d]
    return n


def mean_backward(grad, shape, dims, numel, keepdim):
    all_reduce = dims is None or (not isinstance(dims, int) and len(dims) == 0)
    n = numel if all_reduce else _safe_size(shape, dims)
    return sum_backward(grad, shape, dims, keepdim) / n


def restore_reduced_dims(output, dims, keepdim):
    if keepdim:
        return output
    # an omitted ``int[1] dim=[]`` reaches the formula as None: upstream's empty list
    dims = [dims] if isinstance(dims, int) else list(dims or ())
    total = output.dim() + len(dims)
    target = [0] * total
    for i in dims:
        if i < 0:
            i = total + i
        target[i] = 1
    j = 0
    for i in range(total):
        if target[i] == 0:
            target[i] = output.size(j)
            j += 1
    return output.reshape(target)


def scale_grad_by_count(grad, mask, dims):
    dims = [dims] if isinstance(dims, int) else list(dims or ())
    return (grad / mask.sum(dims, True)) * mask


def sum_to(tensor, shape, always_return_non_view=False):
    shape = tuple(shape)
    if len(shape) == 0:
        return tensor.sum()
    sizes = tensor.shape
    lead = tensor.dim() - len(shape)
    reduce = list(range(lead))
    for i in range(lead, tensor.dim()):
        if shape[i - lead] == 1 and sizes[i] != 1:
            reduce.append(i)
    if reduce:
        tensor = tensor.sum(reduce, True)
    if always_return_non_view:
        return tensor.reshape(shape).clone() if lead > 0 else tensor.clone()
    return tensor.view(shape) if lead > 0 else tensor


def to_args_sizes(tensors):
    return [tuple(t._size) for t in tensors]


to_args_sizes_symint = to_args_sizes


def to_args_scalartypes(tensors):
    return [t._dtype for t in tensors]


def cat_tensors_backward(grad, sizes, dtypes, dim):
    torch = _torch()
    out = [None] * len(sizes)
    if grad is None:
        return out
    ndim = next((len(s) for s in sizes if not (len(s) == 1 and s[0] == 0)), 1)
    dim = maybe_wrap_dim(dim, ndim)
    acc = 0
    for i, shape in enumerate(sizes):
        g = torch.real(grad) if grad._dtype.is_complex and not dtypes[i].is_complex else grad
        if len(shape) == 1 and shape[0] == 0:
            out[i] = torch.zeros((0,), dtype=g.dtype)
            continue
        size = shape[dim]
        acc += size
        out[i] = g.narrow(dim, acc - size, size)
    return out


def stack_tensors_backward(grad, dim, dtypes):
    torch = _torch()
    out = [None] * len(dtypes)
    if grad is None:
        return out
    for i, dt in enumerate(dtypes):
        g = grad.select(dim, i)
        if grad._dtype.is_complex and not dt.is_complex:
            g = torch.real(g)
        out[i] = g
    return out


def strides_or_error(t, name):
    return tuple(t._stride)


def mm_mat1_backward(grad, mat2, sizes, strides, layout, alpha):
    if strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(m_conj(mat2).mm(grad.t()).t(), m_conj(alpha))
    return maybe_multiply(grad.mm(m_conj(mat2.t())), m_conj(alpha))


def mm_mat2_backward(grad, mat1, sizes, strides, layout, alpha):
    if strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(grad.t().mm(m_conj(mat1)).t(), m_conj(alpha))
    return maybe_multiply(m_conj(mat1.t()).mm(grad), m_conj(alpha))


def permute_backwards(grad, fwd_dims):
    n = len(fwd_dims)
    dims = [0] * n
    for i, d in enumerate(fwd_dims):
        dims[maybe_wrap_dim(d, n)] = i
    return grad.permute(dims)


def unsqueeze_to(t, *args):
    if len(args) == 1:
        sizes = args[0]
        for d, s in enumerate(sizes):
            if s == 1:
                t = t.unsqueeze(d)
        return t
    dim, sizes = args
    if len(sizes) == 0:  # a 0-dim input: nothing was squeezed
        return t
    if isinstance(dim, int):
        d = maybe_wrap_dim(dim, len(sizes))
        return t.unsqueeze(d) if sizes[d] == 1 else t
    mask = set(_dims(dim, len(sizes)))
    for d in range(len(sizes)):
        if d in mask and sizes[d] == 1:
            t = t.unsqueeze(d)
    return t


def slice_backward_wrapper(grad, sizes, dim, start, end, step):
    torch = _torch()
    return torch.ops.aten.slice_backward(grad, list(sizes), dim,
                                         0 if start is None else start,
                                         INT64_MAX if end is None else end, step)


def index_backward(zeros_like_self, indices, grad):
    return _torch().ops.aten._index_put_impl_(zeros_like_self, list(indices), grad, True, True) \
        if not _GRAD.grad_enabled else zeros_like_self.index_put(list(indices), grad, True)


def gather_backward(grad, self, dim, index, sparse_grad):
    return grad.new_zeros(self.shape).scatter_add(dim, index, grad)


def clamp_backward(grad, self, min, max):
    torch = _torch()
    zero = torch.scalar_tensor(0.0, dtype=grad.dtype)
    if min is not None and max is not None:
        return torch.where((self >= min).logical_and_(self <= max), grad, zero)
    if min is not None:
        return torch.where(self >= min, grad, zero)
    if max is not None:
        return torch.where(self <= max, grad, zero)
    return grad


def clamp_backward_min_max(grad, self, min, max, mask):
    torch = _torch()
    ret = [None, None]
    if grad is None:
        return tuple(ret)
    zero = torch.scalar_tensor(0.0, dtype=grad.dtype)
    if max is not None and min is not None:
        if mask[0]:
            ret[0] = torch.where((self < min).logical_and_(min < max), grad, zero)
        if mask[1]:
            ret[1] = torch.where((self > max).logical_or_(max < min), grad, zero)
    elif min is not None and mask[0]:
        ret[0] = torch.where(self < min, grad, zero)
    elif max is not None and mask[1]:
        ret[1] = torch.where(self > max, grad, zero)
    return tuple(ret)


def masked_fill_backward(grad, mask):
    return _torch().where(mask, grad, 0).sum()


def infinitely_differentiable_silu_backward(grad_output, input):
    s = input.sigmoid()
    return grad_output * s * (1.0 + input * (1.0 - s))


def infinitely_differentiable_native_dropout_backward(grad, mask, scale):
    return grad * (mask.type_as(grad) * scale)


def infinitely_differentiable_mish_backward(grad_output, input):
    torch = _torch()
    sigmoid = input.sigmoid()
    sp = torch.nn.functional.softplus(input)
    tanh_sp = sp.tanh()
    return grad_output * (tanh_sp + input * sigmoid * (1 - tanh_sp * tanh_sp))


def infinitely_differentiable_logit_backward(grad, self, eps):
    torch = _torch()
    if eps is not None:
        lo, hi = eps, 1.0 - eps
        return torch.where(torch.logical_and(self >= lo, self <= hi),
                           grad / (self * (1.0 - self)), torch.zeros_like(self))
    return torch.where(torch.logical_and(self >= 0.0, self <= 1.0),
                       grad / (self * (1.0 - self)), torch.full_like(self, float("nan")))


def embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    if sparse:
        from ..core.refuse import TorchnativeNotImplementedError

        raise TorchnativeNotImplementedError("embedding backward with sparse=True",
                                             "torchnative has no sparse tensors")
    return _torch().ops.aten.embedding_dense_backward(grad, indices, num_weights, padding_idx,
                                                      scale_grad_by_freq)


embedding_backward_symint = embedding_backward


def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    torch = _torch()
    if not keepdim and len(sizes) > 0:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return torch.zeros(list(sizes), dtype=grad.dtype).scatter(dim, indices, grad)


value_selecting_reduction_backward_symint = value_selecting_reduction_backward


def evenly_distribute_backward(grad, input, value):
    torch = _torch()
    if value.isnan().item() if hasattr(value, "isnan") else False:
        mask = input.isnan()
    else:
        mask = input == value
    count = mask.sum()
    return mask * (grad / count)


def var_backward(grad, self, dim, correction, keepdim):
    torch = _torch()
    c = 1.0 if correction is None else float(correction)
    if self.dim() == 0 or dim is None:
        dof = self.numel() - c
        if dof <= 0:
            return grad * torch.where(self == self.mean(), float("nan"), float("inf"))
        return (2.0 / dof) * grad * (self - self.mean())
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not keepdim and self.dim() > 1:
        grad = unsqueeze_multiple(grad, dims, self.dim())
    dof = _safe_size(tuple(self.shape), dims) - c
    two = 2.0 / dof if dof != 0 else math.inf
    return two * grad * (self - self.mean(dims, True))


def var_mean_backward(gvar, gmean, self, dim, correction, keepdim):
    out = var_backward(gvar, self, dim, correction, keepdim) if gvar is not None else None
    if gmean is not None:
        aux = mean_backward(gmean, tuple(self.shape), [] if dim is None else dim, self.numel(),
                            keepdim)
        out = aux if out is None else out + aux
    return out


def std_mean_backward(gstd, gmean, self, std, dim, correction, keepdim):
    out = std_backward(std, gstd, self, dim, correction, keepdim) if gstd is not None else None
    if gmean is not None:
        aux = mean_backward(gmean, tuple(self.shape), [] if dim is None else dim, self.numel(),
                            keepdim)
        out = aux if out is None else out + aux
    return out


def std_backward(result, grad, self, dim, correction, keepdim):
    grad_var = (grad / (result * 2)).masked_fill_(result == 0, 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def logsumexp_backward(grad, self, result, dim, keepdim):
    if not keepdim and self.dim() != 0:
        grad = unsqueeze_multiple(grad, dim, self.dim())
        result = unsqueeze_multiple(result, dim, self.dim())
    return grad * m_conj((self - result).exp())


def prod_safe_zeros_backward(grad, inp, dim):
    torch = _torch()
    if inp.numel() == 0:
        return grad.expand_as(inp)
    ones_size = list(inp.shape)
    ones_size[dim] = 1
    ones = torch.ones(ones_size, dtype=grad.dtype)
    exclusive_normal_nocp = torch.cat([ones, inp.narrow(dim, 0, inp.size(dim) - 1)], dim)
    exclusive_normal = exclusive_normal_nocp.cumprod(dim)
    narrow_reverse = inp.narrow(dim, 1, inp.size(dim) - 1).flip(dim)
    exclusive_reverse_nocp = torch.cat([ones, narrow_reverse], dim)
    exclusive_reverse = exclusive_reverse_nocp.cumprod(dim).flip(dim)
    return grad * m_conj(exclusive_normal * exclusive_reverse)


def prod_backward(grad, input, result, dim=None, keepdim=False):
    torch = _torch()
    if dim is None:
        if input.dim() == 0:
            return grad
        zero_idx = (input == 0).nonzero()
        if zero_idx.numel() == 0:
            return grad * m_conj(result / input)
        if not _GRAD.grad_enabled and zero_idx.size(0) > 1:
            return torch.zeros_like(input)
        return prod_safe_zeros_backward(grad, input.contiguous().view(-1), 0).view_as(input)
    if input.dim() == 0:
        return grad
    dim = maybe_wrap_dim(dim, input.dim())
    if not keepdim:
        grad = grad.unsqueeze(dim)
        result = result.unsqueeze(dim)
    zero_mask = input == 0
    slice_zero_count = zero_mask.sum(dim, True)
    total_zeros = slice_zero_count.sum().item()
    if total_zeros == 0:
        return grad * m_conj(result / input)
    return prod_safe_zeros_backward(grad, input, dim)


def split_backward(grads, split_size, dim, sizes, options):
    dim = maybe_wrap_dim(dim, len(sizes))
    dim_size = sizes[dim]
    num_splits = max((dim_size + split_size - 1) // split_size, 1)
    split_sizes = [split_size] * num_splits
    split_sizes[-1] = split_size - (split_size * num_splits - dim_size)
    return split_with_sizes_backward(grads, split_sizes, dim, sizes, options)


split_backward_symint = split_backward


def split_with_sizes_backward(grads, split_sizes, dim, sizes, options):
    torch = _torch()
    dim = maybe_wrap_dim(dim, len(sizes))
    filled = []
    for j, g in enumerate(grads):
        if g is not None:
            filled.append(g)
        else:
            shape = list(sizes)
            shape[dim] = split_sizes[j]
            filled.append(torch.zeros(shape, **options.kw()))
    return torch.cat(filled, dim)


split_with_sizes_backward_symint = split_with_sizes_backward


def unbind_backward(grads, dim):
    torch = _torch()
    sizes, o = None, None
    for g in grads:
        if g is not None:
            sizes, o = list(g.shape), g
            break
    filled = [g if g is not None else torch.zeros(sizes, dtype=o.dtype) for g in grads]
    return torch.stack(filled, dim)


def unbind_backward_nested(*a):
    not_implemented("unbind (nested)")


def linalg_vector_norm_backward(grad, self, scalar_ord, norm, dim, keepdim):
    torch = _torch()
    ord = float(scalar_ord)
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if ord == 0.0:
        return torch.zeros_like(self)
    if ord == 1.0:
        return self.sgn() * unsqueeze_multiple(grad, dims, self.dim()) if not keepdim and dims \
            else self.sgn() * (grad if keepdim or not dims else grad)
    return norm_backward(grad, self, scalar_ord, norm, dims, keepdim)


def norm_backward(grad, self, p_, norm, dim=(), keepdim=True):  # (grad, self, p, norm): dist
    torch = _torch()
    p = 2.0 if p_ is None else float(p_)
    dim = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if not keepdim and self.dim() != 0 and len(dim) > 0:
        grad = unsqueeze_multiple(grad, dim, self.dim())
        norm = unsqueeze_multiple(norm, dim, self.dim())
    if p == 0.0:
        return torch.zeros_like(self)
    if p == 1.0:
        return self.sgn() * grad
    if p == 2.0:
        return grad * (self / norm).masked_fill_(norm == 0, 0)
    if math.isinf(p):
        sgn = self.sgn()
        mask = (self.abs() == norm)
        return sgn * ((grad / mask.sum(dim, True)) * mask) if dim else \
            sgn * ((grad / mask.sum()) * mask)
    if p < 1.0:
        self_scaled = self.sgn() * self.abs().pow(p - 1).masked_fill_(self == 0, 0)
        return self_scaled * grad * norm.pow(1 - p)
    if p < 2.0:
        self_scaled = self.sgn() * self.abs().pow(p - 1)
        scale_v = grad / norm.pow(p - 1)
        scale_v.masked_fill_(norm == 0, 0)
        return self_scaled * scale_v
    self_scaled = self * self.abs().pow(p - 2)
    scale_v = grad / norm.pow(p - 1)
    scale_v.masked_fill_(norm == 0, 0)
    return self_scaled * scale_v


def softmax_double_backward(grad, grad_output, dim, output):
    return grad_output * grad - (output * grad_output).sum(dim, True) * grad - \
        grad_output * (output * grad).sum(dim, True)


def log_softmax_double_backward(grad, grad_output, dim, output):
    z = output.exp()
    return z * grad_output.sum(dim, True) * ((grad * z).sum(dim, True) - grad)


def binary_cross_entropy_with_logits_backward(grad, input, target, weight, pos_weight,
                                              reduction):
    torch = _torch()
    if pos_weight is not None:
        t = pos_weight.mul(target)
        grad_input = (t.add(1).sub(target)).mul(input.sigmoid()).sub(t)
    else:
        grad_input = input.sigmoid() - target
    grad_input = grad_input * grad
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == 1:
        grad_input = grad_input / input.numel()
    return grad_input


def gelu_double_backward(ggI, gO, input, approximate):
    torch = _torch()
    if approximate == "tanh":
        kBeta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
        kKappa = 0.044715
        inner = kBeta * (input + kKappa * input.pow(3))
        tanh_inner = inner.tanh()
        sech2 = 1 - tanh_inner * tanh_inner
        d_inner = kBeta * (1 + 3 * kKappa * input * input)
        d2_inner = kBeta * 6 * kKappa * input
        left = 0.5 * input
        right = 1 + tanh_inner
        left_d = 0.5
        right_d = sech2 * d_inner
        left_dd = 0
        right_dd = -2 * tanh_inner * sech2 * d_inner * d_inner + sech2 * d2_inner
        return ggI * gO * (2 * left_d * right_d + left * right_dd)
    kAlpha = 1 / math.sqrt(2.0)
    kBeta = 2 / math.sqrt(math.pi) * 1 / math.sqrt(2.0) * 0.5
    input_pdf = (-0.5 * input * input).exp() * kBeta
    return ggI * gO * (2 * input_pdf - input * input * input_pdf)


def _fused_rms_norm_backward_py(*a):
    not_implemented("_fused_rms_norm")


def infinitely_differentiable_native_rms_norm_backward(dY, drstd, input, normalized_shape,
                                                        rstd, weight, output_mask):
    torch = _torch()
    n = len(normalized_shape)
    axis = input.dim() - n
    dims = list(range(axis, input.dim()))
    N = 1
    for s in normalized_shape:
        N *= s
    dX = dgamma = None
    if dY is not None:
        x_hat = input * rstd
        g = dY * weight if weight is not None else dY
        if output_mask[0]:
            dX = rstd * (g - x_hat * (g * x_hat).sum(dims, True) / N)
        if output_mask[1] and weight is not None:
            red = list(range(axis))
            dgamma = (dY * x_hat).sum(red) if red else dY * x_hat
    if drstd is not None and output_mask[0]:
        extra = -(rstd.pow(3) / N) * input * drstd
        dX = extra if dX is None else dX + extra
    return dX, dgamma


def infinitely_differentiable_native_group_norm_backward(dY, dmean, drstd, X, mean, rstd, gamma,
                                                          N, C, HxW, group, eps, grad_input_mask):
    torch = _torch()
    G = group
    D = C // G
    s = 1.0 / (D * HxW)
    dX = dgamma = dbeta = None
    X_t = X.reshape(N, G, D, HxW)
    mean_t = mean.reshape(N, G, 1, 1)
    rstd_t = rstd.reshape(N, G, 1, 1)
    if dY is not None:
        dY_t = dY.reshape(N, G, D, HxW)
        if grad_input_mask[0]:
            gamma_v = gamma.reshape(1, G, D, 1) if gamma is not None else None
            g = dY_t * gamma_v if gamma_v is not None else dY_t
            ds = (g * X_t).sum((2, 3), True)
            db = g.sum((2, 3), True)
            a = rstd_t
            b = (db * mean_t - ds) * rstd_t.pow(3) * s
            c = -b * mean_t - db * rstd_t * s
            dX = a * g + b * X_t + c
        if grad_input_mask[1] and gamma is not None:
            dgamma = (dY_t * (X_t - mean_t) * rstd_t).sum((0, 3)).reshape(C)
        if grad_input_mask[2]:
            dbeta = dY_t.sum((0, 3)).reshape(C)
    if dmean is not None and grad_input_mask[0]:
        extra = (dmean.reshape(N, G, 1, 1) * s).expand_as(X_t)
        dX = extra if dX is None else dX + extra
    if drstd is not None and grad_input_mask[0]:
        extra = -(rstd_t.pow(3) * s) * (X_t - mean_t) * drstd.reshape(N, G, 1, 1)
        dX = extra if dX is None else dX + extra
    if dX is not None:
        dX = dX.reshape(X.shape)
    return dX, dgamma, dbeta


def _sum_exclude_dim1(t, keepdim=True):
    """Sum over every dimension but 1 (the channels), as batch norm reduces."""
    r = t.sum(0, keepdim)
    for d in range(r.dim() - 1, 1 if keepdim else 0, -1):
        r = r.sum(d, keepdim)
    return r


def _unsqueeze_dim1(src, target):
    """A per-channel (C,) tensor shaped to broadcast against ``target`` (N, C, *)."""
    while src.dim() < target.dim() - 1:
        src = src.unsqueeze(1)
    if src.dim() == target.dim() - 1:
        src = src.unsqueeze(0)
    return src


def _expand_as_dim1(src, target):
    while src.dim() < target.dim() - 1:
        src = src.unsqueeze(1)
    return src.expand_as(target)


def batchnorm_double_backward(input, gamma, ggI, ggG, ggB, gO, running_mean, running_var,
                              training, eps, save_mean, save_invstd, output_mask):
    """Gradients of batch norm's backward (grad_input, grad_weight, grad_bias) w.r.t. its input,
    weight and grad_output, given their gradients ggI, ggG, ggB (upstream's FunctionsManual:
    batchnorm_double_backward). With x - mu = d, s = invstd and M values per channel, the first
    backward is gamma * s / M * (M gO - sum(gO) - d s^2 sum(gO d)); differentiate it."""
    torch = _torch()
    affine = gamma is not None
    if affine:
        gamma_e = _expand_as_dim1(gamma, input)
        ggG_e = _expand_as_dim1(ggG, input) if ggG is not None else None
        ggB_e = _expand_as_dim1(ggB, input) if ggB is not None else None
    else:
        gamma_e = torch.ones((), dtype=input.dtype)
        ggG_e = ggB_e = None
    M = input.size(0)
    for n in input.shape[2:]:
        M *= n
    mean = save_mean.to(input.dtype) if training else running_mean
    invstd = save_invstd.to(input.dtype) if training else (running_var + eps).pow(-0.5)
    mu = _unsqueeze_dim1(mean, input)
    d = input - mu
    s = _unsqueeze_dim1(invstd, input)
    s2 = s.pow(2)
    s3 = s.pow(3)
    d_s3 = d * s3
    gO_d_sum = _sum_exclude_dim1(gO * d)
    gO_sum = _sum_exclude_dim1(gO)

    gI = None
    if ggI is not None and training:
        ggI_sum = _sum_exclude_dim1(ggI)
        ggI_d_sum = _sum_exclude_dim1(ggI * d)
        all_sub = ggI_sum * gO_sum / M - _sum_exclude_dim1(gO * ggI) + \
            s2 * gO_d_sum * ggI_d_sum * (3.0 / M)
        t0 = d_s3 * all_sub / M
        t1 = ggI_d_sum * s3 / M * (gO_sum / M - gO)
        t2 = gO_d_sum * s3 / M * (ggI_sum / M - ggI)
        gI = gamma_e * (t0 + t1 + t2)
    if affine and ggG is not None:
        if training:
            term = ggG_e * (gO * s - s * gO_sum / M - d_s3 * gO_d_sum / M)
        else:
            term = ggG_e * s * gO
        gI = term if gI is None else gI + term

    def first_backward(g, gam):  # the first backward's grad_input for grad_output g
        return gam * s / M * (M * g - _sum_exclude_dim1(g) - d * s2 * _sum_exclude_dim1(g * d))

    gG = None
    if affine and ggI is not None:
        if training:
            gG = _sum_exclude_dim1(ggI * first_backward(gO, torch.ones((), dtype=s.dtype)), False)
        else:
            gG = _sum_exclude_dim1(ggI * gO * s, False)
    ggO = None
    if ggI is not None:
        ggO = first_backward(ggI, gamma_e) if training else ggI * s * gamma_e
    if ggG is not None and affine:
        term = ggG_e * d * s
        ggO = term if ggO is None else ggO + term
    if ggB is not None and affine:
        ggO = ggB_e if ggO is None else ggO + ggB_e
    return gI, gG, ggO


def layer_norm_double_backward(input_t, gamma, ggI, ggG, ggB, gO_t, save_mean_t, save_invstd_t,
                               normalized_shape, output_mask):
    """Gradients of layer norm's backward w.r.t. input, weight and grad_output (upstream's
    FunctionsManual: layer_norm_double_backward): batch norm's formulas with the roles of the
    dimensions exchanged, over (M, N) = (rows, normalized elements)."""
    torch = _torch()
    axis = input_t.dim() - len(normalized_shape)
    shape = tuple(input_t.shape)
    M = math.prod(shape[:axis])
    N = math.prod(shape[axis:])
    x = input_t.reshape(M, N)
    gO = gO_t.reshape(M, N)
    affine = gamma is not None
    if affine:
        gamma_e = gamma.reshape(1, N)
        ggG_e = ggG.reshape(1, N) if ggG is not None else None
        ggB_e = ggB.reshape(1, N) if ggB is not None else None
    else:
        gamma_e = torch.ones(1, dtype=x.dtype)
        ggG_e = ggB_e = None
    ggI_e = ggI.reshape(M, N) if ggI is not None else None
    d = x - save_mean_t.reshape(M, 1).to(x.dtype)
    s = save_invstd_t.reshape(M, 1).to(x.dtype)
    s2 = s.pow(2)
    s3 = s.pow(3)
    d_s3 = d * s3

    gI = None
    if ggI is not None:
        gxhat = gO * gamma_e
        gxhat_d_sum = (gxhat * d).sum(1, True)
        gxhat_sum = gxhat.sum(1, True)
        ggI_sum = ggI_e.sum(1, True)
        ggI_d_sum = (ggI_e * d).sum(1, True)
        all_sub = ggI_sum * gxhat_sum / N - (ggI_e * gxhat).sum(1, True) + \
            s2 * gxhat_d_sum * ggI_d_sum * (3.0 / N)
        t0 = d_s3 * all_sub / N
        t1 = ggI_d_sum * s3 / N * (gxhat_sum / N - gxhat)
        t2 = gxhat_d_sum * s3 / N * (ggI_sum / N - ggI_e)
        gI = t0 + t1 + t2
    if affine and ggG is not None:
        g = gO * ggG_e
        term = g * s - s * g.sum(1, True) / N - d_s3 * (g * d).sum(1, True) / N
        gI = term if gI is None else gI + term
    if gI is not None:
        gI = gI.reshape(shape)

    def first_backward(g, gam):
        return gam * s / N * (N * g - g.sum(1, True) - d * s2 * (g * d).sum(1, True))

    gG = None
    if affine and ggI is not None:
        gG = (gO * first_backward(ggI_e, torch.ones((), dtype=s.dtype))).sum(0).reshape(gamma.shape)
    ggO = None
    if ggI is not None:
        ggO = first_backward(ggI_e, gamma_e)
    if ggG is not None and affine:
        term = ggG_e * d * s
        ggO = term if ggO is None else ggO + term
    if ggB is not None and affine:
        ggO = ggB_e if ggO is None else ggO + ggB_e
    if ggO is not None:
        ggO = ggO.expand(M, N).reshape(shape)
    return gI, gG, ggO


def max_pool_double_backward(grad, indices, dim):
    torch = _torch()
    size = list(indices.shape[:-dim]) + [-1]
    idx = indices.reshape(size)
    return grad.reshape(size).gather(-1, idx).view(indices.shape)


def _euclidean_dist_backward(*a):
    not_implemented("_euclidean_dist")


def log_sigmoid_double_backward(grad, input):
    z = input.sigmoid()
    return grad * (z - 1) * z


def softplus_double_backward(grad, input, beta, threshold):
    z = (input * beta).sigmoid()
    return grad * z * (1 - z) * ((input * beta) < threshold).to(grad.dtype) * beta


def elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """d/dx of elu_backward (only its negative branch depends on x)."""
    torch = _torch()
    neg = (self_or_result < 0).to(grad.dtype)
    if is_result:
        return grad * grad_output * input_scale * neg
    return grad * grad_output * input_scale * input_scale * alpha * scale * \
        (self_or_result * input_scale).exp() * neg


def _mean_scaled(t, reduction, input):
    return t / input.numel() if reduction == 1 else t


def smooth_l1_loss_double_backward(grad, input, target, reduction, beta):
    torch = _torch()
    if beta == 0:
        return torch.zeros(grad.shape, dtype=grad.dtype)
    d = (input - target).abs()
    return _mean_scaled(grad * (d < beta).to(grad.dtype) / beta, reduction, input)


def huber_loss_double_backward(grad, input, target, reduction, delta):
    d = (input - target).abs()
    return _mean_scaled(grad * (d < delta), reduction, input)


def huber_loss_double_backward_grad_output(grad, grad_output, input, target, reduction, delta):
    r = (input - target).clamp(-delta, delta)
    if reduction == 0:
        return r * grad
    return (_mean_scaled(r, reduction, input) * grad).sum()


def soft_margin_loss_double_backward(grad, input, target, reduction):
    z = (input * -target).exp()
    return _mean_scaled(grad * (target * target) * z / ((z + 1) * (z + 1)), reduction, input)


def soft_margin_loss_double_backward_grad_output(grad, grad_output, input, target, reduction):
    z = (input * -target).exp()
    r = -target * z / (z + 1)
    if reduction == 0:
        return r * grad
    return (_mean_scaled(r, reduction, input) * grad).sum()


def copysign_tensor_self_backward(grad, self, result):
    ratio = result / self
    return grad * ratio.masked_fill(self == 0, 0)


def binary_cross_entropy_with_logits_target_backward(grad, self, target, weight, pos_weight,
                                                     reduction):
    """d loss / d target = log(1 - sigmoid(x)) - pos_weight * log(sigmoid(x)) (= -x without
    pos_weight)."""
    if pos_weight is not None:
        s = self.sigmoid()
        g = ((1.0 - s).log() - pos_weight * s.log()) * grad
    else:
        g = -self * grad
    if weight is not None:
        g = g * weight
    return g / target.numel() if reduction == 1 else g


def rad2deg_backward(grad):
    return grad * (180.0 / math.pi)


def deg2rad_backward(grad):
    return grad * (math.pi / 180.0)


def sinc_backward(grad, self):
    torch = _torch()
    x_pi = self * math.pi
    x2_pi = self * self * math.pi
    out = grad * (x_pi * x_pi.cos() - x_pi.sin()) / m_conj(x2_pi)
    return torch.where(x2_pi == 0.0, torch.zeros((), dtype=grad.dtype), out)


def mvlgamma_backward(grad, self, p):
    torch = _torch()
    args = torch.arange(-p / 2.0 + 0.5, 0.5, 0.5, dtype=self.dtype).add(self.unsqueeze(-1))
    return grad * args.digamma().sum(-1)


def _shrink_backward(grad, self, lambd):
    return grad.masked_fill((self >= -lambd) & (self <= lambd), 0)


def hardshrink_backward(grad, self, lambd):
    return _shrink_backward(grad, self, lambd)


def softshrink_backward(grad, self, lambd):
    return _shrink_backward(grad, self, lambd)


def index_select_backward(grad, self_sizes, dim, index):
    torch = _torch()
    return torch.zeros(list(self_sizes), dtype=grad.dtype).index_add(dim, index, grad)


index_select_backward_symint = index_select_backward


def log1p_backward(grad, self):
    return grad / m_conj(self + 1)


def expand_as_backward(*a):
    not_implemented("expand_as")


def repeat_backward(grad, repeats, input_shape):
    torch = _torch()
    if 0 in list(repeats):  # as upstream: fresh zeros, no graph through the gradient
        return torch.zeros(list(input_shape), dtype=grad.dtype, device=grad.device)
    n = len(input_shape)
    num_unsqueezed = len(repeats) - n
    for _ in range(num_unsqueezed):
        grad = grad.sum(0, False)
    sizes = []
    sum_dims = []
    for j in range(n):
        r = repeats[j + num_unsqueezed]
        sizes.extend([r, input_shape[j]])
        sum_dims.append(2 * j)
    grad = grad.reshape(sizes)
    return grad.sum(sum_dims)


def to_dense_backward(grad, input, masked=None):
    return grad


def constant_pad_nd_backward(grad, pad):
    return _torch().constant_pad_nd(grad, [-p for p in pad])


def trace_backward(grad, sizes):
    torch = _torch()
    n = sizes[0] * sizes[1]
    g = torch.zeros(n, dtype=grad.dtype)
    diag = torch.arange(min(sizes[0], sizes[1]), dtype=torch.int64) * (sizes[1] + 1)  # non-square too
    g = g.index_fill(0, diag, grad)
    return g.view(list(sizes))


trace_backward_symint = trace_backward


def diag_embed_backward(*a):
    not_implemented("diag_embed")


def fmap(seq, fn):
    return [fn(x) for x in seq]


def reverse_list(x):
    return list(reversed(list(x or ())))  # an omitted ``int[1] dims=[]`` arrives as None


reverse_list_symint = reverse_list


def expand_symint(*a):
    raise NotImplementedError


def logdet_backward(*a):
    not_implemented("logdet")


def sparse_sparse_matmul_backward(*a):
    not_implemented("sparse matmul")


def renorm_backward(*a):
    not_implemented("renorm")


def cumsum_backward(grad, dim):
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    return grad.flip(dim).cumsum(dim).flip(dim)


def cumprod_backward(grad, input, dim, output):
    """d/dx_i of sum_j g_j prod_{m<=j} x_m = prod_{m<i} x_m * R_i, R_i = g_i + x_{i+1} R_{i+1}:
    an exclusive product times a reverse recurrence, exact where inputs are zero (no division)."""
    torch = _torch()
    if input.numel() <= 1:  # as upstream: the gradient itself (no graph through the input)
        return grad
    dim = maybe_wrap_dim(dim, input.dim())
    n = input.size(dim)
    ones = torch.ones_like(input.narrow(dim, 0, 1))
    exclusive = torch.cat([ones, input.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    parts = [grad.narrow(dim, n - 1, 1)]
    for i in range(n - 2, -1, -1):
        parts.append(grad.narrow(dim, i, 1) + input.narrow(dim, i + 1, 1) * parts[-1])
    return exclusive * torch.cat(parts[::-1], dim)


def cummaxmin_backward(grad, input, indices, dim):
    """Each output's gradient goes to the element it took its value from."""
    torch = _torch()
    if input.numel() == 0:
        return input
    return torch.zeros_like(input).scatter_add(dim, indices, grad)


def logcumsumexp_backward(grad, self, result, dim):
    """sum_{j>=i} g_j exp(x_i - r_j), in log space, positive and negative parts of g apart
    (upstream's FunctionsManual: logcumsumexp_backward)."""
    torch = _torch()
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    lowest = torch.finfo(grad.dtype).min
    log_abs = grad.abs().log()

    def reverse_logcumsumexp(x):
        return x.flip(dim).logcumsumexp(dim).flip(dim)

    pos = torch.where(grad > 0, log_abs, torch.full((), lowest, dtype=grad.dtype))
    neg = torch.where(grad < 0, log_abs, torch.full((), lowest, dtype=grad.dtype))
    return (reverse_logcumsumexp(pos - result) + self).exp() - \
        (reverse_logcumsumexp(neg - result) + self).exp()


def angle_backward(grad, self):
    """angle is piecewise constant on real inputs; on complex ones, grad * i z / |z|^2 made real."""
    torch = _torch()
    if not self._dtype.is_complex:
        return torch.zeros_like(self)
    return torch.where(self == 0.0, torch.zeros((), dtype=self.dtype),
                       grad * self / self.abs().pow(2) * 1j)


def masked_select_backward(grad, input, mask):
    """The selected elements' gradients scattered back, over input broadcast against mask."""
    torch = _torch()
    shape = torch.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    return torch.zeros_like(input.expand(shape)).masked_scatter(mask, grad)


def masked_scatter_backward(grad, mask, sizes):
    torch = _torch()
    mask_selected = grad.masked_select(mask)
    diff_nelem = math.prod(sizes) - mask_selected.numel()  # source may hold more than is used
    if diff_nelem > 0:
        zeros_fill = torch.zeros(diff_nelem, dtype=grad.dtype)
        mask_selected = torch.cat([mask_selected, zeros_fill], 0)
    return mask_selected.view(list(sizes))


masked_scatter_backward_symint = masked_scatter_backward


def _reduce_backward(grad, self, src, reduce, include_self, result, gather, scatter_add,
                     scatter_fill, name):
    """scatter_reduce / index_reduce backward, written once over the gather / scatter pair of
    the op (gather: result-shaped -> src-shaped; scatter_add: src-shaped added into self-shaped;
    scatter_fill: self-shaped with the written positions set to a value)."""
    torch = _torch()
    if reduce == "sum":
        g_self, g_src = grad, gather(grad)
    elif reduce == "mean":
        n = torch.ones_like(grad) if include_self else torch.zeros_like(grad)
        n = scatter_add(n, torch.ones_like(src))
        n = n.masked_fill(n == 0, 1)
        g_self, g_src = grad / n, gather(grad) / gather(n)
    elif reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        masked_self_result = _reduce_call(name, masked_self, src, reduce, include_self)
        g_self = grad * masked_self_result / masked_self
        src_zero = src == 0
        n_zeros = gather(scatter_add(torch.zeros_like(self), src_zero.to(self.dtype)))
        single = src_zero & (n_zeros == 1)
        masked_src_result = _reduce_call(name, self, src.masked_fill(single, 1), reduce, include_self)
        g_src = torch.where(single, gather(grad * masked_src_result),
                            gather(grad * result) / src.masked_fill(src_zero, 1))
        if bool((n_zeros > 1).any()) and _GRAD.grad_enabled:
            from ..core.refuse import TorchnativeNotImplementedError

            raise TorchnativeNotImplementedError(
                f"double backward of {name} prod with several zeros of src in one position",
                "upstream refuses it when differentiated; torchnative refuses at once")
    elif reduce in ("amax", "amin"):
        value = gather(result)
        self_is = (self == result).to(self.dtype)
        src_is = (src == value).to(self.dtype)
        count = scatter_add(self_is, src_is)
        share = grad / count
        g_self = (self == result) * share
        g_src = (src == value) * gather(share)
    else:
        raise RuntimeError(f"Expected 'reduce' argument to be one of 'sum', 'prod', 'mean', "
                           f"'amax', 'amin' but got {reduce}.")
    if not include_self:
        g_self = scatter_fill(g_self, 0)
    return g_self, g_src


def _reduce_call(name, self, src, reduce, include_self):
    return _REDUCE_CALLS[name](self, src, reduce, include_self)


_REDUCE_CALLS: dict = {}


def scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result):
    if grad is None:
        return None, None
    _REDUCE_CALLS["scatter_reduce"] = lambda a, b, r, inc: a.scatter_reduce(dim, index, b, r,
                                                                          include_self=inc)
    return _reduce_backward(
        grad, self, src, reduce, include_self, result,
        gather=lambda t: t.gather(dim, index),
        scatter_add=lambda t, v: t.scatter_add(dim, index, v),
        scatter_fill=lambda t, v: t.scatter(dim, index, v), name="scatter_reduce")


def index_reduce_backward(grad, self, dim, index, source, reduce, include_self, result):
    if grad is None:
        return None, None
    _REDUCE_CALLS["index_reduce"] = lambda a, b, r, inc: a.index_reduce(dim, index, b, r,
                                                                      include_self=inc)
    return _reduce_backward(
        grad, self, source, reduce, include_self, result,
        gather=lambda t: t.index_select(dim, index),
        scatter_add=lambda t, v: t.index_add(dim, index, v),
        scatter_fill=lambda t, v: t.index_fill(dim, index, v), name="index_reduce")


# --- convolution's double backward (Convolution.cpp's _convolution_double_backward) ----------

def _convolution_double_backward(ggI, ggW, ggb, gO, weight, input, stride, padding, dilation,
                                 transposed, output_padding, groups, output_mask):
    """The backward of convolution_backward, computed as upstream's does with convolutions
    (it is bilinear in input and weight): ggO = conv(ggI, w) + conv(input, ggW) + ggb; gI the
    transposed convolution of gO by ggW (the plain one when the forward was transposed); gW the
    convolution of ggI by gO with batch and channels exchanged (stride and dilation swapped,
    per group), transposed back and narrowed to the kernel. Undefined where nothing flows."""
    torch = _torch()
    aten = torch.ops.aten
    nd = input.dim() - 2

    def expand(p):
        p = [int(v) for v in p]
        return p * nd if len(p) == 1 else p

    stride, padding, dilation = expand(stride), expand(padding), expand(dilation)
    output_padding = expand(output_padding) if len(output_padding) else [0] * nd
    transposed = bool(transposed)

    def conv(x, w, st, pd, dl, tr, op, g):
        return aten._convolution(x, w, None, st, pd, dl, tr, op, g, False, False, True, True)

    ggO = gI = gW = None
    if gO is None:
        return ggO, gI, gW
    if ggI is not None:
        ggO = conv(ggI, weight, stride, padding, dilation, transposed, output_padding, groups)
    if ggW is not None:
        t = conv(input, ggW, stride, padding, dilation, transposed, output_padding, groups)
        ggO = t if ggO is None else ggO + t
    if ggb is not None:
        shape = [1] * gO.dim()
        shape[1] = ggb.shape[0]
        t = ggb.contiguous().view(shape).expand(list(gO.shape))
        ggO = t if ggO is None else ggO + t
    if ggW is not None:
        if transposed:
            gI = conv(gO, ggW, stride, padding, dilation, False, output_padding, groups)
            for i in range(nd):
                if gI.shape[2 + i] > input.shape[2 + i]:
                    gI = gI.narrow(2 + i, 0, input.shape[2 + i])
        else:
            op = [0] * nd
            for i in range(nd):
                expected = (weight.shape[2 + i] - 1) * dilation[i] - 2 * padding[i] + \
                    stride[i] * (gO.shape[2 + i] - 1) + 1
                if expected != input.shape[2 + i]:
                    op[i] = input.shape[2 + i] - expected
            gI = conv(gO, ggW, stride, padding, dilation, True, op, groups)
    if ggI is not None:
        gOt, ggIt = gO.transpose(0, 1), ggI.transpose(0, 1)

        def wgrad(a, b):
            if transposed:
                a, b = b, a
            return conv(a, b, dilation, padding, stride, False, output_padding, 1).transpose(0, 1)

        if groups == 1:
            gW = wgrad(ggIt, gOt)
        else:
            ci, co = ggI.shape[1] // groups, gO.shape[1] // groups
            gW = torch.cat([wgrad(ggIt.narrow(0, g * ci, ci), gOt.narrow(0, g * co, co))
                            for g in range(groups)], 0)
        for i in range(nd):
            if gW.shape[2 + i] > weight.shape[2 + i]:
                gW = gW.narrow(2 + i, 0, weight.shape[2 + i])
    return ggO, gI, gW


_convolution_double_backward_symint = _convolution_double_backward


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


def _to_copy_backward(grad, self_options):
    if not self_options.dtype_.is_complex and grad._dtype.is_complex:
        grad = _torch().real(grad)
    return grad.to(self_options.dtype_)


def sgn_backward(x, gx, sgn):
    torch = _torch()
    if not x._dtype.is_complex:
        return torch.zeros_like(x)
    abs_ = x.abs()
    return ((gx - sgn * torch.real(gx * sgn.conj())) / abs_).masked_fill_(abs_ == 0.0, 0.0)


def atan2_backward(grad, self, other, mask):
    recip = (self * self + other * other).reciprocal()
    return (grad * other * recip if mask[0] else None,
            grad * -self * recip if mask[1] else None)


def mse_loss_double_backward(grad, input, reduction):
    g = 2 * grad
    return g / input.numel() if reduction == 1 else g


def error_for_max_pool2d_double_backward():
    raise RuntimeError("max_pool2d with `return_indices=False` is not infinitely differentiable. "
                       "If you want to calculate higher order derivatives, e.g. second order, set "
                       "`return_indices=True`.")


def as_strided_backward(grad, input_geometry, sizes, strides, storage_offset):
    """The gradient of as_strided: scatter-add the view's gradient into a flat storage image,
    then read the input's geometry out of it (overlapping views accumulate)."""
    torch = _torch()
    g = input_geometry
    off = g.offset if storage_offset is None else storage_offset
    extent = max(g.offset + sum((n - 1) * st for n, st in zip(g.sizes, g.strides) if n > 0),
                 off + sum((n - 1) * st for n, st in zip(sizes, strides) if n > 0)) + 1
    idx = torch.full(list(sizes), off, dtype=torch.int64)
    for d, (n, st) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = n
        idx = idx + (torch.arange(n, dtype=torch.int64) * st).reshape(shape)
    flat = torch.zeros(extent, dtype=grad.dtype).index_add(0, idx.reshape(-1), grad.reshape(-1))
    return flat.as_strided(list(g.sizes), list(g.strides), g.offset)


as_strided_backward_symint = as_strided_backward


def nansum_backward(grad, self, dims, keepdim):
    return sum_backward(grad, tuple(self.shape), dims, keepdim) * self.isnan().logical_not()


def take_backward(grad, self, indices):
    return _torch().zeros_like(self).put_(indices, grad, True)


kCudnnDoubleBackwardMsg = "Double backwards is not supported for CuDNN RNNs due to limitations " \
    "in the CuDNN API. To run double backwards, please disable the CuDNN backend temporarily " \
    "while running the forward pass of your RNN."


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


def _scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out,
                                                         logsumexp, dropout_p, is_causal,
                                                         attn_mask=None, scale=None):
    return _without_derivative(
        "_scaled_dot_product_flash_attention_for_cpu_backward",
        (grad_out, query, key, value, out, logsumexp, attn_mask),
        lambda: _flash_attention_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                          is_causal, attn_mask, scale))


def _flash_attention_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal,
                              attn_mask, scale):
    """Attention's gradient from the saved output and log-sum-exp (the math upstream's CPU
    flash kernel evaluates blockwise): P = exp(S - lse), dV = P^T dO, dS = P (dO V^T - rowsum(dO
    * O)), dQ = dS K scale, dK = dS^T Q scale."""
    torch = _torch()
    if dropout_p != 0.0:
        from ..core.refuse import TorchnativeNotImplementedError

        raise TorchnativeNotImplementedError(
            "_scaled_dot_product_flash_attention_for_cpu_backward with dropout",
            "the dropout mask of the forward is not recorded")
    E = query.size(-1)
    s = 1.0 / math.sqrt(E) if scale is None else scale
    scores = query.matmul(key.transpose(-2, -1)) * s
    L, S = query.size(-2), key.size(-2)
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask.logical_not(), float("-inf")) \
            if attn_mask.dtype == torch.bool else scores + attn_mask
    p = (scores - logsumexp.unsqueeze(-1)).exp()
    dv = p.transpose(-2, -1).matmul(grad_out)
    dp = grad_out.matmul(value.transpose(-2, -1))
    d = (grad_out * out).sum(-1, True)
    ds = p * (dp - d)
    dq = ds.matmul(key) * s
    dk = ds.transpose(-2, -1).matmul(query) * s
    return dq, dk, dv


# --- FFT (FunctionsManual's helpers, written beside the kernels in kernels/spectral.py) ------

def fft_r2c_backward(*a):
    from ..kernels.spectral import fft_r2c_backward as f

    return f(*a)


def fft_c2r_backward(*a):
    from ..kernels.spectral import fft_c2r_backward as f

    return f(*a)


def polar_backward(grad, result):
    """(grad_abs, grad_angle) of polar(abs, angle) = abs * exp(i angle) (FunctionsManual)."""
    torch = _torch()
    if grad is None:
        return None, None
    grad_conj = grad.conj()
    return (torch.real(grad_conj * torch.sgn(result)), torch.real(grad_conj * (result * 1j)))
