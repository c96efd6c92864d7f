"""Every spelling reaches the one door; extension points behave as upstream's do."""

from __future__ import annotations

import pytest

import torch
from torchnative.csrc.dispatch import door
from torchnative.csrc.core.refuse import TorchnativeNotImplementedError
from torchnative.testing.upstream import run_both


def _served_for(name: str) -> int:
    return sum(n for (op, _), n in door.served.items() if op == name)


@pytest.mark.parametrize("spelling", [
    lambda x: x.view(6),
    lambda x: torch.ops.aten.view.default(x, [6]),
    lambda x: torch.ops.aten.view(x, [6]),
    lambda x: torch.Tensor.view(x, 6),
])
def test_spellings_reach_the_door(spelling):
    x = torch.zeros(2, 3)
    before = _served_for("aten::view")
    out = spelling(x)
    assert out.shape == (6,)
    assert _served_for("aten::view") == before + 1


def test_missing_kernel_refuses_naming_the_overload():
    from torchnative.csrc.ops.dispatcher import REGISTRY

    op = REGISTRY.find("aten::_cudnn_rnn", "")
    with pytest.raises(TorchnativeNotImplementedError, match="aten::_cudnn_rnn"):
        door.aten_dispatch(op, (torch.zeros(1),) * 3, {})


def test_other_devices_are_labels_that_refuse_to_allocate():
    d = torch.device("cuda:1")
    assert (d.type, d.index, str(d)) == ("cuda", 1, "cuda:1")
    with pytest.raises(TorchnativeNotImplementedError, match="cuda"):
        torch.zeros(2, device="cuda")


VIEWS = r"""
import json, torch
x = torch.zeros(2, 3, 4)
views = {
  "view": x.view(6, 4), "reshape": x.reshape(4, 6), "transpose": x.transpose(0, 2),
  "permute": x.permute(2, 0, 1), "expand": x[:, :1].expand(2, 5, 4), "slice": x[:, 1:, ::2],
  "select": x[1], "narrow": x.narrow(2, 1, 2), "unfold": x.unfold(2, 2, 1),
  "diagonal": x.diagonal(0, 1, 2), "unbind": x.unbind(1)[2], "split": x.split(2, 2)[1],
  "chunk": x.chunk(3, 1)[2], "as_strided": x.as_strided((3, 2), (1, 3), 2),
  "unsqueeze": x.unsqueeze(1), "squeeze": x[:1].squeeze(0), "t": x[0].t(), "mT": x.mT,
  "flatten": x.flatten(1), "movedim": x.movedim(0, 2), "none_ellipsis": x[None, ..., 1],
}
out = {k: [list(v.shape), list(v.stride()), v.storage_offset(),
           v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), v._base is x]
       for k, v in views.items()}
print(json.dumps(out))
"""


def test_view_geometry_and_aliasing_agree_with_upstream():
    ours, upstream = run_both(VIEWS)
    assert ours == upstream


MODE = r"""
import json, torch
from torch.utils._python_dispatch import TorchDispatchMode
class Log(TorchDispatchMode):
    def __init__(self):
        super().__init__(); self.ops = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func)); return func(*args, **(kwargs or {}))
x = torch.zeros(2, 3)
with Log() as m:
    y = x.reshape(6).view(3, 2).t()
    z = x.t().contiguous()
    w = x[0, 1:]
    v = x.flatten()
print(json.dumps(m.ops))
"""


def test_dispatch_mode_sees_the_operators_upstream_shows():
    ours, upstream = run_both(MODE)
    assert ours == upstream


FUNCTION = r"""
import json, torch
calls = []
class Sub(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        calls.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})
s = torch.zeros(2, 3).as_subclass(Sub)
r = s.view(6)
q = torch.reshape(s, (3, 2))
print(json.dumps({"calls": calls, "types": [type(r).__name__, type(q).__name__]}))
"""


def test_torch_function_subclass_agrees_with_upstream():
    ours, upstream = run_both(FUNCTION)
    assert ours == upstream


def test_custom_op_registers_into_the_door():
    @torch.library.custom_op("tntest::twice", mutates_args=())
    def twice(t: torch.Tensor) -> torch.Tensor:
        return t.clone()

    @twice.register_fake
    def _(t):
        return torch.empty_like(t)

    x = torch.zeros(2, 3)
    assert twice(x).shape == (2, 3)
    assert torch.ops.tntest.twice(torch.zeros(4, device="meta")).device.type == "meta"


def test_meta_tensors_compute_shapes():
    m = torch.empty(4, 5, device="meta")
    assert m.t().shape == (5, 4) and m[1:].shape == (3, 5)
    assert m.reshape(20).device.type == "meta"
