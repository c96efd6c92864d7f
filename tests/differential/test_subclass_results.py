"""Which Python class an operator's result has when the input is a tensor subclass: the kernels
return a plain Tensor and a subclass's ``__torch_function__`` converts it back, so under
``DisableTorchFunctionSubclass`` views, ``detach()`` and ``.data`` are plain Tensors (torchvision's
tv_tensors rely on it). Also who sees ``detach`` and ``.data``: __torch_function__ overrides,
dispatch modes and FakeTensor. Compared with upstream in separate processes."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json
import torch
from torch.utils._python_dispatch import TorchDispatchMode

class T(torch.Tensor):
    pass

seen = []

class Seen(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})

def results(x):
    return {"detach": x.detach(), "data": x.data, "view": x.view(6), "t": x.t(), "getitem": x[0],
            "reshape": x.reshape(6), "alias": torch.ops.aten.alias(x), "torch.detach": torch.detach(x),
            "expand": x.expand(2, 3), "squeeze": x.squeeze(), "narrow": x.narrow(0, 0, 1),
            "as_strided": x.as_strided((2,), (1,)), "unbind": x.unbind()[0], "split": x.split(1)[0],
            "add": x + 1, "contiguous": x.contiguous(), "float": x.float()}

out = {}
x = torch.ones(2, 3).as_subclass(T)
with torch._C.DisableTorchFunctionSubclass():
    out["disabled"] = {k: type(v).__name__ for k, v in results(x).items()}
out["enabled"] = {k: type(v).__name__ for k, v in results(x).items()}

s = torch.ones(2, 3).as_subclass(Seen)
s.detach(); s.data; s.view(6)
out["torch_function_saw"] = seen

class Mode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        seen_by_mode.append(str(func))
        return func(*args, **(kwargs or {}))

seen_by_mode = []
plain = torch.ones(2, requires_grad=True)
with Mode():
    plain.detach(); plain.data
out["mode_saw"] = seen_by_mode

from torch._subclasses.fake_tensor import FakeTensorMode
with FakeTensorMode():
    f = torch.empty(3)
    out["fake"] = [type(f.detach()).__name__, type(f.data).__name__, type(f.view(3)).__name__]
p = torch.nn.Parameter(torch.ones(2))
out["parameter"] = [type(p.detach()).__name__, type(p.data).__name__, type(p.view(2)).__name__]

# detach shares the version counter and is no view; .data has its own counter
y = torch.ones(2, requires_grad=True) * 2
d = y.detach()
d.add_(1)
dd = y.data
dd.add_(1)
out["versions"] = [y._version, d._version, dd._version, d._is_view(), d.requires_grad,
                   d.grad_fn is None, y.tolist()]
print(json.dumps(out))
'''


def test_subclass_results_and_detach_visibility_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert theirs["disabled"]["detach"] == "Tensor"  # the program asks what it means to
    assert theirs["enabled"]["detach"] == "T"
    assert ours == theirs
