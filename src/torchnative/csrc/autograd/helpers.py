"""What derivatives.yaml's formulas call that is not an ATen operator: Python versions of
upstream's FunctionsManual.cpp helpers, and shims for C++ methods (``m_<method>``).

Written from upstream's definitions (torch/csrc/autograd/FunctionsManual.cpp); operators are
called through Tensor methods and ``torch.*``, so they reach the door, record a graph when grad
mode is on (create_graph), and use our kernels or upstream's decompositions. Names an
operator of the same name would otherwise take are listed in ``SHADOWS`` with the reason.
"""

from __future__ import annotations

import math

from ..tensor import TensorBase
from .grad_mode import TLS as _GRAD


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
        from ..kernels.common import result_type

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
    dims = [dims] if isinstance(dims, int) else list(dims)
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
    return (grad / mask.sum(list(dims), True)) * mask


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
        from ..refuse import TorchnativeNotImplementedError

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
    return grad * (self - result).exp().conj()


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
    return grad * (exclusive_normal * exclusive_reverse).conj()


def prod_backward(grad, input, result, dim=None, keepdim=False):
    torch = _torch()
    if dim is None:
        if input.dim() == 0:
            return grad
        zero_idx = (input == 0).nonzero()
        if zero_idx.numel() == 0:
            return grad * (result / input).conj()
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
        return grad * (result / input).conj()
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


def norm_backward(grad, self, p_, norm, dim, keepdim):
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


def batchnorm_double_backward(*a):
    not_implemented("native_batch_norm_backward", "(double backward of batch norm)")


def layer_norm_double_backward(*a):
    not_implemented("native_layer_norm_backward", "(double backward of layer norm)")


def max_pool_double_backward(grad, indices, dim):
    torch = _torch()
    size = list(indices.shape[:-dim]) + [-1]
    idx = indices.reshape(size)
    return grad.reshape(size).gather(-1, idx).view(indices.shape)


def _euclidean_dist_backward(*a):
    not_implemented("_euclidean_dist")


def log1p_backward(grad, self):
    return grad / (self + 1).conj()


def expand_as_backward(*a):
    not_implemented("expand_as")


def repeat_backward(grad, repeats, input_shape):
    torch = _torch()
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
    g = g.index_fill(0, torch.arange(0, n, sizes[1] + 1), grad)
    return g.view(list(sizes))


trace_backward_symint = trace_backward


def diag_embed_backward(*a):
    not_implemented("diag_embed")


def fmap(seq, fn):
    return [fn(x) for x in seq]


def reverse_list(x):
    return list(reversed(list(x)))


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


def cumprod_backward(*a):
    not_implemented("cumprod")


def masked_scatter_backward(grad, mask, sizes):
    torch = _torch()
    diff_nelem = grad.numel() - int(torch.tensor(sizes).prod().item()) if sizes else 0
    mask_selected = grad.masked_select(mask)
    if diff_nelem > 0:
        zeros_fill = torch.zeros(diff_nelem, dtype=grad.dtype)
        mask_selected = torch.cat([mask_selected, zeros_fill], 0)
    return mask_selected.view(list(sizes))


masked_scatter_backward_symint = masked_scatter_backward


def index_reduce_backward(*a):
    not_implemented("index_reduce")


def scatter_reduce_backward(*a):
    not_implemented("scatter_reduce")


# --- convolution (upstream's convolution_backward kernel, written with convolutions) ---------

def _conv_weight_grad(x, gy, kernel, stride, padding, dilation, groups):
    """d(loss)/d(weight) of y = conv(x, w): per group, a convolution of the input (batch as
    channels) by the output gradient, with stride and dilation exchanged."""
    torch = _torch()
    cg = x.shape[1] // groups
    og = gy.shape[1] // groups
    parts = []
    for j in range(groups):
        xj = x.narrow(1, j * cg, cg).transpose(0, 1)
        gj = gy.narrow(1, j * og, og).transpose(0, 1)
        r = torch.ops.aten.convolution(xj, gj, None, list(dilation), list(padding), list(stride),
                                       False, [0] * len(kernel), 1)
        for d, k in enumerate(kernel):
            r = r.narrow(2 + d, 0, k)
        parts.append(r.transpose(0, 1))
    return parts[0] if groups == 1 else torch.cat(parts, 0)


