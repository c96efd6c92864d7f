"""A tensor's value as a Python number (``item()``, ``bool()``, ``float()``, ``int()``,
``complex()``, ``operator.index()``, and ``tolist()``) against upstream torch 2.13.0, each in
its own process: what a TorchFunctionMode, a TorchDispatchMode and a __torch_function__
subclass see (upstream reads the value through ``aten::_local_scalar_dense``), FakeTensorMode's
and vmap's refusals, the values and the errors of the edge cases, the requires-grad warning."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import available, run_both

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import json, operator, warnings, torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch._subclasses.fake_tensor import FakeTensorMode

out = {}
seen = []

class F(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        seen.append("F " + getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))

class D(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        seen.append("D " + str(func))
        return func(*args, **(kwargs or {}))

class S(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append("S " + getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs)

def outcome(f):
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            v = f()
        # (upstream's C++ warnings name their source line; ours do not)
        return [repr(v), type(v).__name__,
                [str(x.message).split(" (Triggered internally")[0] for x in w]]
    except Exception as e:
        return [type(e).__name__, str(e)]

f = torch.tensor([2.5])
i = torch.tensor([7])
calls = {
    "item": lambda t: t.item(), "float": float, "int": int, "bool": bool, "complex": complex,
    "index": lambda t: [10, 11, 12, 13, 14, 15, 16, 17][t], "tolist": lambda t: t.tolist(),
    "format": lambda t: f"{t:.2f}",
}
for name, call in calls.items():
    t = i if name == "index" else f
    for mode in (F, D):
        seen.clear()
        with mode():
            value = outcome(lambda: call(t))
        out[f"{name} {mode.__name__}"] = [value, seen[:]]
    seen.clear()
    out[f"{name} subclass"] = [outcome(lambda: call(t.as_subclass(S))), seen[:]]

for name, make in {
    "float of 2": lambda: float(torch.ones(2)), "item of 2": lambda: torch.ones(2).item(),
    "item of 0": lambda: torch.ones(0).item(), "int of 2": lambda: int(torch.ones(2)),
    "bool of 0": lambda: bool(torch.ones(0)), "bool of 2": lambda: bool(torch.ones(2)),
    "index of float": lambda: operator.index(torch.ones(1)),
    "index of 2": lambda: operator.index(torch.ones(2, dtype=torch.int64)),
    "index of bool": lambda: operator.index(torch.tensor([True])),
    "float of complex": lambda: float(torch.tensor([1 + 2j])),
    "float of real complex": lambda: float(torch.tensor([3 + 0j])),
    "int of complex": lambda: int(torch.tensor([1 + 2j])),
    "int of real complex": lambda: int(torch.tensor([-3.75 + 0j])),
    "int of float": lambda: int(torch.tensor([-3.75])),
    "int of 1e30": lambda: int(torch.tensor([1e30])), "int of nan": lambda: int(torch.tensor([float("nan")])),
    "int of inf": lambda: int(torch.tensor([float("inf")])),
    "int of int64": lambda: int(torch.tensor([2 ** 62])), "int of uint8": lambda: int(torch.tensor([250], dtype=torch.uint8)),
    "float of bfloat16": lambda: float(torch.tensor([1 / 3], dtype=torch.bfloat16)),
    "item of bool": lambda: torch.tensor([True]).item(), "item of half": lambda: torch.tensor(0.1, dtype=torch.half).item(),
    "complex of float": lambda: complex(torch.tensor([1.5])),
    "meta": lambda: torch.ones(1, device="meta").item(),
    "float warns once": lambda: [float(torch.ones(1, requires_grad=True)), float(torch.ones(1, requires_grad=True))],
    "item of requires grad": lambda: torch.ones(1, requires_grad=True).item(),
    # the operator itself reads the first element of any count (item() checks the count first)
    "op of 3x4": lambda: torch.ops.aten._local_scalar_dense(torch.arange(12.).reshape(3, 4)[1:, 2:]),
    "op of a transpose": lambda: torch.ops.aten._local_scalar_dense(torch.arange(1., 7.).reshape(2, 3).t()),
    "op of a conj": lambda: torch.ops.aten._local_scalar_dense((torch.arange(4.) * (1 + 1j))[1:].conj()),
    "op of bfloat16": lambda: torch.ops.aten._local_scalar_dense(torch.tensor([1 / 3, 2], dtype=torch.bfloat16)),
    "op of 0": lambda: torch.ops.aten._local_scalar_dense(torch.ones(0, 3)),
}.items():
    out[name] = outcome(make)

for name, call in (("item", lambda: torch.ones(1).item()), ("float", lambda: float(torch.ones(1))),
                   ("bool", lambda: bool(torch.ones(1))), ("int", lambda: int(torch.ones(1, dtype=torch.int64))),
                   ("index", lambda: operator.index(torch.ones(1, dtype=torch.int64)))):
    with FakeTensorMode():
        out[f"fake {name}"] = outcome(call)
for name, g in (("item", lambda x: x.item()), ("bool", bool), ("float", float)):
    out[f"vmap {name}"] = outcome(lambda: torch.func.vmap(g)(torch.ones(3)))
print(json.dumps(out))
'''


def test_python_numbers_as_upstream():
    ours, theirs = run_both(PROGRAM)
    # the program reaches what it tests: the dispatched read, the refusals
    assert theirs["item D"][1] == ["D aten._local_scalar_dense.default"]
    assert theirs["float F"][1] == ["F __float__"]
    assert theirs["fake item"][0] == "DataDependentOutputException"
    assert theirs["vmap bool"][1].startswith("vmap: It looks like you're attempting")
    different = {k: (ours.get(k), v) for k, v in theirs.items() if ours.get(k) != v}
    assert not different
    assert ours.keys() == theirs.keys()
