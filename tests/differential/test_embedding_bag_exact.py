"""embedding_bag against upstream, bit for bit, in the four floating dtypes and three modes:
with per_sample_weights on the float fast path each weighted row is fused into the bag's sum
(fbgemm's EmbeddingSpMDM), in index order; padding_idx, include_last_offset, strided indices."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = ep.program(r"""
g = torch.Generator().manual_seed(0)
for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
    w = torch.randn(10, 5, generator=g).to(dt)
    idx = torch.randint(0, 10, (12,), generator=g)
    offs = torch.tensor([0, 3, 3, 7])
    psw = torch.randn(12, generator=g).to(dt)
    for mode in ("sum", "mean", "max"):
        rec(f"{dt} {mode}", lambda: F.embedding_bag(idx, w, offs, mode=mode))
    rec(f"{dt} sum psw", lambda: F.embedding_bag(idx, w, offs, mode="sum", per_sample_weights=psw))
    rec(f"{dt} sum psw strided idx", lambda: F.embedding_bag(torch.randint(0, 10, (24,), generator=g)[1::2], w, offs, mode="sum", per_sample_weights=psw))
    rec(f"{dt} sum psw pad", lambda: F.embedding_bag(idx, w, offs, mode="sum", per_sample_weights=psw, padding_idx=2))
    rec(f"{dt} sum psw last", lambda: F.embedding_bag(idx, w, torch.tensor([0, 3, 3, 7, 12]), mode="sum", per_sample_weights=psw, include_last_offset=True))
# the same weighted sums unfused (each product rounded, then added), for the control
g = torch.Generator().manual_seed(0)
w = torch.randn(10, 5, generator=g)
idx = torch.randint(0, 10, (12,), generator=g)
psw = torch.randn(12, generator=g)
bags = []
for lo, hi in ((0, 3), (3, 3), (3, 7), (7, 12)):
    acc = torch.zeros(5)
    for k in range(lo, hi):
        acc = acc + psw[k] * w[idx[k]]
    bags.append(acc)
out["unfused"] = torch.stack(bags).double().tolist()
""")

PROGRAM = ep.register(__name__, PROGRAM)


def test_embedding_bag_agrees_bit_for_bit():
    up = ep.agreeing(PROGRAM)
    # control: rounding each weighted row before adding gives other bits upstream
    assert ep.distinct(up, "unfused", "torch.float32 sum psw")
