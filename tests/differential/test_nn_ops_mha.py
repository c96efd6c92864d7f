"""nn.MultiheadAttention's inference fast path (_native_multi_head_attention) against upstream
torch 2.13.0 in a separate process: self-attention with and without weights (averaged or per
head), key-padding and attention masks, encoder-decoder and separate key/value, a head size that
is not a multiple of 8, and the two kernels it is made of. Judged by the kernel golden harness
(tolerances derived from upstream's own float32-vs-float64 error)."""

from __future__ import annotations

import textwrap

from kernel_golden import golden_suite

CASES: list = []


def case(name, expr, setup="", *flags):
    CASES.append((name, "mha", textwrap.dedent(setup), expr, ["nograd", *flags]))


def mha(embed, heads, **kw):
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    return (f"T.manual_seed(0); m = T.nn.MultiheadAttention({embed}, {heads}, batch_first=True"
            f"{', ' + args if args else ''}).to(mk.dt('float32')).eval()\n"
            f"q = mk.randn(2, 5, {embed}); k = mk.randn(2, 5, {embed}); v = mk.randn(2, 5, {embed})\n"
            "kpm = T.tensor([[False] * 4 + [True], [False] * 5])\n"
            "am = T.triu(T.ones(5, 5, dtype=T.bool), 1)\n")


case("self_no_weights", "m(q, q, q, need_weights=False)", mha(16, 2))
case("self_weights", "m(q, q, q)", mha(16, 2))
case("self_weights_per_head", "m(q, q, q, average_attn_weights=False)", mha(16, 4))
case("key_padding_mask", "m(q, q, q, key_padding_mask=kpm)", mha(16, 2))
case("key_padding_mask_no_weights", "m(q, q, q, key_padding_mask=kpm, need_weights=False)",
     mha(16, 2))
case("attn_mask", "m(q, q, q, attn_mask=am, need_weights=False)", mha(16, 2))
case("attn_and_padding_mask", "m(q, q, q, attn_mask=am, key_padding_mask=kpm)", mha(16, 2))
case("float_key_padding_mask", "m(q, q, q, key_padding_mask=kpm.float() * -1e9)", mha(16, 2))
case("encoder_decoder", "m(q, k, k)", mha(16, 2))
case("separate_kv", "m(q, k, v, need_weights=False)", mha(16, 2))
case("head_dim_4", "m(q, q, q, need_weights=False)", mha(8, 2))
case("no_bias_sequence_first", "m(x, x, x)",
     "T.manual_seed(0); m = T.nn.MultiheadAttention(16, 2).to(mk.dt('float32')).eval()\n"
     "x = mk.randn(5, 3, 16)")
case("masked_softmax_padding", "T._masked_softmax(x, msk, 3, 1)",
     "x = mk.randn(2, 3, 4, 4); msk = T.tensor([[False, True, False, True], [True] * 4])")
case("masked_softmax_full", "T._masked_softmax(x, msk)",
     "x = mk.randn(2, 5); msk = T.tensor([[False, True, False, True, True], [True] * 5])")
case("transform_bias_rescale_qkv", "T._transform_bias_rescale_qkv(x, b, 2)",
     "x = mk.randn(2, 3, 12); b = mk.randn(12)")
case("bad_query_dim", "m(q[0], q, q)", mha(16, 2).replace("batch_first=True", "batch_first=False"))

_G, golden, test_agrees_with_upstream = golden_suite(CASES, "mha_golden")


def test_the_fast_path_is_taken():
    """The module reaches _native_multi_head_attention (not the Python path) in eval/no_grad;
    a control shows training mode does not."""
    import torch

    from prelude import tracing

    m = torch.nn.MultiheadAttention(16, 2, batch_first=True).eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad(), tracing() as ops:
        m(x, x, x)
    assert "aten._native_multi_head_attention.default" in ops
    m.train()
    with torch.no_grad(), tracing() as ops:
        m(x, x, x)
    assert "aten._native_multi_head_attention.default" not in ops
