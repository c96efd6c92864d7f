"""embedding_renorm_ (F.embedding with max_norm) against upstream, bit for bit: the four floating
dtypes, several norm orders and bounds, repeated and int32 indices, and upstream's errors."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = ep.program(r"""
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    for p in (2.0, 1.0, 3.5, float("inf")):
        for mx in (0.5, 2.0):
            g = torch.Generator().manual_seed(1)
            w = (torch.randn(10, 4, generator=g) * 2).to(dt)
            idx = torch.tensor([[3, 1, 3], [9, 0, 1]])
            rec(f"{dt} p{p} max{mx} emb", lambda: F.embedding(idx, w, max_norm=mx, norm_type=p))
            rec(f"{dt} p{p} max{mx} weight", lambda: w)
            w2 = (torch.randn(10, 4, generator=g) * 2).to(dt)
            rec(f"{dt} p{p} max{mx} direct", lambda: torch.embedding_renorm_(w2, idx.int(), mx, p))
w = torch.randn(5, 3, generator=torch.Generator().manual_seed(2))
rec("1-d", lambda: torch.embedding_renorm_(w[0], torch.tensor([0]), 1.0, 2.0))
rec("float idx", lambda: torch.embedding_renorm_(w, torch.tensor([0.]), 1.0, 2.0))
rec("oob", lambda: torch.embedding_renorm_(w, torch.tensor([5]), 1.0, 2.0))
rec("neg", lambda: torch.embedding_renorm_(w, torch.tensor([-1]), 0.1, 2.0))
""")

PROGRAM = ep.register(__name__, PROGRAM)


def test_embedding_renorm_agrees_bit_for_bit():
    up = ep.agreeing(PROGRAM)
    # controls: the bound changes the rows, and a half row is scaled by a half-rounded scale
    # (a float scale would give other bits: the case this test exists for)
    assert ep.distinct(up, "torch.float32 p2.0 max0.5 weight", "torch.float32 p2.0 max2.0 weight")
    assert ep.distinct(up, "torch.float16 p2.0 max0.5 direct", "torch.float16 p2.0 max2.0 direct")