def convolution_backward(grad, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, mask):
    torch = _torch()
    nd = input.dim() - 2

    def expand(p):
        p = list(p)
        return p * nd if len(p) == 1 else p

    stride, padding, dilation = expand(stride), expand(padding), expand(dilation)
    kernel = list(weight.shape[2:])
    gi = gw = gb = None
    if mask[0]:
        if not transposed:
            op = [input.shape[2 + i] - ((grad.shape[2 + i] - 1) * stride[i] - 2 * padding[i] +
                                        dilation[i] * (kernel[i] - 1) + 1) for i in range(nd)]
            gi = torch.ops.aten.convolution(grad, weight, None, stride, padding, dilation, True,
                                            op, groups)
        else:
            gi = torch.ops.aten.convolution(grad, weight, None, stride, padding, dilation, False,
                                            [0] * nd, groups)
    if mask[1]:
        if not transposed:
            gw = _conv_weight_grad(input, grad, kernel, stride, padding, dilation, groups)
        else:
            gw = _conv_weight_grad(grad, input, kernel, stride, padding, dilation, groups)
    if mask[2] and bias_sizes is not None:
        gb = grad.sum([0] + list(range(2, grad.dim())))
    return gi, gw, gb


convolution_backward_symint = convolution_backward


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


def _scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out,
                                                         logsumexp, dropout_p, is_causal,
                                                         attn_mask=None, scale=None):
    """Attention's gradient from the saved output and log-sum-exp (the math upstream's CPU
    flash kernel evaluates blockwise): P = exp(S - lse), dV = P^T dO, dS = P (dO V^T - rowsum(dO
    * O)), dQ = dS K scale, dK = dS^T Q scale."""
    torch = _torch()
    if dropout_p != 0.0:
        from ..refuse import TorchnativeNotImplementedError

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


def _pool_divisors(n_out, size, k, s, p, count_include_pad):
    """Per output position along one dimension: (window size counting padding, valid size)."""
    import numpy as np

    start = np.arange(n_out) * s - p
    end = np.minimum(start + k, size + p)
    padded = end - start
    valid = np.minimum(end, size) - np.maximum(start, 0)
    return padded, valid


def avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    """upstream's CPU avg_pool2d backward (AvgPoolKernel.cpp): each output's gradient divided
    by its window's divisor, spread over the window (a transposed convolution by ones)."""
    import numpy as np

    torch = _torch()
    kh, kw = (list(kernel_size) * 2)[:2] if len(kernel_size) == 1 else list(kernel_size)
    st = list(stride) if stride else [kh, kw]
    sh, sw = (st * 2)[:2] if len(st) == 1 else st
    ph, pw = (list(padding) * 2)[:2] if len(padding) == 1 else list(padding)
    H, W = self.shape[-2], self.shape[-1]
    OH, OW = grad.shape[-2], grad.shape[-1]
    if divisor_override:
        div = np.full((OH, OW), float(divisor_override))
    else:
        hp, hv = _pool_divisors(OH, H, kh, sh, ph, count_include_pad)
        wp, wv = _pool_divisors(OW, W, kw, sw, pw, count_include_pad)
        div = np.outer(hp, wp) if count_include_pad else np.outer(hv, wv)
    lead = list(grad.shape[:-2])
    g = grad / torch.from_numpy(div.astype(np.float64)).to(grad.dtype)
    g = g.reshape(-1, 1, OH, OW)
    ones = torch.ones(1, 1, kh, kw, dtype=grad.dtype)
    full = torch.ops.aten.convolution(g, ones, None, [sh, sw], [0, 0], [1, 1], True, [0, 0], 1)
    FH, FW = full.shape[-2], full.shape[-1]
    if FH < ph + H or FW < pw + W:
        full = torch.constant_pad_nd(full, [0, max(0, pw + W - FW), 0, max(0, ph + H - FH)])
    out = full.narrow(2, ph, H).narrow(3, pw, W)
    return out.reshape(lead + [H, W])
