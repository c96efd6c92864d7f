"""The written-out recorders (csrc/autograd/recorders.py) make the graph ``_record`` makes: the
same node class, saved values in the same order, the same edges and input metadata, the same
outputs' history, the same refusals and the same gradients."""

import itertools

import pytest
import torch

from torchnative.csrc.autograd import dispatch as D
from torchnative.csrc.dispatch.call import op as op_of


def _both(name, make_args, kwargs=None):
    """(recorder's result, _record's result) for fresh arguments each."""
    op = op_of(name)
    plan = D._plan(op)
    assert plan.recorder is not None, f"{name} has no recorder"
    r1 = plan.recorder(op, make_args(), dict(kwargs or {}))
    r2 = D._record(op, plan, plan.spec, make_args(), dict(kwargs or {}))
    return r1, r2


def _snapshot(result, leaves):
    outs = result if isinstance(result, tuple) else (result,)
    node = next(o._grad_fn for o in outs if isinstance(o, torch.Tensor) and
                o._grad_fn is not None)
    ids = {id(getattr(leaf, "_tn_grad_acc", lambda: None)()): k for k, leaf in enumerate(leaves)}
    edges = [(type(n).__name__ if n is not None else None, nr,
              ids.get(id(n)) if n is not None else None) for n, nr in node._next]
    saved = [(k, type(v).__name__) for k, v in node._saved.items()]
    flags = [(o.requires_grad, o._output_nr, o._grad_fn is node) for o in outs
             if isinstance(o, torch.Tensor)]
    return type(node).__name__, saved, edges, node._input_meta, flags, node._ranges


def _leaves(values, wanted):
    return [v.clone().requires_grad_(w) if v.is_floating_point() else v
            for v, w in zip(values, wanted)]


def _check(name, values, grad_mask, extra=(), kwargs=None, loss=lambda r: r.sum()):
    """Records ``name`` both ways over leaves built from ``values`` (``grad_mask`` says which
    require grad) and compares the graphs and the gradients."""
    made = []

    def make_args():
        leaves = _leaves(values, grad_mask)
        made.append(leaves)
        return tuple(leaves) + tuple(extra)

    r1, r2 = _both(name, make_args, kwargs)
    assert _snapshot(r1, made[0]) == _snapshot(r2, made[1])
    o1 = r1[0] if isinstance(r1, tuple) else r1
    o2 = r2[0] if isinstance(r2, tuple) else r2
    torch.testing.assert_close(o1, o2, rtol=0, atol=0)
    loss(o1).backward()
    loss(o2).backward()
    for a, b in zip(made[0], made[1]):
        if a.requires_grad:
            torch.testing.assert_close(a.grad, b.grad, rtol=0, atol=0)


@pytest.mark.parametrize("mask", list(itertools.product((False, True), repeat=3))[1:])
def test_addmm_each_input_mix(mask):
    torch.manual_seed(0)
    _check("addmm", (torch.rand(5), torch.rand(3, 4), torch.rand(4, 5)), mask)


def test_addmm_keyword_scalars():
    torch.manual_seed(0)
    _check("addmm", (torch.rand(5), torch.rand(3, 4), torch.rand(4, 5)), (True, True, True),
           kwargs={"beta": 0.5, "alpha": 2.0})


def test_relu_saves_its_result():
    torch.manual_seed(0)
    _check("relu", (torch.randn(4, 6),), (True,))


def test_log_softmax_and_nll_loss():
    torch.manual_seed(0)
    _check("_log_softmax", (torch.randn(4, 6),), (True,), extra=(1, False))
    target = torch.tensor([0, 5, 2, 1])
    _check("nll_loss_forward", (torch.log_softmax(torch.randn(4, 6), 1),), (True,),
           extra=(target, None, 1, -100), loss=lambda r: r)


def test_view_output_is_stamped():
    torch.manual_seed(0)
    _check("t", (torch.randn(3, 5),), (True,))
    op = op_of("t")
    leaf = torch.randn(3, 5, requires_grad=True)
    v = D._plan(op).recorder(op, (leaf,), {})
    assert v._base is leaf and v.grad_fn.name() == "TBackward0"


def test_several_outputs_and_optional_edges():
    torch.manual_seed(0)
    x, w, b = torch.randn(4, 3, 5, 5), torch.rand(3) + 0.5, torch.randn(3)
    rm, rv = torch.zeros(3), torch.ones(3)
    for mask in ((True, True, True), (True, False, False), (False, True, False)):
        _check("native_batch_norm", (x, w, b), mask, extra=(rm.clone(), rv.clone(), True, 0.1,
                                                             1e-5))
    _check("max_pool2d_with_indices", (x,), (True,), extra=([2, 2], [2, 2], [0, 0], [1, 1],
                                                            False))
    # an optional edge given None
    _check("convolution", (x, torch.randn(2, 3, 3, 3)), (True, True),
           extra=(None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1))


def test_nothing_requires_grad_runs_below():
    op = op_of("addmm")
    r = D._plan(op).recorder(op, (torch.rand(5), torch.rand(3, 4), torch.rand(4, 5)), {})
    assert r.grad_fn is None and not r.requires_grad


def test_a_non_differentiable_argument_is_refused_alike():
    op = op_of("nll_loss_forward")
    plan = D._plan(op)
    x = torch.log_softmax(torch.randn(4, 6), 1).requires_grad_()
    weight = torch.rand(6, requires_grad=True)
    args = (x, torch.tensor([0, 5, 2, 1]), weight, 1, -100)
    messages = []
    for record in (plan.recorder, lambda o, a, k: D._record(o, plan, plan.spec, a, k)):
        with pytest.raises(RuntimeError) as e:
            record(op, args, {})
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "'weight'" in messages[0]
    # (nothing else requiring grad: still refused, as _record does)
    args = (x.detach(), torch.tensor([0, 5, 2, 1]), weight, 1, -100)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
        plan.recorder(op, args, {})


def test_operators_with_lists_or_in_place_keep_the_interpreter():
    for name in ("cat", "add_.Tensor", "add.out", "unbind.int", "_native_batch_norm_legit"):
        op = op_of(name)
        assert D._plan(op).recorder is None, name
