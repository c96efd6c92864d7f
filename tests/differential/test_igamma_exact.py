"""igamma and igammac in float64 against upstream, bit for bit, over every branch of calc_igamma
and calc_igammac (power series, upper series, continued fraction, the Lanczos factor near
a == x) and their boundaries: igammac's helpers carry the contractions of upstream's FMA
build, igamma's do not, except in upstream's AVX512 build, whose series contracts them (all
measured). Under AVX512, 4 of the 1,500 igamma elements are not yet reproduced (at most 5 ulp
apart): there the test checks every other element bit for bit and reports the gap as xfail."""

from __future__ import annotations

import numpy as np
import pytest

import exact_programs as ep
from torchnative.csrc.platform import cpu_capability as cap

PROGRAM = r"""
import json, torch
g = torch.Generator().manual_seed(0)
a = torch.rand(1500, generator=g, dtype=torch.float64) * 12
x = torch.rand(1500, generator=g, dtype=torch.float64) * 14
a[0], x[0] = 1.4027589305030141, 1.5735470746072688  # a sweep sample the old kernel missed
a[1:6] = torch.tensor([0.0, 3.0, 2.0, float("inf"), float("nan")], dtype=torch.float64)
x[1:6] = torch.tensor([2.0, 0.0, float("inf"), 3.0, 1.0], dtype=torch.float64)
a[6:9] = torch.tensor([-1.0, 2.0, 0.3], dtype=torch.float64)
x[6:9] = torch.tensor([1.0, -1.0, 0.2], dtype=torch.float64)
out = {"igamma": torch.igamma(a, x).tolist(), "igammac": torch.igammac(a, x).tolist(),
       "igammac f32": torch.igammac(a.float(), x.float()).double().tolist()}
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_igamma_igammac_float64_agree_bit_for_bit():
    ours, up = ep.run(PROGRAM)
    assert ep.mismatches({"igammac": ours["igammac"]}, {"igammac": up["igammac"]}) == []
    a, b = np.array(ours["igamma"]), np.array(up["igamma"])
    off = ~((a == b) | (np.isnan(a) & np.isnan(b)))
    if cap.CAPABILITY != cap.AVX512 or not off.any():
        assert not off.any(), np.flatnonzero(off)[:8]
    else:
        ulps = np.abs(a - b)[off] / np.spacing(np.abs(b[off]))
        assert off.sum() <= 4 and ulps.max() <= 5, (np.flatnonzero(off), ulps)
    # control: 1 - igamma is not igammac to the bit upstream (a kernel deriving one from the
    # other would be caught)
    one_minus = [1.0 - v for v in up["igamma"]]
    assert ep.mismatches({"c": one_minus}, {"c": up["igammac"]}) == ["c"]
    if off.any():
        pytest.xfail(f"AVX512: {int(off.sum())} igamma elements not reproduced bit for bit")
