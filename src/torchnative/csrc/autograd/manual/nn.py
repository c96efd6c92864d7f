"""FunctionsManual.cpp helpers for nn operators: softmax, normalisation, losses, pooling,
embedding and convolution (Convolution.cpp's double backward)."""

from __future__ import annotations

import math

from ..cpp_shims import _torch, not_implemented


def embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    if sparse:
        from ...core.refuse import TorchnativeNotImplementedError

        raise TorchnativeNotImplementedError("embedding backward with sparse=True",
                                             "torchnative has no sparse tensors")
    return _torch().ops.aten.embedding_dense_backward(grad, indices, num_weights, padding_idx,
                                                      scale_grad_by_freq)


embedding_backward_symint = embedding_backward


def softmax_double_backward(grad, grad_output, dim, output):
    return grad_output * grad - (output * grad_output).sum(dim, True) * grad - \
        grad_output * (output * grad).sum(dim, True)


def log_softmax_double_backward(grad, grad_output, dim, output):
    z = output.exp()
    return z * grad_output.sum(dim, True) * ((grad * z).sum(dim, True) - grad)


def binary_cross_entropy_with_logits_backward(grad, input, target, weight, pos_weight,
                                              reduction):
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


def _fused_rms_norm_backward_py(*a):
    not_implemented("_fused_rms_norm")


def infinitely_differentiable_native_rms_norm_backward(dY, drstd, input, normalized_shape,
                                                        rstd, weight, output_mask):
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
    size = list(indices.shape[:-dim]) + [-1]
    idx = indices.reshape(size)
    return grad.reshape(size).gather(-1, idx).view(indices.shape)


def _euclidean_dist_backward(*a):
    not_implemented("_euclidean_dist")


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


def grid_sampler_2d_double_backward(ggI, ggG, grad_output, input, grid, interpolation_mode,
                                    padding_mode, align_corners, output_mask):
    """The derivative of grid_sampler_2d_backward in (grad_output, input, grid) along (ggI,
    ggG), taken through upstream's Python decomposition of the sampler: the second derivative
    this pass computed before the sampler had kernels (upstream's own helper is not ported)."""
    torch = _torch()
    from torch._decomp import decomposition_table

    sample = decomposition_table[torch.ops.aten.grid_sampler_2d.default]
    with torch.enable_grad():
        go, x, g = (t.detach().requires_grad_() for t in (grad_output, input, grid))
        y = sample(x, g, interpolation_mode, padding_mode, align_corners)
        firsts = torch.autograd.grad(y, (x, g), go, create_graph=True, allow_unused=True)
        terms = [(d * w).sum() for d, w in zip(firsts, (ggI, ggG))
                 if d is not None and w is not None and d.requires_grad]
        if not terms:
            return None, None, None
        seconds = torch.autograd.grad(sum(terms), (go, x, g), allow_unused=True)
    return tuple(r if m else None for r, m in zip(seconds, output_mask))


def binary_cross_entropy_target_backward(grad, self, target, weight, reduction):
    """d loss / d target = -logit(x), times grad (and the weight), in place as upstream's."""
    g = _torch().logit(self).neg_()
    g.mul_(grad)
    if weight is not None:
        g.mul_(weight)
    if reduction == 1:
        g.div_(target.numel())
    return g


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


def mse_loss_double_backward(grad, input, reduction):
    g = 2 * grad
    return g / input.numel() if reduction == 1 else g


def error_for_max_pool2d_double_backward():
    raise RuntimeError("max_pool2d with `return_indices=False` is not infinitely differentiable. "
                       "If you want to calculate higher order derivatives, e.g. second order, set "
                       "`return_indices=True`.")


kCudnnDoubleBackwardMsg = "Double backwards is not supported for CuDNN RNNs due to limitations " \
    "in the CuDNN API. To run double backwards, please disable the CuDNN backend temporarily " \
    "while running the forward pass of your RNN."


def _trilinear_backward(grad_out, i1, i2, i3, expand1, expand2, expand3, sumdim, grad_mask):
    """Each input's gradient is the same contraction with grad_out in its place: grad_out takes
    the summed dimensions and the input's own expansions become the ones summed."""
    trilinear = _torch().ops.aten._trilinear
    if grad_out is None:
        return None, None, None
    g1 = trilinear(grad_out, i2, i3, sumdim, expand2, expand3, expand1) if grad_mask[0] else None
    g2 = trilinear(i1, grad_out, i3, expand1, sumdim, expand3, expand2) if grad_mask[1] else None
    g3 = trilinear(i1, i2, grad_out, expand1, expand2, sumdim, expand3) if grad_mask[2] else None
    return g1, g2, g3
