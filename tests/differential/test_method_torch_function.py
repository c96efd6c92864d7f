"""Tensor methods upstream binds by hand in C++ (``size``, ``dim``, ``numel``, ``stride``,
``float``, ``cpu``, ``numpy``, ``requires_grad_``, ...), the property setters and
``torch._C._set_grad_enabled`` ask __torch_function__ first, as upstream's do; and what torch._C
does inside is not seen (upstream's C++ calls no Python).
Against upstream torch 2.13.0, each in its own process: what a TorchFunctionMode and a
__torch_function__ subclass see per method, and the calls a mode sees over a training step
whose backward runs under it (``torch.autograd.backward`` and ``torch.autograd.grad`` have no
__torch_function__ of their own, so the engine and the kernels run with the mode on)."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import available, run_both

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import json, warnings, torch
import numpy as np
from torch.overrides import TorchFunctionMode

warnings.simplefilter("ignore")
seen = []

class F(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))

class S(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs)

def calls(t):
    return {
        "apply_": lambda: t.clone().apply_(lambda x: x), "bfloat16": t.bfloat16, "bool": t.bool,
        "byte": t.byte, "cdouble": t.cdouble, "cfloat": t.cfloat, "char": t.char,
        "const_data_ptr": t.const_data_ptr, "cpu": t.cpu, "data_ptr": t.data_ptr,
        "detach_": lambda: t.clone().detach_(), "dim": t.dim, "double": t.double,
        "element_size": t.element_size, "float": t.float, "get_device": t.get_device,
        "half": t.half, "int": t.int, "is_contiguous": t.is_contiguous, "long": t.long,
        "map2_": lambda: t.clone().map2_(t, t, lambda a, b, c: a),
        "map_": lambda: t.clone().map_(t, lambda a, b: a), "ndimension": t.ndimension,
        "nelement": t.nelement, "numel": t.numel, "numpy": t.numpy,
        "requires_grad_": lambda: t.clone().requires_grad_(),
        "retain_grad": lambda: t.clone().requires_grad_().retain_grad(), "short": t.short,
        "size": t.size, "size 1": lambda: t.size(1), "storage_offset": t.storage_offset,
        "stride": t.stride, "stride 0": lambda: t.stride(0), "type": t.type,
        "type float64": lambda: t.type(torch.float64), "untyped_storage": t.untyped_storage,
        "tolist": t.tolist, "hasattr is_non_overlapping_and_dense":
            lambda: hasattr(t, "is_non_overlapping_and_dense"),
    }

def run(f):
    try:
        v = f()
        return type(v).__name__
    except Exception as e:
        return type(e).__name__

out = {}
t = torch.ones(2, 3)
for name, f in calls(t).items():
    seen.clear()
    with F():
        result = run(f)
    out["mode " + name] = [result, seen[:]]
s = torch.ones(2, 3).as_subclass(S)
for name, f in calls(s).items():
    seen.clear()
    out["subclass " + name] = [run(f), seen[:]]

# torch._C's argument parsing reads the tensors it is handed (a 0-d tensor as a number, an
# index's kind): under a mode only the call itself is seen
u = torch.arange(6.0).reshape(2, 3)
for name, f in {"where scalar": lambda: torch.where(u > 2, u, 0.0),
                "add alpha tensor": lambda: torch.add(u, u, alpha=2),
                "mul by 0-d": lambda: u * torch.tensor(2.0),
                "index mask": lambda: u[u > 2], "index tensor": lambda: u[torch.tensor([1, 0])],
                "index slices": lambda: u[0, 1:], "setitem": lambda: u.clone().__setitem__(0, 1.0),
                "full 0-d": lambda: torch.full((2,), torch.tensor(3.0)),
                "arange 0-d": lambda: torch.arange(torch.tensor(4)),
                "cat": lambda: torch.cat([u, u]), "to": lambda: u.to(torch.float64)}.items():
    seen.clear()
    with F():
        result = run(f)
    out["call " + name] = [result, seen[:]]

# the properties' own refusals and side effects
def attempt(code):
    v = torch.ones(2, requires_grad=True)
    v.grad = torch.zeros(2)
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            exec(code, {"v": v, "torch": torch})
        return ["ok", repr(v.grad), [str(x.message) for x in w]]
    except Exception as e:
        return [type(e).__name__, str(e)]

for code in ("v.is_leaf = True", "v.name = 'x'", "del v.is_leaf", "del v.data", "del v.grad",
             "v.volatile = True", "v.grad = None", "v.requires_grad = 1", "v.shape = (2,)",
             "(v * 2).requires_grad = True", "(v * 2).requires_grad = False",
             "torch.ones(2, dtype=torch.int64).requires_grad = True"):
    out["attribute " + code] = attempt(code)

# requires_grad_'s parser (a Python bool only) runs before the mode is asked
for arg in ("True", "1", "0", "None", "1.0", "'x'", "torch.tensor(True)", "requires_grad=1",
            "requires_grad=False", "True, True", "foo=True"):
    seen.clear()
    with F():
        try:
            result = [eval(f"torch.ones(2).requires_grad_({arg}).requires_grad")]
        except Exception as e:
            result = [type(e).__name__, str(e)]
    out["requires_grad_ " + arg] = [result, seen[:]]

# size's and stride's parser ((int64_t? dim=None)) runs before the mode is asked; a 0-dim
# tensor has no dimension to name
for method in ("size", "stride"):
    for arg in ("-1", "None", "'a'", "1.0", "True", "np.int64(1)", "torch.tensor(1)",
                "torch.tensor(1.0)", "torch.tensor([1])", "[1]", "dim=0", "dim='a'", "d=1",
                "1, 2", "5"):
        seen.clear()
        with F():
            try:
                result = [str(eval(f"torch.ones(2, 3).{method}({arg})"))]
            except Exception as e:
                result = [type(e).__name__, str(e)]
        out[method + " " + arg] = [result, seen[:]]
    for arg in ("0", "-1"):
        out[method + " of a 0-dim tensor " + arg] = attempt(f"torch.ones(()).{method}({arg})")

torch.manual_seed(0)
nn = torch.nn
net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Flatten(), nn.Dropout(0.25), nn.Linear(4 * 4 * 4, 3))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x, y = torch.randn(4, 1, 8, 8), torch.randint(0, 3, (4,))
for how in ("backward method", "autograd.backward", "autograd.grad"):
    seen.clear()
    with F():
        opt.zero_grad()  # (the gradients' setters)
        loss = nn.functional.cross_entropy(net(x), y)
        if how == "backward method":
            loss.backward()
        elif how == "autograd.backward":
            torch.autograd.backward(loss)
        else:
            for p, g in zip(net.parameters(), torch.autograd.grad(loss, list(net.parameters()))):
                p.grad = g
        opt.step()
        with torch.no_grad():  # (torch._C._set_grad_enabled)
            float(loss)
    out["step " + how] = seen[:]
print(json.dumps(out))
'''


def test_methods_and_internal_calls_as_upstream():
    ours, theirs = run_both(PROGRAM)
    # the program reaches what it tests
    assert theirs["mode dim"] == ["int", ["dim"]]
    assert theirs["mode ndimension"] == ["int", ["dim"]]
    assert theirs["subclass float"] == ["S", ["float"]]
    assert "backward" in theirs["step backward method"]
    assert {"__set__", "_set_grad_enabled"} <= set(theirs["step autograd.backward"])
    assert len(theirs["step autograd.grad"]) > 50
    assert theirs["requires_grad_ 1"][0][0] == "TypeError"
    assert theirs["size 'a'"][0][0] == "TypeError" and theirs["stride 5"][0][0] == "IndexError"
    different = {k: (ours.get(k), v) for k, v in theirs.items() if ours.get(k) != v}
    assert not different
    assert ours.keys() == theirs.keys()
