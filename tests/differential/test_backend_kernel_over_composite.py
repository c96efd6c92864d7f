"""Operators upstream registers both a CPU kernel and a CompositeImplicitAutograd one for
(silu_backward, mish_backward, native_channel_shuffle): upstream's dispatcher never runs the
composite for a CPU tensor (the backend's own kernel wins for it and its autograd key), so ours
does not either. Compared with upstream torch 2.13.0 in a separate process: the nodes autograd
records when the operators are called with tensors that require grad, a meta tensor through
native_channel_shuffle (the composite serves the meta backend, which has no kernel of its own),
and silu's and mish's double backward (FunctionsManual's infinitely differentiable forms, whose
``Scalar - Tensor`` and ``Scalar + Tensor`` record C++'s operators): node names exactly, values
within four times upstream's own float32-vs-float64 gap. The tree before fails the names."""

from __future__ import annotations

import numpy as np

import sides

PROGRAM = r"""
F = torch.nn.functional
A = torch.ops.aten
torch.manual_seed(0)
out = {}

def names(fn, depth=5):
    seen, frontier = [], [fn]
    for _ in range(depth):
        nxt = []
        for f in frontier:
            if f is not None:
                seen.append(type(f).__name__)
                nxt += [n[0] for n in f.next_functions]
        frontier = nxt
    return seen

g = torch.randn(5, requires_grad=True)
x = torch.randn(5, requires_grad=True)
for op in ("silu_backward", "mish_backward"):
    out[op] = outcome(lambda: names(getattr(A, op)(g, x).grad_fn))
out["native_channel_shuffle"] = outcome(lambda: names(
    A.native_channel_shuffle(torch.randn(1, 4, 2, requires_grad=True), 2).grad_fn))
out["meta"] = outcome(lambda: A.native_channel_shuffle(torch.empty(1, 4, 2, device="meta"), 2))
for dt in (torch.float32, torch.float64):
    v = (torch.randn(50) * 4).to(dt).requires_grad_()
    for name, f in (("silu", F.silu), ("mish", F.mish)):
        d1, = torch.autograd.grad(f(v).sum(), v, create_graph=True)
        d2, = torch.autograd.grad((d1 * d1).sum(), v)
        out[f"{name} {dt}"] = {"names": names(d1.grad_fn), "d1": d1.tolist(), "d2": d2.tolist()}
print(json.dumps(out))
"""


def test_nodes_and_double_backward_as_upstream():
    ours, up = sides.on_both(PROGRAM)
    for key in ("silu_backward", "mish_backward", "native_channel_shuffle", "meta"):
        assert ours[key] == up[key], key
    for name in ("silu", "mish"):
        mine, theirs = ours[f"{name} torch.float32"], up[f"{name} torch.float32"]
        exact = up[f"{name} torch.float64"]
        assert mine["names"] == theirs["names"] == exact["names"], name
        for order in ("d1", "d2"):
            truth = np.asarray(exact[order])
            gap = np.max(np.abs(np.asarray(theirs[order]) - truth))
            err = np.max(np.abs(np.asarray(mine[order]) - truth))
            assert err <= 4 * gap, (name, order, err, gap)
