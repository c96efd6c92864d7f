"""pixel_shuffle and pixel_unshuffle against upstream's CPU kernels: their shape checks (they
were reached through a decomposition that checked nothing, so a channel count not divisible by
the factor's square failed in a reshape), values of contiguous, channels-last (kept so),
non-contiguous, 3-d and 5-d inputs, integer and empty inputs, the round trip, and the gradient."""
from __future__ import annotations

import json

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r'''
torch.manual_seed(0)
out = {}
for e in ['F.pixel_shuffle(torch.randn(3, 2), 2)',
          'F.pixel_shuffle(torch.randn(1, 4, 2, 2), 0)',
          'F.pixel_shuffle(torch.randn(1, 4, 2, 2), -2)',
          'F.pixel_shuffle(torch.randn(1, 3, 2, 2), 2)',
          'F.pixel_unshuffle(torch.randn(3, 2), 2)',
          'F.pixel_unshuffle(torch.randn(1, 1, 3, 4), 2)',
          'F.pixel_unshuffle(torch.randn(1, 1, 4, 3), 2)',
          'F.pixel_unshuffle(torch.randn(1, 1, 4, 4), 0)']:
    try: out[e] = repr(eval(e))
    except Exception as ex: out[e] = type(ex).__name__ + ": " + str(ex)
x = torch.arange(2 * 8 * 3 * 2.).reshape(2, 8, 3, 2)
for name, t in [("contig", x), ("cl", x.to(memory_format=torch.channels_last)),
                ("5d", torch.arange(2 * 2 * 4 * 2 * 3.).reshape(2, 2, 4, 2, 3)),
                ("3d", torch.arange(8 * 2 * 2.).reshape(8, 2, 2)), ("nc", x.transpose(2, 3))]:
    y = F.pixel_shuffle(t, 2)
    out["ps " + name] = [y.tolist(), y.stride()]
    z = F.pixel_unshuffle(y, 2)
    out["pu " + name] = [z.tolist(), z.stride(), bool(torch.equal(z, t))]
g = torch.randn(1, 8, 2, 2, requires_grad=True)
F.pixel_shuffle(g, 2).pow(2).sum().backward(); out["grad"] = g.grad.flatten().tolist()
out["int"] = F.pixel_shuffle(torch.arange(16).reshape(1, 4, 2, 2), 2).tolist()
out["empty"] = list(F.pixel_shuffle(torch.ones(0, 4, 2, 2), 2).shape)
print(json.dumps(out))
'''


def test_pixel_shuffle_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = sides.on_both(PROGRAM)
    assert "divisible by 4" in theirs["F.pixel_shuffle(torch.randn(1, 3, 2, 2), 2)"]
    bad = {k: (ours.get(k), v) for k, v in theirs.items() if ours.get(k) != v}
    assert not bad, json.dumps(bad, indent=1)
