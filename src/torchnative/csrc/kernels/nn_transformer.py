"""nn.TransformerEncoderLayer's inference fast path (transformers/transformer.cpp):
_transformer_encoder_layer_fwd on dense inputs.

The layer is composed of the operators upstream's kernel calls, in its order, so each rounds as
upstream's: the optional first norm, _native_multi_head_attention (self-attention, no weights),
the residual added in place, the norm, the feed-forward block (an addmm fused with relu or gelu,
then an addmm), the second residual in place, the norm. An empty input comes back as a clone.
"""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import kernel


def _norm(x, embed_dim, eps, weight, bias):
    return call("layer_norm", x, [embed_dim], weight, bias, eps, True)


def _linear_for_ffn(bias, mat1, weight, use_gelu):
    """bias + mat1 @ weight^T over the flattened batch; ``use_gelu`` None: no activation."""
    s0, s1, s2 = mat1._size
    flat = call("view", mat1, [s0 * s1, s2])
    wt = call("t", weight)
    if use_gelu is None:
        out = call("addmm", bias, flat, wt)
    else:
        out = call("_addmm_activation", bias, flat, wt, beta=1, alpha=1, use_gelu=use_gelu)
    return call("view", out, [s0, s1, -1])


def _ffn(x, w1, b1, w2, b2, use_gelu):
    if x.dim() != 3:
        raise RuntimeError("batched input size should be 3")
    if w1.dim() != 2 or w2.dim() != 2:
        raise RuntimeError("2d weights expected")
    return _linear_for_ffn(b2, _linear_for_ffn(b1, x, w1, use_gelu), w2, None)


@kernel("_transformer_encoder_layer_fwd")
def transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                  proj_bias, use_gelu, norm_first, eps, norm_weight_1,
                                  norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1,
                                  ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None,
                                  mask_type=None):
    if src.numel() == 0:
        return call("clone", src)
    x = src
    if norm_first:
        x = _norm(x, embed_dim, eps, norm_weight_1, norm_bias_1)
    x = call("_native_multi_head_attention", x, x, x, embed_dim, num_heads, qkv_weight,
             qkv_bias, proj_weight, proj_bias, mask, False, True, mask_type)[0]
    call("add_.Tensor", x, src)
    if not norm_first:
        x = _norm(x, embed_dim, eps, norm_weight_1, norm_bias_1)
    residual = x
    if norm_first:
        x = _norm(x, embed_dim, eps, norm_weight_2, norm_bias_2)
    x = _ffn(x, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, use_gelu)
    call("add_.Tensor", x, residual)
    if not norm_first:
        x = _norm(x, embed_dim, eps, norm_weight_2, norm_bias_2)
    return x
