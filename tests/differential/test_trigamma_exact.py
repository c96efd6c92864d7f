"""polygamma(1, x) (trigamma) against upstream, bit for bit: upstream's float overload computes
in float (sinf of a float pi times x, float sums), float16 and bfloat16 through it, the double
overload in double; the series' multiply-adds carry the contractions of upstream's build under
each CPU capability. Near the poles at the non-positive integers the float path's sin leaves a
finite value (-1.0 gives about 1.29e15, not the double's 6.6e32)."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = r"""
import json, torch
g = torch.Generator().manual_seed(0)
# every input exact on both sides (powers of two, not a pow kernel's last bit)
x = torch.cat([
    torch.rand(1200, generator=g, dtype=torch.float64) * 40 - 20,
    torch.randn(600, generator=g, dtype=torch.float64) * 3,
    (torch.rand(300, generator=g, dtype=torch.float64) - 0.5) * 2e-3,
    (torch.rand(300, generator=g, dtype=torch.float64) + 0.5) * torch.tensor(
        [2.0 ** int(k) for k in torch.randint(-100, 100, (300,), generator=g)]),
    -(torch.rand(200, generator=g, dtype=torch.float64) + 0.5) * torch.tensor(
        [2.0 ** int(k) for k in torch.randint(-100, 20, (200,), generator=g)]),
    torch.arange(-12, 13, dtype=torch.float64),
    torch.arange(-12, 13, dtype=torch.float64) + 1e-4,
    torch.tensor([0.0, -0.0, 0.5, 0.49999997, 1e-38, -1e-45, float("inf"), float("-inf"),
                  float("nan")], dtype=torch.float64)])
out = {}
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    out[str(dt)] = torch.polygamma(1, x.to(dt)).double().tolist()
out["special.polygamma float32"] = torch.special.polygamma(1, x.float()).double().tolist()
out["float64 rounded to float32"] = torch.polygamma(1, x).float().double().tolist()
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_trigamma_agrees_bit_for_bit_in_every_dtype():
    ours, up = ep.run(PROGRAM)
    assert ep.mismatches(ours, up) == []
    # control: upstream's float result is not its double result rounded (a kernel computing
    # float inputs in double would be caught), and the pole at -1 stays finite in float
    assert ep.distinct(up, "torch.float32", "float64 rounded to float32")
    i = 2600 + 11  # x == -1.0 in the arange block
    assert 1e14 < up["torch.float32"][i] < 1e16 and up["torch.float64"][i] > 1e32
