"""The written-out backward functions (csrc/autograd/formula_runners.py) return what the
interpreter in ``FormulaNode._run`` returns: the same gradients for the same live edges, None
for the others, the same refusal of a freed graph, the saved values unpacked alike."""

import pytest
import torch
import torch.nn.functional as F

from torchnative.csrc.autograd import formula_runners, generated
from torchnative.csrc.autograd.graph_task import TLS as TASK


def _interpreted(node, grads):
    spec = node._spec
    run, spec.runner = spec.runner, None
    try:
        return node._run(grads)
    finally:
        spec.runner = run


def _written(node, grads):
    spec = node._spec
    if spec.runner is generated._UNRESOLVED:
        spec.runner = formula_runners.build(spec, generated.NS, generated.formula_source)
    assert spec.runner is not None, spec.key
    return node._run(grads)


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is not None:
            torch.testing.assert_close(x, y, rtol=0, atol=0)


def _graphs():
    torch.manual_seed(0)
    x = torch.rand(6, 4, requires_grad=True)
    w = torch.rand(3, 4, requires_grad=True)
    b = torch.rand(3, requires_grad=True)
    frozen = torch.rand(3, 4)
    y = torch.tensor([0, 2, 1, 1, 0, 2])
    img = torch.randn(2, 3, 4, 4, requires_grad=True)
    bw, bb = torch.rand(3, requires_grad=True), torch.rand(3, requires_grad=True)
    return {
        "addmm, every input": F.linear(x, w, b),
        "addmm, the input frozen": F.linear(x.detach(), w, b),
        "addmm, the weight frozen": F.linear(x, frozen, b),
        "relu": torch.relu(x - 0.5),
        "log_softmax": torch.log_softmax(x, 1),
        "nll_loss": F.nll_loss(torch.log_softmax(x, 1), y),
        "mul": x * x.detach(),
        "batch norm (three outputs, one formula)": F.batch_norm(img, None, None, bw, bb,
                                                                training=True),
    }


@pytest.mark.parametrize("case", list(_graphs()))
def test_same_gradients_as_the_interpreter(case):
    out = _graphs()[case]
    node = out.grad_fn
    grads = [torch.randn(out.shape)]
    _same(_written(node, grads), _interpreted(node, grads))


def test_no_gradient_in_none_out():
    out = _graphs()["addmm, every input"]
    assert _written(out.grad_fn, [None]) == [None, None, None]


def test_a_partial_pass_computes_only_the_needed_edges():
    torch.manual_seed(0)
    x = torch.rand(6, 4, requires_grad=True)
    w = torch.rand(3, 4, requires_grad=True)
    out = torch.addmm(torch.zeros(3), x, w.t())
    node = out.grad_fn
    grads = [torch.ones(6, 3)]
    needed, TASK.needed = TASK.needed, {node._next[1][0]}  # only the input's branch
    try:
        a, b = _written(node, grads), _interpreted(node, grads)
    finally:
        TASK.needed = needed
    _same(a, b)
    assert a[1] is not None and a[2] is None


def test_a_freed_graph_is_refused_alike():
    torch.manual_seed(0)
    x = torch.rand(5, requires_grad=True)
    out = torch.relu(x)
    node = out.grad_fn
    out.sum().backward()  # frees the saved result
    messages = []
    for run in (_written, _interpreted):
        with pytest.raises(RuntimeError) as e:
            run(node, [torch.ones(5)])
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "second time" in messages[0]


def test_saved_tensor_hooks_unpack_in_saving_order_once_each():
    torch.manual_seed(0)
    x = torch.rand(4, 3, requires_grad=True)
    w = torch.rand(2, 3, requires_grad=True)
    order = {}

    def pack(t):
        return t

    for run in (_written, _interpreted):
        seen = order[run] = []

        def unpack(t, seen=seen):
            seen.append(tuple(t.shape))
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = torch.mm(x, w.t())
        run(out.grad_fn, [torch.ones(4, 2)])
    assert order[_written] == order[_interpreted] and len(order[_written]) == 2


def test_list_arguments_keep_the_interpreter():
    spec = generated.spec_for("cat")
    assert formula_runners.build(spec, generated.NS, generated.formula_source) is None


def test_every_spec_written_out_compiles():
    # every derivatives.yaml entry with an operator: its recorder and its backward, where
    # eligible, compile (a formula or saved expression the source writer mangles fails here)
    from torchnative.csrc.autograd import dispatch
    from torchnative.csrc.autograd.formulas import table
    from torchnative.csrc.ops.dispatcher import REGISTRY

    written = 0
    for key in table():
        if key.startswith("__"):
            continue
        name, _, overload = key.partition(".")
        op = REGISTRY.find(f"aten::{name}", overload)
        if op is None:
            continue
        plan = dispatch._plan(op)
        if plan.spec is not None and formula_runners.build(
                plan.spec, generated.NS, generated.formula_source) is not None:
            written += 1
    assert written > 0
