"""nn.MultiheadAttention's inference fast path (transformers/attention.cpp):
_native_multi_head_attention, with the two kernels it is made of, _transform_bias_rescale_qkv and
_masked_softmax.

Self-attention without weights, mask or odd head size goes, as upstream's, through one packed
projection and scaled_dot_product_attention when that picks its flash kernel. Otherwise: the qkv
projection (one product for self-attention, q and kv for encoder-decoder, three otherwise), bias
added and q scaled by 1/sqrt(head dim), q k^T per head, a masked softmax (True = masked out; a
fully masked row gives NaN), the product with v, the output projection; the weights averaged
over heads when asked.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .support.common import arr, opmath, wrap
from ..dispatch.call import call
from ..ops.kernel_registry import kernel

_BOOL = D.BY_NAME["bool"]


@kernel("_transform_bias_rescale_qkv")
def transform_bias_rescale_qkv(qkv, qkv_bias, num_heads):
    b, t, d3 = qkv._size
    d = d3 // 3
    if d % num_heads != 0 or d3 % 3 != 0:
        raise RuntimeError("Expected D % num_head == 0 && _3D % 3 == 0")
    dh = d // num_heads
    dt = qkv._dtype
    cd = opmath(dt) if dt in D.REDUCED_FLOATING else D.numpy_dtype(dt)
    x = arr(qkv).astype(cd, copy=False) + arr(qkv_bias).astype(cd, copy=False)
    # (B, T, 3, nh, dh) -> (3, B, nh, T, dh)
    x = x.reshape(b, t, 3, num_heads, dh).transpose(2, 0, 3, 1, 4).copy()
    scale = cd.type(1.0) / np.sqrt(cd.type(dh))
    x[0] = x[0] * scale
    return tuple(wrap(np.ascontiguousarray(x[i]), dt) for i in range(3))


@kernel("_masked_softmax")
def masked_softmax(self, mask, dim=None, mask_type=None):
    if mask._dtype is not _BOOL:
        raise RuntimeError("Mask should be a boolean tensor")
    x = arr(self)
    m = arr(mask)
    nd = self.dim()
    dim = nd - 1 if dim is None else dim % max(nd, 1)
    kind = mask_type
    if m.ndim != 2 or nd != 4:
        kind = 2  # types 0 and 1 are only for 2-D masks over 4-D inputs
    if kind == 2:
        if tuple(self._size) != tuple(mask._size):
            raise RuntimeError("For mask_type == 2 mask shape should match input shape")
    elif kind == 1:
        if not (self._size[0] == m.shape[0] and self._size[2] == m.shape[1]):
            raise RuntimeError("For mask_type == 1 mask shape should be (B, L)")
        m = m[:, None, None, :]
    elif kind == 0:
        if not (self._size[2] == m.shape[0] and self._size[2] == m.shape[1]):
            raise RuntimeError("For mask_type == 0 mask shape should be (L, L)")
        m = m[None, None]
    else:
        raise RuntimeError("Mask Type should be defined")
    m = np.broadcast_to(m, x.shape)
    dt = self._dtype
    xc = x.astype(opmath(dt), copy=False)
    neg = np.where(m, -np.inf, xc)
    top = neg.max(axis=dim, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.where(m, 0, np.exp(neg - top))
        s = e.sum(axis=dim, keepdims=True)
        # a fully masked row is NaN, as upstream's CPU kernel leaves it (-inf - -inf)
        out = np.where(np.isneginf(top), np.nan, e / s)
    return wrap(out.astype(opmath(dt), copy=False), dt)


def _gemm_nt(x, w):
    return call("matmul", x, call("t", w))


def _qkv_projection(query, key, value, embed_dim, qkv_weight):
    if key is value:
        if query is key:
            return _gemm_nt(query, qkv_weight)
        wq, wkv = call("split_with_sizes", qkv_weight, [embed_dim, 2 * embed_dim], 0)
        return call("cat", [_gemm_nt(query, wq), _gemm_nt(key, wkv)], 2)
    wq, wk, wv = call("chunk", qkv_weight, 3, 0)
    return call("cat", [_gemm_nt(query, wq), _gemm_nt(key, wk), _gemm_nt(value, wv)], 2)


def _check(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias):
    if query.dim() != 3:
        raise RuntimeError(f"expected 3-D `query`, got {query.dim()}-D tensor")
    if query._size[2] != embed_dim:
        raise RuntimeError(f"passed-in embed_dim {embed_dim} didn't match last dim of query "
                           f"{query._size[2]}")
    if key.dim() != 3:
        raise RuntimeError(f"expected 3-D `key`, got {key.dim()}-D tensor")
    if value.dim() != 3:
        raise RuntimeError(f"expected 3-D `value`, got {value.dim()}-D tensor")
    if not (tuple(query._size) == tuple(key._size) == tuple(value._size)):
        raise RuntimeError("expected `query`/`key`/`value` shapes to match")
    if qkv_weight.dim() != 2:
        raise RuntimeError(f"expected 2-D `qkv_weight`, got {qkv_weight.dim()}-D tensor")
    if embed_dim * 3 != qkv_weight._size[0]:
        raise RuntimeError("expected `qkv_weight` first dim to be 3x embed_dim")
    if embed_dim != qkv_weight._size[1]:
        raise RuntimeError("expected `qkv_weight` second dim to be embed_Dim")
    if qkv_bias.dim() != 1:
        raise RuntimeError(f"expected 1-D `qkv_bias`, got {qkv_bias.dim()}-D tensor")
    if qkv_bias._size[0] != 3 * embed_dim:
        raise RuntimeError("expected `qkv_bias` first dim and first dim of query to be equal")
    if embed_dim % num_head != 0:
        raise RuntimeError("`embed_dim` must divide evenly by `num_heads`")


def _heads(t, b, num_head, dh):
    return call("transpose.int", call("view", t, [b, -1, num_head, dh]), 1, 2)


@kernel("_native_multi_head_attention")
def native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
                                proj_weight, proj_bias, mask=None, need_weights=True,
                                average_attn_weights=True, mask_type=None):
    _check(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias)
    dh = embed_dim // num_head
    b = query._size[0]
    if query is key and key is value and dh % 8 == 0 and not need_weights:
        q4 = _heads(query, b, num_head, dh)
        backend = call("_fused_sdp_choice", q4, q4, q4, mask, 0.0, False, enable_gqa=False)
        if mask is None and backend in (1, 2):  # flash or memory-efficient attention
            x = call("linear", query, qkv_weight, qkv_bias)
            q, k, v = (_heads(c, b, num_head, dh) for c in call("chunk", x, 3, -1))
            y = call("scaled_dot_product_attention", q, k, v, None, 0.0, False, scale=None)
            flat = call("reshape", call("transpose.int", y, 1, 2), [b, -1, embed_dim])
            return call("linear", flat, proj_weight, proj_bias), None
    qkv = _qkv_projection(query, key, value, embed_dim, qkv_weight)
    if qkv.numel() == 0:
        return call("empty_like", query), None
    q, k, v = call("_transform_bias_rescale_qkv", qkv, qkv_bias, num_head)
    t = q._size[2]
    scores = call("view", call("bmm", call("view", q, [b * num_head, t, dh]),
                               call("transpose.int", call("view", k, [b * num_head, t, dh]), 2, 1)),
                  [b, num_head, t, t])
    if mask is not None:
        if mask._dtype is not _BOOL:
            mask = call("to.dtype", mask, _BOOL)
        scores = call("_masked_softmax", scores, mask, scores.dim() - 1, mask_type)
    else:
        scores = call("_softmax", scores, scores.dim() - 1, False)
    ctx = call("view", call("bmm", call("view", scores, [b * num_head, t, t]),
                            call("view", v, [b * num_head, t, dh])), [b, num_head, t, dh])
    # transform_0213: (B, nh, T, dh) -> (B, T, nh * dh), then the output projection
    ctx = call("view", call("contiguous", call("permute", ctx, [0, 2, 1, 3])),
               [b, t, embed_dim])
    proj = call("view", call("linear", call("view", ctx, [b * t, embed_dim]), proj_weight,
                             proj_bias), [b, t, proj_weight._size[0]])
    if not need_weights:
        return proj, None
    if average_attn_weights:
        scores = call("div.Scalar", call("sum.dim_IntList", scores, [1]), num_head)
    return proj, scores
