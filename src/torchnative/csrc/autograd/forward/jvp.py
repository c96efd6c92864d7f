"""FunctionsManual.cpp's helpers that only forward formulas call (``*_jvp``...), written from
upstream's definitions (the normalizations from their derivatives: the same quantities, the same
reductions). Tangents of list inputs are read with ``levels.formula_tangent`` (the level whose
formulas run); an input without one counts as zero, as upstream's efficient zero tensors."""

from __future__ import annotations

from . import levels

# at::Reduction
Reduction_None, Reduction_Mean, Reduction_Sum = 0, 1, 2
CONSTANTS = {"Reduction_None": Reduction_None, "Reduction_Mean": Reduction_Mean,
             "Reduction_Sum": Reduction_Sum}


def _tangents(tensors):
    """The tangents of a tensor list, zeros for those without one; None when none has one."""
    import torch

    grads = [levels.formula_tangent(t) for t in tensors]
    if all(g is None for g in grads):
        return None
    return [g if g is not None else torch.zeros(t.shape, dtype=t.dtype)
            for t, g in zip(tensors, grads)]


def cat_jvp(tensors, dim):
    import torch

    grads = _tangents(tensors)
    return None if grads is None else torch.cat(grads, dim)


def stack_jvp(tensors, dim):
    import torch

    grads = _tangents(tensors)
    return None if grads is None else torch.stack(grads, dim)


def block_diag_jvp(tensors):
    import torch

    grads = _tangents(tensors)
    return None if grads is None else torch.block_diag(*grads)


def apply_loss_reduction(unreduced, reduction):
    if reduction == Reduction_Mean:
        return unreduced.mean()
    if reduction == Reduction_Sum:
        return unreduced.sum()
    return unreduced


def gather_with_keepdimed_indices(input, dim, indices, keepdim):
    idx = indices if keepdim else indices.unsqueeze(dim)
    out = input.gather(dim, idx)
    return out if keepdim else out.squeeze(dim)


def evenly_read_jvp(fw_grad, input, value):
    """The tangent of a value read from every place it occurs (median, max of all elements):
    the mean of the tangent over those places."""
    mask = input == value
    count = mask.sum()
    return (mask * (fw_grad / count)).sum()


def clamp_jvp(self_p, self_t, min_p, min_t, max_p, max_t):
    import torch

    if min_p is not None and max_p is not None:
        return torch.where(min_p > max_p, max_t,
                           torch.where(self_p < min_p, min_t,
                                       torch.where(self_p > max_p, max_t, self_t)))
    if min_p is not None:
        return torch.where(self_p > min_p, self_t, min_t)
    if max_p is not None:
        return torch.where(self_p < max_p, self_t, max_t)
    return self_t


def logsumexp_jvp(self_p, self_t, dim, keepdim):
    # exp-normalized: the weights of the softmax over dim
    e = (self_p - self_p.amax(dim, True)).exp() if self_p.numel() > 0 else self_p.exp()
    return (e * self_t).sum(dim, keepdim) / e.sum(dim, keepdim)


def safe_logsumexp_jvp(self_p, self_t, dim, keepdim):
    import torch

    lse = logsumexp_jvp(self_p, self_t, dim, keepdim)
    masked = self_p.eq(float("-inf")).all(dim[0] if len(dim) == 1 else dim, keepdim)
    return torch.where(masked, torch.zeros_like(lse), lse)


def logcumsumexp_jvp(self_p, self_t, dim):
    if self_p.numel() == 0:
        return self_t
    e = (self_p - self_p.amax(dim, True)).exp()
    return (e * self_t).cumsum(dim) / e.cumsum(dim)


def glu_jvp(glu, x, dx, dim):
    a_t, b_t = dx.chunk(2, dim)
    a, b = x.chunk(2, dim)
    sig_b = b.sigmoid()
    return a_t * sig_b + glu * (1 - sig_b) * b_t


def _normalized_jvp(x, x_t, mean, invstd, dims):
    """d/dt of (x - mean(x)) * invstd, invstd = (var(x) + eps)^-1/2, reduced over ``dims``."""
    xhat = (x - mean) * invstd
    t_c = x_t - x_t.mean(dims, True)
    return (t_c - xhat * (xhat * t_c).mean(dims, True)) * invstd, xhat


def _affine(out_t, xhat, weight_p, weight_t, bias_t, shape):
    if weight_p is not None:
        out_t = out_t * weight_p.reshape(shape)
    if weight_t is not None:
        out_t = out_t + xhat * weight_t.reshape(shape)
    if bias_t is not None:
        out_t = out_t + bias_t.reshape(shape)
    return out_t


def layer_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, saved_mean,
                   saved_invstd, normalized_shape):
    n = len(normalized_shape)
    axis = input_p.dim() - n
    view = list(input_p.shape[:axis]) + [1] * n
    dims = list(range(axis, input_p.dim()))
    out_t, xhat = _normalized_jvp(input_p, input_t, saved_mean.reshape(view),
                                  saved_invstd.reshape(view), dims)
    return _affine(out_t, xhat, weight_p, weight_t, bias_t, list(normalized_shape))


def batch_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, running_mean,
                   running_var, saved_mean, saved_invstd, train, eps):
    view = [1] * input_p.dim()
    view[1] = input_p.shape[1]
    dims = [d for d in range(input_p.dim()) if d != 1]
    if train:
        out_t, xhat = _normalized_jvp(input_p, input_t, saved_mean.reshape(view),
                                      saved_invstd.reshape(view), dims)
    else:
        if any(r is not None and levels.formula_tangent(r) is not None
               for r in (running_mean, running_var)):
            raise RuntimeError("batch_norm is not differentiable wrt running_mean and "
                               "running_var, they cannot have forward grad defined")
        invstd = (running_var + eps).rsqrt().reshape(view)
        out_t = input_t * invstd
        xhat = (input_p - running_mean.reshape(view)) * invstd
    return _affine(out_t, xhat, weight_p, weight_t, bias_t, view)


