"""segment_reduce and its gradient against upstream, bit for bit: lengths and offsets, every
reduction, with and without ``initial``, empty segments, ties and zeros (max/min and prod have
their own gradient rules), float16 sums accumulated in float16 one element at a time, and
upstream's errors. Each side runs in its own process.

The control recomputes the float16 sums the obvious way (in float32, rounded once): upstream's
results differ from that, so the comparison sees the accumulation order."""

from __future__ import annotations

import numpy as np

from torchnative.testing import upstream

PROGRAM = r'''
import json, torch
torch.manual_seed(0)
res = {}
for reduce in ["max", "min", "mean", "sum", "prod", "amax"]:
    for dt in [torch.float32, torch.float64]:
        data = torch.randn(3, 6, 2, dtype=dt)
        data[0, 1, 0] = 0.0
        data[1, 2, 1] = data[1, 3, 1]
        data = data.requires_grad_()
        lengths = torch.tensor([[2, 0, 4], [1, 2, 3], [6, 0, 0]])
        offsets = torch.cat([torch.zeros(3, 1, dtype=torch.long), lengths.cumsum(-1)], -1)
        for initial in [None, 2.0]:
            for kw in (dict(lengths=lengths), dict(offsets=offsets)):
                out = torch.segment_reduce(data, reduce, axis=1, initial=initial, **kw)
                g = torch.randn_like(out)
                gi, = torch.autograd.grad(out, data, g)
                res[f"{reduce} {dt} {initial} {list(kw)}"] = [out.tolist(), gi.tolist()]
half = torch.rand(400, 3).half()
res["half sums"] = [torch.segment_reduce(half, "sum", lengths=torch.tensor([100, 300])).float().tolist(),
                    half.float().tolist()]
for name, kw in [("negative", dict(lengths=torch.tensor([1, -1, 2]))),
                 ("bad total", dict(lengths=torch.tensor([1, 1]))), ("none", dict()),
                 ("axis", dict(lengths=torch.tensor([2]), axis=1)),
                 ("reduce", dict(lengths=torch.tensor([2]), reduce="avg")),
                 ("indices", dict(indices=torch.tensor([0, 1])))]:
    r = kw.pop("reduce", "sum")
    try:
        torch.segment_reduce(torch.ones(2, 2), r, **kw)
        res[name] = "computed"
    except Exception as e:
        res[name] = [type(e).__name__, str(e)]
try:
    torch.segment_reduce(torch.ones(2, dtype=torch.int64), "sum", lengths=torch.tensor([2]))
except Exception as e:
    res["int64"] = [type(e).__name__, str(e)]
print(json.dumps(res))
'''


def test_segment_reduce_matches_upstream():
    if not upstream.available():
        upstream.missing("upstream torch environment (.venv-upstream)")
    ours, theirs = upstream.run_both(PROGRAM)
    assert theirs["negative"][0] == "RuntimeError" and theirs["int64"][0] == "NotImplementedError"
    # control: float32-accumulated float16 sums disagree with upstream's float16 accumulation
    sums, values = theirs["half sums"]
    v = np.asarray(values, np.float32)
    once = [np.float16(v[:100].sum(0)), np.float16(v[100:].sum(0))]
    assert not np.array_equal(np.asarray(once, np.float32), np.asarray(sums, np.float32))
    wrong = {k: (str(ours.get(k))[:200], str(theirs[k])[:200]) for k in theirs if ours.get(k) != theirs[k]}
    assert wrong == {}
