"""FunctionsManual.cpp helpers for reductions, scans and scatter/index reductions."""

from __future__ import annotations

import math

from ...core.grad_mode import TLS as _GRAD
from ...dispatch.call import call
from ..cpp_shims import _dims, _torch, m_conj, maybe_wrap_dim


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
    """at::sum_to; its operators called as the C++ one calls them (through the door, not the
    Python bindings): it runs for every broadcast gradient."""
    shape = tuple(shape)
    if len(shape) == 0:
        return call("sum", tensor)
    sizes = tensor._size
    ndim = len(sizes)
    lead = ndim - len(shape)
    reduce = list(range(lead))
    for i in range(lead, ndim):
        if shape[i - lead] == 1 and sizes[i] != 1:
            reduce.append(i)
    if reduce:
        tensor = call("sum.dim_IntList", tensor, reduce, True)
    if always_return_non_view:
        return call("clone", call("reshape", tensor, list(shape)) if lead > 0 else tensor)
    return call("view", tensor, list(shape)) if lead > 0 else tensor


def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    torch = _torch()
    if not keepdim and len(sizes) > 0:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return torch.zeros(list(sizes), dtype=grad.dtype).scatter(dim, indices, grad)


value_selecting_reduction_backward_symint = value_selecting_reduction_backward


def evenly_distribute_backward(grad, input, value):
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


def linalg_vector_norm_backward(grad, self, scalar_ord, norm, dim, keepdim):
    ord = float(scalar_ord)
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if ord == 0.0:  # the count of nonzeros is piecewise constant: no gradient (None), as upstream
        return None
    if ord == 1.0:
        return self.sgn() * unsqueeze_multiple(grad, dims, self.dim()) if not keepdim and dims \
            else self.sgn() * (grad if keepdim or not dims else grad)
    return norm_backward(grad, self, scalar_ord, norm, dims, keepdim)


def norm_backward(grad, self, p_, norm, dim=(), keepdim=True):  # (grad, self, p, norm): dist
    p = 2.0 if p_ is None else float(p_)
    dim = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if not keepdim and self.dim() != 0 and len(dim) > 0:
        grad = unsqueeze_multiple(grad, dim, self.dim())
        norm = unsqueeze_multiple(norm, dim, self.dim())
    if p == 0.0:  # piecewise constant: no gradient (None), as upstream
        return None
    if p == 1.0:
        return self.sgn() * grad
    if p == 2.0:
        return grad * (self / norm).masked_fill_(norm == 0, 0)
    if math.isinf(p):
        sgn = self.sgn()
        self_abs = self.abs()
        mask = (self_abs == norm).logical_or(self_abs.isnan())  # amax's derivative, NaN propagating
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


def trace_backward(grad, sizes):
    torch = _torch()
    n = sizes[0] * sizes[1]
    g = torch.zeros(n, dtype=grad.dtype)
    diag = torch.arange(min(sizes[0], sizes[1]), dtype=torch.int64) * (sizes[1] + 1)  # non-square too
    g = g.index_fill(0, diag, grad)
    return g.view(list(sizes))


trace_backward_symint = trace_backward


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
            from ...core.refuse import TorchnativeNotImplementedError

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


def nansum_backward(grad, self, dims, keepdim):
    return sum_backward(grad, tuple(self.shape), dims, keepdim) * self.isnan().logical_not()
