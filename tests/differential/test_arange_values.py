"""Floating ``arange`` against upstream torch 2.13.0 in a separate process, under this machine's
CPU profile and each other one upstream runs here, bit for bit: upstream computes
``start + step * i`` in the accumulate type (one fused multiply-add where its build has the
instruction: not DEFAULT's), then its SIMD lanes from a base rounded to the dtype. Ranges of
whole numbers whose products and sums the accumulate type holds exactly (the common
``arange(n)``) take plain arithmetic, which rounds nothing there; the ranges here sit on both
sides of that line (2**24 for the reduced dtypes' float32, 2**53 for float64) and off it
(fractional steps). Control: plain arithmetic on a fractional range differs from upstream's
bits."""

from __future__ import annotations

import sides

PROGRAM = r"""
out = {}
cases = [(0., 401., 1.), (1., 401., 2.), (-3., 1000., 7.), (2.**24 - 40, 2.**24 + 40, 1.),
         (2.**53 - 100, 2.**53, 3.), (2.**52 - 50, 2.**52 + 50, 1.), (0., 5000., 1.),
         (-0.0, 10., 1.), (5., -300., -3.), (0., 1., 0.1), (0.3, 100.3, 0.1), (1e6, 1e6 + 300, 1.),
         (-2.**23, 2.**23, 2.**12)]
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    for s, e, st in cases:
        out[f"{dt} {s} {e} {st}"] = outcome(lambda: torch.arange(s, e, st, dtype=dt), bits=True)
i = torch.arange(10000, dtype=torch.float64)
out["control-plain"] = outcome(lambda: i * 0.1 + 0.3, bits=True)
out["fractional"] = outcome(lambda: torch.arange(0.3, 1000.3, 0.1, dtype=torch.float64),
                            bits=True)
print(json.dumps(out))
"""


results = sides.under_each_profile(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, at_least=50)


def test_control_is_caught():
    _, up = sides.on_both(PROGRAM)  # this machine's build (DEFAULT's has no fused multiply-add)
    assert up["control-plain"]["hex"] != up["fractional"]["hex"]
