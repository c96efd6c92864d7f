"""nll_loss's reduced value is upstream's bit for bit: LossNLL.cpp's cascade of float32/float64
partial sums in the input's dtype (nn_loss_cascade.py), the mean divided in that dtype, over
batch sizes around the cascade's runs of 16 and 256, class weights, ignored items (at multiples
of 16 too, which lengthen a run), 1-d inputs and both dtypes. Inputs are the same bits on both
sides (seeded randn). Control: the float64 sum rounded once, which the kernel used before,
differs from upstream on most of the same cases."""

from __future__ import annotations

import json

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, torch
F = torch.nn.functional
out = []
for dt in (torch.float32, torch.float64):
    for n in (1, 7, 16, 17, 33, 64, 100, 256, 257, 1000, 4097):
        for trial in range(6):
            g = torch.Generator().manual_seed(n * 100 + trial)
            x = (torch.randn(n, 10, generator=g) * 3).to(dt)
            y = torch.randint(0, 10, (n,), generator=g)
            w = (torch.rand(10, generator=g) + 0.5).to(dt) if trial >= 3 else None
            if trial in (2, 5):
                y[::16] = -100                       # every run boundary ignored
                y[1::7] = -100
            for red in ("mean", "sum"):
                v = F.nll_loss(x, y, weight=w, reduction=red)
                out.append([str(dt), n, trial, red, v.double().item(),
                            v.view(torch.int32 if dt == torch.float32 else torch.int64).item()])
    one = F.nll_loss(torch.randn(10, generator=torch.Generator().manual_seed(9)).to(dt),
                     torch.tensor(3))
    out.append([str(dt), "1-d", one.double().item()])
print(json.dumps(out))
'''


# the kernel's former sum (float64, rounded once), on the same items
WIDE = PROGRAM.replace(
    "v = F.nll_loss(x, y, weight=w, reduction=red)",
    "keep = y != -100; ww = (w[y[keep]] if w is not None else torch.ones(int(keep.sum()), "
    "dtype=dt)).double(); s = -(x[keep.nonzero()[:, 0], y[keep]].double() * ww).sum(); "
    "v = (s.to(dt) / ww.sum().to(dt)) if red == 'mean' else s.to(dt)")


def test_nll_loss_sums_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert len(ours) == len(theirs) == 2 * (11 * 6 * 2 + 1)
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t][:10])
    # control: the float64 sum differs from upstream on a good share of the float32 cases
    wide = upstream.run_json_ours(WIDE)
    for dt in ("torch.float32", "torch.float64"):
        rows = [(a, b) for a, b in zip(wide, theirs) if a[0] == dt and len(a) == 6]
        off = sum(a[5] != b[5] for a, b in rows)
        print(f"control: the float64 sum is off on {off} of the {len(rows)} {dt} losses")
        if dt == "torch.float32":
            assert off >= len(rows) // 5, rows[:3]
