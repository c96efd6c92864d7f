"""Upstream's OpInfo database, each differentiable operator's first float32 sample recorded and
differentiated twice in this process: through the written-out recorders and backward functions
(csrc/autograd/recorders.py, formula_runners.py), and through the interpreters they stand for
(``_record``, ``FormulaNode``'s loop). The graphs (node classes, edges, saved values' names),
the outputs and the gradients must be the same, bit for bit; an error must be the same error."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.autograd import dispatch, generated
from torchnative.csrc.ops.dispatcher import REGISTRY


def _interpreters():
    """Switch every written-out function off (plans made later too); returns the undo."""
    plans = [op.cache["autograd"] for ops in list(REGISTRY._ops.values()) for op in ops.values()
             if "autograd" in op.cache]
    kept = [(p, p.recorder) for p in plans]
    specs = [(s, s.runner) for s in generated._SPECS.values() if s is not None]
    build = dispatch._recorders.build
    for p in plans:
        p.recorder = None
    for s, _ in specs:
        s.runner = None
    dispatch._recorders.build = lambda *a, **k: None
    runner_build = generated._formula_runners.build
    generated._formula_runners.build = lambda *a, **k: None

    def undo():
        dispatch._recorders.build = build
        generated._formula_runners.build = runner_build
        for p, r in kept:
            p.recorder = r
        for s, r in specs:
            s.runner = r
        for ops in list(REGISTRY._ops.values()):  # plans made while switched off
            for op in ops.values():
                p = op.cache.get("autograd")
                if p is not None and all(p is not q for q, _ in kept):
                    del op.cache["autograd"]
        for s in generated._SPECS.values():
            if s is not None and s.runner is None and all(s is not q for q, _ in specs):
                s.runner = generated._UNRESOLVED
    return undo


def _graph(outs):
    """Node classes in breadth-first order from the outputs, each with its edges' nodes'
    indices and its saved values' names."""
    order, index, queue = [], {}, []
    for o in outs:
        if o.grad_fn is not None and o.grad_fn not in index:
            index[o.grad_fn] = len(order)
            order.append(o.grad_fn)
            queue.append(o.grad_fn)
    while queue:
        fn = queue.pop(0)
        for nxt, _ in fn.next_functions:
            if nxt is not None and nxt not in index:
                index[nxt] = len(order)
                order.append(nxt)
                queue.append(nxt)
    return [(type(fn).__name__, [(index.get(n), nr) for n, nr in fn.next_functions],
             sorted(getattr(fn, "_saved", {}))) for fn in order]


def _bits(t):
    return None if t is None else (tuple(t.shape), str(t.dtype),
                                   np.ascontiguousarray(t.detach().numpy()).tobytes())


def _run(op, sample):
    """(graph, outputs' bits, inputs' gradients' bits) or the error's type and message."""
    torch.manual_seed(0)
    leaves = [t for t in [sample.input, *sample.args, *sample.kwargs.values()]
              if isinstance(t, torch.Tensor) and t.requires_grad]
    for t in leaves:
        t.grad = None
    try:
        out = op.op(sample.input, *sample.args, **sample.kwargs)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if isinstance(o, torch.Tensor) and o.requires_grad]
        graph = _graph(outs)
        if outs:
            g = torch.Generator().manual_seed(1)
            seeds = [torch.randn(o.shape, generator=g, dtype=o.dtype) if o.is_floating_point()
                     else None for o in outs]
            pairs = [(o, s) for o, s in zip(outs, seeds) if s is not None]
            if pairs:
                torch.autograd.backward([o for o, _ in pairs], [s for _, s in pairs])
        return graph, [_bits(o) for o in outs], [_bits(t.grad) for t in leaves]
    except Exception as e:  # the same error both ways is the expected result
        return type(e).__name__, str(e)


def _samples():
    from torch.testing._internal.common_methods_invocations import op_db

    for op in op_db:
        if not op.supports_autograd or torch.float32 not in op.supported_dtypes("cpu"):
            continue
        yield op


@pytest.mark.parametrize("op", list(_samples()), ids=lambda op: f"{op.name}.{op.variant_test_name}")
def test_written_out_autograd_equals_the_interpreters(op):
    try:
        sample = next(iter(op.sample_inputs("cpu", torch.float32, requires_grad=True)))
    except Exception as e:
        pytest.skip(f"no sample: {type(e).__name__}")
    written = _run(op, sample)
    undo = _interpreters()
    try:
        interpreted = _run(op, sample)
    finally:
        undo()
    assert written == interpreted
