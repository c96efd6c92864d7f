"""Bilinear and bicubic interpolation of uint8 images (no antialiasing) against upstream, bit for
bit: upstream's fixed-point separable kernels, for 3 channels (its AVX2 kernel) and 6 (the
generic loop), up- and downsampling, align_corners, scale factors with and without recomputed
scales, channels-last input, F.upsample_bilinear and the operator called directly."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = r"""
import json, torch, torch.nn.functional as F
out = {}
def rec(name, fn):
    try:
        r = fn()
        out[name] = [r.double().tolist(), list(r.stride()), str(r.dtype)]
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
g = torch.Generator().manual_seed(0)
for c in (3, 6):
    x = torch.randint(0, 256, (2, c, 7, 9), generator=g, dtype=torch.uint8)
    for mode in ("bilinear", "bicubic"):
        for ac in (False, True):
            for size in ((13, 5), (4, 17), (7, 20), (3, 9)) + (((1, 1),) if c > 4 else ()):
                rec(f"{c} {mode} {ac} {size}", lambda: F.interpolate(x, size=size, mode=mode, align_corners=ac))
            for sf in (1.7, 0.6, (2.3, 0.45)):
                rec(f"{c} {mode} {ac} sf{sf}", lambda: F.interpolate(x, scale_factor=sf, mode=mode, align_corners=ac))
                rec(f"{c} {mode} {ac} sf{sf} recompute", lambda: F.interpolate(x, scale_factor=sf, mode=mode, align_corners=ac, recompute_scale_factor=True))
            rec(f"{c} {mode} {ac} channels_last", lambda: F.interpolate(x.contiguous(memory_format=torch.channels_last), size=(11, 6), mode=mode, align_corners=ac))
rec("upsample_bilinear", lambda: F.upsample_bilinear(x, size=(10, 12)))
rec("direct op", lambda: torch.ops.aten.upsample_bicubic2d.default(x, [10, 12], True))
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_uint8_interpolation_agrees_bit_for_bit():
    up = ep.agreeing(PROGRAM)
    # controls: the modes and corner alignments give different images upstream, so matching one
    # is not matching another
    assert ep.distinct(up, "3 bilinear False (13, 5)", "3 bicubic False (13, 5)")
    assert ep.distinct(up, "6 bicubic False (4, 17)", "6 bicubic True (4, 17)")
