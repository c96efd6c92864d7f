"""The upsampling composites' output size from a scale factor (UpSample.h's compute_output_size,
shared by the nearest, linear, bilinear and bicubic ``.vec`` overloads) against upstream torch
2.13.0 in a separate process: a NaN, an infinity or a size past int64 is refused with c10's
checked-conversion message, a size of -2^61 with the SymInt one, as upstream's (Python's own
ValueError/OverflowError escaped before from all but the nearest composites: 38 of 48 calls
differed). Left out: ``upsample_linear1d`` with a size below one, which runs upstream's Python
decomposition (no kernel of ours) and fails there before upstream's size check."""

from __future__ import annotations

import sides

PROGRAM = r"""
F = torch.nn.functional
A = torch.ops.aten
out = {}
x = torch.randn(1, 2, 4)
x2 = torch.randn(1, 2, 4, 4)
u8 = (torch.rand(1, 3, 4, 4) * 255).to(torch.uint8)
for s in (float("nan"), float("inf"), 1e300, 2.0 ** 61, -2.0 ** 61, -1.0, 0.0, 1.5):
    for name, f in (("linear", lambda: F.interpolate(x, scale_factor=s, mode="linear")),
                    ("nearest", lambda: F.interpolate(x, scale_factor=s)),
                    ("bilinear", lambda: A.upsample_bilinear2d.vec(x2, None, False, [s, s])),
                    ("bilinear u8", lambda: A.upsample_bilinear2d.vec(u8, None, False, [s, s])),
                    ("bicubic u8", lambda: A.upsample_bicubic2d.vec(u8, None, False, [s, s])),
                    ("linear vec", lambda: A.upsample_linear1d.vec(x, None, False, [s]))):
        out[f"{name} {s}"] = outcome(lambda: f().shape)
print(json.dumps(out))
"""
_DECOMPOSED = {f"{name} {s}" for name in ("linear", "linear vec") for s in (-1.0, 0.0)}


def test_output_sizes_and_their_refusals_as_upstream():
    ours, up = sides.on_both(PROGRAM)
    for key in _DECOMPOSED:
        ours.pop(key), up.pop(key)
    sides.assert_same(ours, up, at_least=44)
