"""Calling an OpOverload or OpOverloadPacket (``torch.ops.aten.add.Tensor(s, s)``) goes through
__torch_function__ first, as upstream's parser does: a tensor subclass gets its own type back,
modes see the call, DisableTorchFunctionSubclass turns it off. A subclass that defines
__torch_dispatch__ but keeps Tensor's __torch_function__ has __torch_function__ disabled by the
metaclass (FakeTensor), and TensorBase cannot be subclassed directly."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import available, run_both

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import json, torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
out = {}

class Sub(torch.Tensor):
    pass

s = torch.ones(2).as_subclass(Sub)
out["overload"] = type(torch.ops.aten.add.Tensor(s, s)).__name__
out["packet"] = type(torch.ops.aten.add(s, s)).__name__
out["list"] = type(torch.ops.aten.cat.default([s, s])).__name__
seen = []

class TF(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append(f"{type(func).__name__} {func}")
        return super().__torch_function__(func, types, args, kwargs or {})

t = torch.ones(2).as_subclass(TF)
out["tf_type"] = type(torch.ops.aten.mul.Tensor(t, t)).__name__
torch.ops.aten.mul(t, 2.0)
out["tf_seen"] = seen[:]
seen.clear()
with torch._C.DisableTorchFunctionSubclass():
    out["disabled"] = type(torch.ops.aten.mul.Tensor(t, t)).__name__
out["seen_disabled"] = seen[:]

class Mode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        seen.append(f"mode {func}")
        return func(*args, **(kwargs or {}))

x = torch.ones(1)
with Mode():
    torch.ops.aten.sin.default(x)
out["mode"] = seen[-1:]
# a packet call with only strings and None (its overload remembered by argument types) still
# reaches a mode, before and after the choice was remembered
seen.clear()
torch.ops.profiler._record_function_exit(torch.ops.profiler._record_function_enter_new("a", None))
with Mode():
    handle = torch.ops.profiler._record_function_enter_new("b", None)
    torch.ops.profiler._record_function_exit(handle)
    torch.ops.profiler._record_function_enter_new("c")
out["mode_plain_args"] = seen[:]

class D(torch.Tensor):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

class DF(D):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})

out["dispatch_subclass_tf_disabled"] = [D.__torch_function__ is torch._C._disabled_torch_function_impl,
                                        DF.__torch_function__ is torch._C._disabled_torch_function_impl,
                                        FakeTensor.__torch_function__ is torch._C._disabled_torch_function_impl]
fake = FakeTensorMode().from_tensor(torch.randn(2))
out["fake_detach"] = type(torch.ops.aten.detach.default(fake)).__name__
try:
    class Direct(torch._C.TensorBase):
        pass
    out["direct"] = "no error"
except RuntimeError as e:
    out["direct"] = str(e)
print(json.dumps(out))
'''


def test_overload_calls_see_torch_function_as_upstream():
    ours, theirs = run_both(PROGRAM)
    assert theirs["overload"] == theirs["packet"] == "Sub"  # the program reaches what it tests
    assert len(theirs["mode_plain_args"]) == 3
    assert ours == theirs
