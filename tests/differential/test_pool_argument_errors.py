"""Pooling's argument checks against upstream in separate processes: which check refuses a
negative, zero or oversized kernel, stride, padding or dilation, with upstream's message; and
the index max pooling gives a window that covers padding alone (dilation stepping over the
input): upstream's loop start, stepped past the padding.
Upstream's pad bound divides the effective kernel toward zero (C's division), so a kernel of -1
passes it and is refused by the shape check's "kernel size should be greater than zero"; a
floor division refused it with the pad message instead."""

from __future__ import annotations

import sides

PROGRAM = r"""
out = {}
torch.manual_seed(0)
x2, x3, x1 = torch.randn(1, 2, 5, 5), torch.randn(1, 2, 5, 5, 5), torch.randn(1, 2, 7)
bad = [dict(kernel_size=-2), dict(kernel_size=-1), dict(kernel_size=0), dict(kernel_size=-3),
       dict(kernel_size=2, stride=0), dict(kernel_size=2, stride=-1),
       dict(kernel_size=2, padding=2), dict(kernel_size=2, padding=-1),
       dict(kernel_size=2, dilation=0), dict(kernel_size=3, dilation=-1),
       dict(kernel_size=-1, dilation=2), dict(kernel_size=2, padding=1, dilation=2),
       dict(kernel_size=7, padding=1)]
for i, kw in enumerate(bad):
    k = kw["kernel_size"]
    for name, fn, x, k2, k3 in (("1d", F.max_pool1d, x1, k, k),
                                ("2d", F.max_pool2d, x2, (2, k), (2, k)),
                                ("3d", F.max_pool3d, x3, (2, 2, k), (2, 2, k))):
        args = dict(kw, kernel_size=k2 if name == "2d" else k3 if name == "3d" else k)
        out[f"max {name} {i}"] = outcome(lambda: fn(x, return_indices=True, **args), bits=True)
    if "dilation" not in kw:
        out[f"avg 2d {i}"] = outcome(lambda: F.avg_pool2d(x2, **dict(kw, kernel_size=(2, k))),
                                     bits=True)
xs = torch.arange(6.).reshape(1, 2, 3, 1)
for i, kw in enumerate([dict(kernel_size=(1, 2), padding=(0, 1), dilation=(1, 2)),
                        dict(kernel_size=(2, 2), padding=(1, 1), dilation=(3, 2)),
                        dict(kernel_size=(3, 2), padding=(1, 1), dilation=(2, 3), stride=2)]):
    out[f"padding-only window {i}"] = outcome(lambda: F.max_pool2d(xs, return_indices=True, **kw),
                                              bits=True)
    out[f"padding-only window cl {i}"] = outcome(lambda: F.max_pool2d(
        xs.contiguous(memory_format=torch.channels_last), return_indices=True, **kw), bits=True)
out["padding-only window 1d"] = outcome(lambda: F.max_pool1d(
    torch.arange(4.).reshape(2, 2, 1), 2, padding=1, dilation=2, return_indices=True), bits=True)
print(json.dumps(out))
"""


def test_pool_argument_checks_agree():
    ours, up = sides.on_both(PROGRAM)
    sides.assert_same(ours, up, at_least=52)
    # the case the toward-zero division decides: refused by the kernel size, not the pad bound
    assert "kernel size should be greater than zero" in str(up["max 2d 1"])
