"""A derivative formula's operator call (CppOp) binds to the overload C++ would pick, and that
choice is remembered per argument kinds: a value's type, and for a tensor whether it is 0-dim
(a Number parameter takes only those). Calls with other kinds must not reuse the choice: the
controls below call with one kind, then another, and check each got its own overload and the
value that overload computes."""

from __future__ import annotations

import torch

from torchnative.csrc.autograd.generated import CppOp


def _overloads(cpp):
    return {op.name.split(".", 1)[-1] if "." in op.name else "" for op, _ in
            cpp._chosen.values()}


def test_scalar_then_zero_dim_tensor_then_tensor_take_their_own_overloads():
    mul = CppOp("aten::mul")
    t = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(mul(t, 2.5), t * 2.5)
    zero_dim = torch.tensor(3.0)
    assert torch.equal(mul(t, zero_dim), t * 3.0)
    row = torch.tensor([1.0, 2.0, 3.0])
    assert torch.equal(mul(t, row), t * row)
    # three kinds: a float, a 0-dim tensor, a 1-dim tensor
    assert len(mul._chosen) == 3
    assert _overloads(mul) == {"Scalar", "Tensor"}


def test_an_int_widens_to_an_int_list_only_where_no_overload_takes_it():
    total = CppOp("aten::sum")
    t = torch.arange(12.0).reshape(3, 4)
    assert torch.equal(total(t, 0, True), t.sum(0, keepdim=True))  # at::sum(t, 0, true)
    assert torch.equal(total(t, [1], True), t.sum(1, keepdim=True))
    assert torch.equal(total(t, 1, True), t.sum(1, keepdim=True))  # the remembered widening
    assert torch.equal(total(t), t.sum())


def test_none_for_an_int_list_is_passed_empty_each_call():
    """stride=None in the forward reaches a formula as None where C++ holds an empty list: a
    fresh empty list per call, so one call cannot see another's."""
    amax = CppOp("aten::amax")
    t = torch.tensor([[1.0, 5.0], [7.0, 2.0]])
    assert torch.equal(amax(t, None, False), t.amax())
    assert torch.equal(amax(t, None, True), t.amax(dim=(0, 1), keepdim=True))


def test_no_overload_refuses_by_name_each_time():
    mul = CppOp("aten::mul")
    for _ in range(2):
        try:
            mul("a", "b")
        except RuntimeError as e:
            assert "aten::mul: no overload accepts" in str(e)
        else:
            raise AssertionError("mul('a', 'b') was accepted")
    assert not mul._chosen
