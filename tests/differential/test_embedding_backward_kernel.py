"""embedding_dense_backward as a kernel (nn_embed_backward.py), against upstream torch 2.13.0 in
separate processes, bit for bit: rows sharing an index added in index order in the grad's dtype
(float16/bfloat16 rounded at every add), padding_idx, scale_grad_by_freq (alpha rounded to the
dtype; fused multiply-adds in the SIMD lanes), out-of-range indices skipped, integer, bool and
complex grads, NaN/inf (bfloat16 NaN bits by lane), index dtypes and shape errors, and
nn.Embedding's weight gradient through autograd. Control: the float64 sum rounded once.
"""

from __future__ import annotations

import pytest

from test_glu_kernel import PROFILES, agree_under

PROGRAM = r"""

idx = torch.tensor([3, 1, 3, 0, 7, 3, 1, 2, 3, 5, 0, 3])
g = torch.randn(12, 70) * 3
g[4, :3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
g[0, 65:] = float("nan")
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    for freq in (False, True):
        for pad in (-1, 3, 0):
            case(f"{dt} freq={freq} pad={pad}", lambda: A.embedding_dense_backward(
                g.to(dt), idx, 9, pad, freq))
    case(f"{dt} narrow freq", lambda: A.embedding_dense_backward(g[:, :5].to(dt), idx, 9, -1, True))
for dt in (torch.int64, torch.int32, torch.uint8, torch.bool, torch.complex64):
    for freq in (False, True):
        case(f"{dt} freq={freq}", lambda: A.embedding_dense_backward(
            (g * 10).to(dt), idx, 9, -1, freq))
case("int32 indices", lambda: A.embedding_dense_backward(g, idx.int(), 9, 1, True))
case("float indices", lambda: A.embedding_dense_backward(g, idx.float(), 9, 1, True))
case("2-d indices", lambda: A.embedding_dense_backward(g.reshape(3, 4, 70), idx.reshape(3, 4), 9,
                                                       -1, False))
case("out of range ignored", lambda: A.embedding_dense_backward(g[:3], torch.tensor([1, 12, -1]),
                                                                9, -1, False))
case("shape mismatch", lambda: A.embedding_dense_backward(g[:5], idx, 9, -1, False))
case("transposed grad", lambda: A.embedding_dense_backward(torch.randn(70, 12).t(), idx, 9, -1,
                                                           False))
case("empty", lambda: A.embedding_dense_backward(torch.randn(0, 4), idx[:0], 5, -1, False))
case("no embeddings", lambda: A.embedding_dense_backward(torch.randn(0, 4), idx[:0], 0, -1, True))
gd, idd = torch.randn(300, 40), torch.randint(0, 4, (300,))
case("many duplicates", lambda: A.embedding_dense_backward(gd, idd, 4, -1, False))
case("many duplicates freq", lambda: A.embedding_dense_backward(gd, idd, 4, -1, True))
emb = torch.nn.Embedding(9, 70, padding_idx=2)
case("nn.Embedding grad", lambda: torch.autograd.grad(emb(idx.reshape(3, 4)).pow(2).sum(),
                                                       emb.weight)[0])
emb2 = torch.nn.Embedding(9, 70, scale_grad_by_freq=True)
case("nn.Embedding freq grad", lambda: torch.autograd.grad(
    (emb2(idx) * g).sum(), emb2.weight)[0])
embh = torch.nn.Embedding(9, 40).bfloat16()
case("nn.Embedding bf16 grad", lambda: torch.autograd.grad(
    (embh(idx) * g[:, :40].bfloat16()).sum(), embh.weight)[0])
for w in (5, 40, 64, 70, 100):
    for dt in (torch.bfloat16, torch.float16):
        gw = torch.randn(6, w).to(dt)
        gw[1, ::3] = float("nan")
        iw = torch.tensor([0, 1, 0, 0, 2, 1])
        case(f"width {w} {dt}", lambda: A.embedding_dense_backward(gw, iw, 3, -1, False))
        case(f"width {w} {dt} freq", lambda: A.embedding_dense_backward(gw, iw, 3, -1, True))
# control: rows sharing an index summed pairwise in float64, then rounded
case("control-float64-sum", lambda: A.embedding_dense_backward(g.double(), idx, 9, -1,
                                                                False).float())
"""


@pytest.mark.parametrize("profile", PROFILES)
def test_bits_agree_with_upstream(profile):
    agree_under(profile, PROGRAM, "control-float64-sum", "torch.float32 freq=False pad=-1", 60)
