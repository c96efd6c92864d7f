"""A derivative formula's operator call (CppOp) hands its arguments to the door as given when the
chosen overload needs no conversion and takes no keyword-only argument; otherwise each call is
converted (None as an empty int list, an int widened to an int list) and keyword-only values
are passed by name. The controls check that a call needing either still gets it after a call of
the same operator that needed neither."""

from __future__ import annotations

import torch

from torchnative.csrc.autograd.generated import CppOp


def test_plain_call_passes_the_arguments_as_given():
    mm = CppOp("aten::mm")
    a, b = torch.arange(6.0).reshape(2, 3), torch.arange(12.0).reshape(3, 4)
    assert torch.equal(mm(a, b), a @ b)
    (op, steps), = mm._chosen.values()
    assert steps is None  # the direct lane
    assert torch.equal(mm(b.t(), a.t()), (a @ b).t())


def test_keyword_only_argument_is_passed_by_name():
    # sum.dim_IntList(self, dim, keepdim=False, *, dtype=None): dtype is keyword-only
    total = CppOp("aten::sum")
    t = torch.arange(12.0, dtype=torch.float32).reshape(3, 4)
    assert torch.equal(total(t, [1], True), t.sum(1, keepdim=True))
    r = total(t, [1], True, torch.float64)
    assert r.dtype == torch.float64
    assert torch.equal(r, t.sum(1, keepdim=True, dtype=torch.float64))
    kinds_steps = [steps for _, steps in total._chosen.values()]
    assert any(steps is not None and any(kw for kw, _, _ in steps) for steps in kinds_steps)


def test_conversions_still_apply_after_a_direct_call():
    """What a dispatch mode sees, as upstream's C++ formula would pass it: an empty list for the
    None, a one-int list for the int."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), args[1:]))
            return func(*args, **(kwargs or {}))

    amax, total = CppOp("aten::amax"), CppOp("aten::sum")
    t = torch.tensor([[1.0, 5.0], [7.0, 2.0]])
    with Log():
        r = [amax(t, [0], False), amax(t, None, False), total(t, [0], True), total(t, 1, True)]
        amax(t, [], False)
        total(t, [1], True)
    assert torch.equal(r[0], t.amax(0)) and torch.equal(r[1], t.amax())
    assert torch.equal(r[2], t.sum(0, keepdim=True)) and torch.equal(r[3], t.sum(1, keepdim=True))
    assert [f for f, _ in seen] == ["aten.amax.default"] * 2 + ["aten.sum.dim_IntList"] * 2 + \
        ["aten.amax.default", "aten.sum.dim_IntList"]
    assert seen[0][1] == ([0],) or seen[0][1] == ([0], False)
    assert seen[1] == seen[4]  # None reached the mode as the empty list an explicit call passes
    assert seen[3] == seen[5]  # 1 reached it as [1]
