"""torch.special's Bessel family in float64 against upstream, bit for bit over [-30, 30]: the
modified Bessel functions follow Math.h's own expressions and torch.special.i0/i1 calc_i0's
and calc_i1's (each its own order of products), with the fused multiply-adds of upstream's FMA
build where it fuses them. modified_bessel_i0/i1 also in float32 (and from integers), computed
in float as upstream's float kernel; the other float32 results are computed in double and
rounded once (within the harness's derived tolerance)."""

from __future__ import annotations

import exact_programs as ep

NAMES = ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")

PROGRAM = f"""
import json, torch
out = {{}}
x = torch.cat([torch.linspace(-30, 30, 20001, dtype=torch.float64),
               torch.tensor([0.0, -0.0, 2.0, 8.0, -8.0, 1e-300, float("nan"), float("inf"),
                             -float("inf"), 700.0], dtype=torch.float64)])
for name in {NAMES!r}:
    out[name] = getattr(torch.special, name)(x).tolist()
x32 = torch.cat([x.float(), torch.arange(-20, 21, dtype=torch.float32)])
for name in ("modified_bessel_i0", "modified_bessel_i1"):
    out[name + " f32"] = getattr(torch.special, name)(x32).double().tolist()
out["modified_bessel_i1 int"] = torch.special.modified_bessel_i1(torch.arange(-10, 11)).double().tolist()
out["calc i0"] = torch.special.i0(x).tolist()
out["calc i1"] = torch.special.i1(x).tolist()
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_bessel_float64_agrees_bit_for_bit():
    up = ep.agreeing(PROGRAM)
    # controls: the comparison tells zeros by sign (upstream's j1(-0.0) is -0.0), and calc_i1's
    # order of products differs from Math.h's in the last bits upstream
    assert ep.distinct(up, "bessel_j1", "bessel_j1") is False
    j1_at_minus_zero = up["bessel_j1"][20002]
    assert j1_at_minus_zero == 0.0 and str(j1_at_minus_zero) == "-0.0"
    assert ep.distinct(up, "calc i1", "modified_bessel_i1")