def group_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, saved_mean,
                   saved_invstd, groups):
    n, c = input_p.shape[0], input_p.shape[1]
    x = input_p.reshape(n, groups, -1)
    out_t, xhat = _normalized_jvp(x, input_t.reshape(n, groups, -1),
                                  saved_mean.reshape(n, groups, 1),
                                  saved_invstd.reshape(n, groups, 1), [2])
    view = [1] * input_p.dim()
    view[1] = c
    return _affine(out_t.reshape(input_p.shape), xhat.reshape(input_p.shape), weight_p,
                   weight_t, bias_t, view)


def group_norm_mean_jvp(input_t, mean_p, groups):
    """The tangent of each group's mean: the mean of the tangent over the group."""
    n = input_t.shape[0]
    return input_t.reshape(n, groups, -1).mean(-1).reshape(mean_p.shape)


def group_norm_invstd_jvp(input_p, input_t, mean_p, invstd_p, groups):
    """invstd = (var + eps)^-1/2 per group: d invstd = -invstd^3 mean((x_t - mean(x_t)) (x - mean))
    over the group."""
    n = input_p.shape[0]
    x = input_p.reshape(n, groups, -1)
    x_t = input_t.reshape(n, groups, -1)
    inv = invstd_p.reshape(n, groups, 1)
    t = ((x_t - x_t.mean(-1, True)) * (x - mean_p.reshape(n, groups, 1)) * -inv.pow(3)).mean(-1)
    return t.reshape(invstd_p.shape)


def convolution_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, stride, padding,
                    dilation, transposed, output_padding, groups):
    import torch

    conv = torch.ops.aten.convolution.default
    return conv(input_t, weight_p, None, stride, padding, dilation, transposed, output_padding,
                groups) + conv(input_p, weight_t, bias_t, stride, padding, dilation, transposed,
                               output_padding, groups)


def _convolution_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, stride, padding,
                     dilation, transposed, output_padding, groups, benchmark, deterministic,
                     cudnn_enabled, allow_tf32):
    return convolution_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, stride,
                           padding, dilation, transposed, output_padding, groups)


def IntArrayRef(values=()):
    """c10::IntArrayRef's constructor, as formulas spell an empty default (``IntArrayRef({})``)."""
    return list(values)


def amaxamin_jvp(x, dx, result, dim, keepdim):
    """amax/amin: the tangent averaged over the places holding the extreme value."""
    import torch

    from ..manual.reduction import restore_reduced_dims

    mask = x == restore_reduced_dims(result, dim, keepdim)
    return torch.where(mask, dx, 0.0).sum(dim, keepdim) / mask.sum(dim, keepdim)


def aminmax_jvp(x, dx, result, dim, keepdim):
    """aminmax's min or max (over ``dim``, or every element when None): the tangent averaged
    over the places holding the extreme value, as amax/amin's."""
    import torch

    if dim is None:
        mask = x == (result if keepdim or x.dim() == 0 else result.reshape([1] * x.dim()))
        out = torch.where(mask, dx, 0.0).sum() / mask.sum()
        return out.reshape(result.shape)
    return amaxamin_jvp(x, dx, result, [dim], keepdim)


def norm_jvp(self_p, self_t, p_, norm, dim=(), keepdim=True):
    import math

    import torch

    from ..manual.reduction import unsqueeze_multiple

    dim = list(dim) if dim is not None else []
    p = 2.0 if p_ is None else float(p_)
    if p == 0.0:
        return torch.zeros_like(norm)
    if p == 1.0:
        return torch.real(self_p.sgn() * self_t.conj()).sum(dim, keepdim)
    if p == 2.0:
        r = torch.real(self_p * self_t.conj()).sum(dim, keepdim)
        return (r / norm).masked_fill(norm == 0, 0)
    if math.isinf(p):
        if not keepdim and self_p.dim() != 0:
            norm = unsqueeze_multiple(norm, dim, self_p.dim())
        both_nan = self_p.isnan().logical_and(norm.isnan())
        is_max = (self_p.abs() == norm).logical_or(both_nan).type_as(norm)
        nb = is_max.count_nonzero(dim)
        if self_p.dim() != 0:
            nb = unsqueeze_multiple(nb, dim, self_p.dim())
        return (torch.real(self_p.sgn() * self_t.conj()) * is_max / nb).sum(dim, keepdim)
    if p < 1.0:
        s = (self_p.abs().pow(p - 1).masked_fill(self_p == 0, 0) *
             torch.real(self_p.sgn() * self_t.conj())).sum(dim, keepdim)
        return s * norm.pow(1 - p)
    if p < 2.0:
        s = (self_p.abs().pow(p - 1) * torch.real(self_p.sgn() * self_t.conj())).sum(dim, keepdim)
        return (s / norm.pow(p - 1)).masked_fill(norm == 0, 0)
    s = (self_p.abs().pow(p - 2) * torch.real(self_p * self_t.conj())).sum(dim, keepdim)
    return (s / norm.pow(p - 1)).masked_fill(norm == 0, 0)


def linalg_vector_norm_jvp(self_p, self_t, ord, norm, dim, keepdim):
    return norm_jvp(self_p, self_t, ord, norm, dim if dim is not None else [], keepdim)
