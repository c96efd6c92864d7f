"""Kernel layers in the contract's shape: stateless ``nn.Module`` subclasses whose ``forward``
takes the parameters of the layer it replaces and reads that layer's own attributes."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from . import _ops


def _needs_grad(*tensors) -> bool:
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


_PLAIN = (torch.Tensor, nn.Parameter)


def _direct(op, *tensors) -> bool:
    """May the layer run ``op``'s kernel function itself? Calling the operator costs more than
    a decode step's kernel (the custom-op wrappers, the dispatcher, the aliasing check), and
    gives the same tensor where no gradient is needed and nothing watches the dispatch: no
    dispatch or function mode, no functorch transform, no profiler, no tracing compiler, no
    autocast, no CPU kernel registered over the operator's own, every tensor a plain dense CPU
    tensor (a Parameter is one). Anywhere else the operator runs (through autograd when a
    gradient is needed), so modes, subclasses, fake and meta tensors meet it as before."""
    C = torch._C
    if (C._len_torch_dispatch_stack() or C._is_torch_function_mode_enabled() or
            C._are_functorch_transforms_active() or torch.autograd.profiler._is_profiler_enabled
            or torch.compiler.is_compiling() or torch.is_autocast_enabled("cpu")):
        return False
    grad = torch.is_grad_enabled()
    for t in tensors:
        if t is not None and (type(t) not in _PLAIN or t.device.type != "cpu" or
                              t.layout is not torch.strided or grad and t.requires_grad):
            return False
    return not C._dispatch_has_kernel_for_dispatch_key(op._qualname, "CPU")


class _RMSNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        ctx.save_for_backward(x, weight)
        ctx.eps = eps
        return _ops.rms_norm(x, weight, eps)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        dx, dw = _ops.rms_norm_backward(grad, x, weight, ctx.eps)
        return dx, dw, None


class _RotaryFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, cos, sin, unsqueeze_dim):
        ctx.save_for_backward(q, k, cos, sin)
        ctx.unsqueeze_dim = unsqueeze_dim
        return tuple(_ops.rotary(q, k, cos, sin, unsqueeze_dim))

    @staticmethod
    def backward(ctx, gq, gk):
        q, k, cos, sin = ctx.saved_tensors
        gq = torch.zeros_like(q) if gq is None else gq
        gk = torch.zeros_like(k) if gk is None else gk
        return (*_ops.rotary_backward(gq, gk, q, k, cos, sin, ctx.unsqueeze_dim), None)


class _SiluFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _ops.silu(x)

    @staticmethod
    def backward(ctx, grad):
        return _ops.silu_backward(grad, ctx.saved_tensors[0])


class _SiluAndMulFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _ops.silu_and_mul(x)

    @staticmethod
    def backward(ctx, grad):
        return _ops.silu_and_mul_backward(grad, ctx.saved_tensors[0])


class _AttentionFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, mask, scaling, causal):
        ctx.save_for_backward(q, k, v, mask)
        ctx.scaling, ctx.causal = scaling, causal
        return _ops.attention(q, k, v, mask, scaling, causal)

    @staticmethod
    def backward(ctx, grad):
        q, k, v, mask = ctx.saved_tensors
        dq, dk, dv = _ops.attention_backward(grad, q, k, v, mask, ctx.scaling, ctx.causal)
        return dq, dk, dv, None, None, None


class RMSNorm(nn.Module):
    """Replaces a Llama-style RMSNorm (``weight``, ``variance_epsilon``): one operator."""
    has_backward = True
    can_torch_compile = False

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        weight = self.weight  # a module attribute lookup each time it is read
        if _direct(_ops.rms_norm, hidden_states, weight):
            return _ops._rms_norm(hidden_states, weight, self.variance_epsilon)
        if _needs_grad(hidden_states, weight):
            return _RMSNormFn.apply(hidden_states, weight, self.variance_epsilon)
        return _ops.rms_norm(hidden_states, weight, self.variance_epsilon)


class RotaryPosEmb(nn.Module):
    """Replaces ``apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1)``: one operator."""
    has_backward = True
    can_torch_compile = False

    def forward(self, q, k, cos, sin, unsqueeze_dim=1):
        if _direct(_ops.rotary, q, k, cos, sin):
            return tuple(_ops._rotary(q, k, cos, sin, unsqueeze_dim))
        if _needs_grad(q, k, cos, sin):
            return _RotaryFn.apply(q, k, cos, sin, unsqueeze_dim)
        return tuple(_ops.rotary(q, k, cos, sin, unsqueeze_dim))


class SiLU(nn.Module):
    has_backward = True
    can_torch_compile = False

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if _direct(_ops.silu, input):
            return _ops._silu(input)
        if _needs_grad(input):
            return _SiluFn.apply(input)
        return _ops.silu(input)


class SiluAndMul(nn.Module):
    """``silu(x[..., :d]) * x[..., d:]`` with ``d`` half the last dimension."""
    has_backward = True
    can_torch_compile = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if _direct(_ops.silu_and_mul, x):
            return _ops._silu_and_mul(x)
        if _needs_grad(x):
            return _SiluAndMulFn.apply(x)
        return _ops.silu_and_mul(x)


# A call without a gradient whose scores per head (queries x keys) outnumber this runs torch's
# sdpa: the operator's float64 copies of the keys and values, and its scores, grow with them (a
# decode step: about even at 128 keys, sdpa ahead from 256, bench/attention_keys.py). A shorter
# call keeps the operator, which is also the faster there and rounds once: a few-token prompt's
# float32 products through OpenBLAS's AVX2 kernels err about twice as much as through its AVX-512
# small-matrix path, past upstream's own error on such a call. A rule of the shape, never a timing.
_OPERATOR_SCORES = 128


def _sdpa(q, k, v, mask, scaling, causal):
    """No gradient and more scores than ``_OPERATOR_SCORES`` (a prefill, a long cache): torch's
    own scaled dot product attention, whose kernel walks the scores a block at a time, where the
    operator's one numpy pass would hold every score (and its mask and exponential) of a long
    prompt in float64 at once. Causality is aligned to the last key, as the operator's. With a
    gradient the operator runs: its float64 backward keeps the cancellations (a first query's
    one key) exact that a float32 one does not."""
    lq, lk = q.shape[-2], k.shape[-2]
    if lq == 1:
        causal = False   # one query aligned to the last key sees every key: nothing to hide
    elif causal and mask is None and lq == lk:
        mask, causal = None, True
    elif causal:
        tri = torch.ones(lq, lk, dtype=torch.bool, device=q.device).tril(lk - lq)
        mask, causal = (tri if mask is None else mask & tri), False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scaling,
                                         enable_gqa=q.shape[1] != k.shape[1])
    return out.transpose(1, 2).contiguous()


def attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers' attention interface with its sdpa function's semantics, over one operator
    (a longer call without a gradient: ``_sdpa``). ``attention_mask`` is a boolean mask broadcastable to (batch, heads, queries, keys), True
    where a query may attend (transformers' sdpa mask), which then decides alone; or a 2-D
    padding mask (batch, keys), to which causality is added; or None, when causality (from
    ``is_causal``, else ``module.is_causal``) applies to more than one query."""
    if dropout and module.training:
        raise NotImplementedError("torchnative-cpu attention: dropout during training")
    scaling = query.shape[-1] ** -0.5 if scaling is None else float(scaling)
    causal = bool(kwargs.get("is_causal", getattr(module, "is_causal", True)))
    mask = attention_mask
    if mask is not None:
        if mask.dim() == 2:
            mask = mask.to(torch.bool)[:, None, None, :]
        elif mask.dim() == 4 and mask.dtype == torch.bool:
            causal = False
        else:
            raise NotImplementedError("torchnative-cpu attention: a mask that is neither boolean "
                                      f"4-D nor a 2-D padding mask ({mask.dim()}-D {mask.dtype})")
        if mask.shape[-1] != key.shape[-2]:
            raise NotImplementedError("torchnative-cpu attention: a mask covering fewer keys than "
                                      "the cache holds (a static cache)")
    if _needs_grad(query, key, value):
        return _AttentionFn.apply(query, key, value, mask, scaling, causal), None
    if query.shape[-2] * key.shape[-2] > _OPERATOR_SCORES:
        return _sdpa(query, key, value, mask, scaling, causal), None
    if _direct(_ops.attention, query, key, value, mask):
        return _ops._attention(query, key, value, mask, scaling, causal), None
    return _ops.attention(query, key, value, mask, scaling, causal), None
