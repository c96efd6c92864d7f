"""Backward of scaled dot-product attention (upstream's flash-attention CPU kernel's backward)."""

from __future__ import annotations

import math

from ..cpp_shims import _torch, _without_derivative


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
        from ...core.refuse import TorchnativeNotImplementedError

        raise TorchnativeNotImplementedError(
            "_scaled_dot_product_flash_attention_for_cpu_backward with dropout",
            "the dropout mask of the forward is not recorded")
    E = query.size(-1)
    s = 1.0 / math.sqrt(E) if scale is None else scale
    # 16-bit inputs: the kernel's arithmetic is float32 (its log-sum-exp is float32 too), its
    # gradients are rounded to the inputs' dtypes once at the end
    dtypes = query.dtype, key.dtype, value.dtype
    if query.dtype in (torch.bfloat16, torch.float16):
        query, key, value, grad_out, out = (t.float() for t in (query, key, value, grad_out, out))
    # grouped key/value heads (enable_gqa): each key/value head serves hq // hk query heads; its
    # gradient is the sum over the query heads of its group
    hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
    if hk != hq:
        key = key.repeat_interleave(hq // hk, dim=-3)
    if hv != hq:
        value = value.repeat_interleave(hq // hv, dim=-3)
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
    if hk != hq:
        dk = dk.unflatten(-3, (hk, hq // hk)).sum(-3)
    if hv != hq:
        dv = dv.unflatten(-3, (hv, hq // hv)).sum(-3)
    return dq.to(dtypes[0]), dk.to(dtypes[1]), dv.to(dtypes[2])
