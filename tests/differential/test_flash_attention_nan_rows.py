"""The flash attention kernel's rows with NaN scores, as upstream's CPU kernel treats them without
a mask: a block's maximum passes over a NaN among the keys past its last whole vector, and a
block whose maximum is then -inf is skipped, so such a row ends as a fully masked one (output
0, logsumexp 0), while a NaN among whole vectors, or beside a finite score, makes the row NaN.
Compared with upstream in separate processes: which outputs are NaN and which are exactly 0,
over key counts around the vector widths and past the 512-key block, causal or not, in float32
and float64."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = ep.program(r"""
f = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
torch.manual_seed(0)
for s in (4, 15, 16, 17, 20, 33, 520, 600):
    for placement in ("tail", "vector", "both", "none"):
        for dt in (torch.float32, torch.float64):
            for causal in (False, True):
                lq = s if causal else 3
                # row 0 ordinary; the others' scores are -inf (q = [inf, 0, ...], k[:, 0] < 0)
                q = torch.zeros(1, 1, lq, 8, dtype=dt)
                q[0, 0, :, 0] = float("inf")
                q[0, 0, 0] = torch.randn(8, dtype=dt)
                k = torch.randn(1, 1, s, 8, dtype=dt)
                k[..., 0] = -k[..., 0].abs() - 0.1
                v = torch.randn(1, 1, s, 8, dtype=dt)
                for n in range(0, s, 512):
                    kb = min(512, s - n)
                    if placement in ("tail", "both") and kb % 8:
                        k[0, 0, n + kb - 1, 1] = float("nan")  # a NaN score past the vectors
                    if placement in ("vector", "both") and kb >= 16:
                        k[0, 0, n + 1, 1] = float("nan")  # one inside the first vector
                o, lse = f(q, k, v, is_causal=causal)[:2]
                key = f"{s} {placement} {dt} causal={causal}"
                rec(key + " lse nan", lambda: lse.isnan())
                rec(key + " lse zero", lambda: lse == 0)
                rec(key + " out nan", lambda: o.isnan())
                rec(key + " out zero", lambda: o == 0)
""")

PROGRAM = ep.register(__name__, PROGRAM)


def test_nan_rows_as_upstream():
    ours, up = ep.run(PROGRAM)
    assert ep.mismatches(ours, up) == []
    # control: a NaN past the vectors leaves the -inf rows fully masked upstream (row 0 has
    # finite scores beside it: NaN), one inside a vector makes every row NaN
    assert up["4 tail torch.float32 causal=False lse zero"] == [[[0.0, 1.0, 1.0]]]
    assert up["20 vector torch.float32 causal=False lse nan"] == [[[1.0, 1.0, 1.0]]]
