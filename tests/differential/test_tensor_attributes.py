"""torch.Tensor's public attributes are upstream's, no more and no fewer, and so are those of
the other objects torch._C hands out (storages, dtypes, devices, generators, layouts, autograd
nodes, schemas) and of the modules it fills: what ours does not have is refused by name when
called, never answered by a placeholder upstream lacks (a removed ``names`` or ``is_hpu``, a
generator's ``engine``, a node's ``release_variables``). Names starting with an underscore are
internal on both sides and are not compared."""

from __future__ import annotations

from torchnative.testing import upstream

PROGRAM = r"""
import json, torch

t = torch.rand(2, 2)


def has(name):
    try:
        return hasattr(t, name)
    except Exception as e:  # a property that refuses this tensor (imag of a real one)
        return type(e).__name__


public = sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
torch.manual_seed(0)
others = {"UntypedStorage": torch.UntypedStorage(4).fill_(7), "Size": torch.Size([2]),
          "dtype": torch.float32, "device": torch.device("cpu"), "Generator": torch.Generator(),
          "finfo": torch.finfo(torch.float32), "iinfo": torch.iinfo(torch.int32),
          "layout": torch.strided, "memory_format": torch.contiguous_format,
          "qscheme": torch.per_tensor_affine, "Parameter": torch.nn.Parameter(torch.rand(2))}
leaf = torch.rand(3, requires_grad=True)


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


others.update({"MulBackward0": (leaf * 2).grad_fn, "SumBackward0": leaf.sum().grad_fn,
               "AccumulateGrad": (leaf * 2).grad_fn.next_functions[0][0],
               "a custom Function's node": Twice.apply(leaf).grad_fn,
               "FunctionSchema": torch.ops.aten.add.Tensor._schema,
               "Argument": torch.ops.aten.add.Tensor._schema.arguments[0],
               "DispatchKeySet": torch._C._dispatch_keys(leaf), "Future": torch.futures.Future()})
import importlib

# modules torch._C fills: the legacy tensor types go on torch, torch.sparse, torch.cuda and
# torch.cuda.sparse; pybind11's exported enum members (torch.SUM) on torch
modules = {m: sorted(n for n in dir(importlib.import_module(m)) if not n.startswith("_"))
           for m in ("torch", "torch.sparse", "torch.cuda", "torch.cuda.sparse",
                     "torch._C._monitor", "torch.nn.functional", "torch.linalg")}
try:
    torch.cuda.FloatTensor(2)
    cuda_type = None
except Exception as e:
    cuda_type = [type(e).__name__, str(e)]
import re

reprs = {k: re.sub(r"0x[0-9a-f]+", "0x", repr(o)) for k, o in others.items()}
print(json.dumps({"public": public, "on an instance": {n: has(n) for n in public}, "reprs": reprs,
                  "others": {k: sorted(n for n in dir(o) if not n.startswith("_"))
                             for k, o in others.items()},
                  "modules": modules, "cuda type": cuda_type}))
"""


def test_public_tensor_attributes_as_upstream():
    ours, theirs = upstream.run_both(PROGRAM)
    extra = sorted(set(ours["public"]) - set(theirs["public"]))
    missing = sorted(set(theirs["public"]) - set(ours["public"]))
    assert not extra and not missing, (extra, missing)
    assert ours["on an instance"] == theirs["on an instance"]
    # the objects torch._C hands out beside tensors (storages, dtypes, generators, layouts,
    # autograd nodes, schemas, key sets, futures)
    assert ours["others"] == theirs["others"]
    for module, names in theirs["modules"].items():
        assert ours["modules"][module] == names, (
            module, sorted(set(ours["modules"][module]) ^ set(names)))
    assert ours["cuda type"] == theirs["cuda type"]  # a build without CUDA, as upstream's here
    assert ours["reprs"] == theirs["reprs"]  # (an object's address stripped)
    assert len(theirs["public"]) > 500  # control: the listing reached torch.Tensor's methods
