"""Tensor constructors a user reaches for, against upstream: the legacy ones (``torch.Tensor``,
``torch.FloatTensor``, ``x.new``: sizes, data, a tensor of another dtype refused with the
expected TensorOptions, a numpy array shared, data that is no sequence refused), factories'
``requires_grad=`` (methods included, and its own message for integer dtypes), ``torch.asarray``
(aliasing, copying, requires_grad defaulting to the tensor's, numpy scalars and buffers,
``copy=False`` refusals) and ``torch.frombuffer``'s checks and warning."""
from __future__ import annotations

import json

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r'''
import array, json, warnings
import numpy as np
import torch

torch.manual_seed(0)
out = []


def show(r):
    if isinstance(r, torch.Tensor):
        r = [str(r.dtype), list(r.shape), r.tolist() if r.numel() < 10 else None,
             r.requires_grad, r.is_leaf]
    return repr(r)


def tr(name, f):
    out.append(attempt(name, f, show))


x = torch.ones(2, 3)
tr("Tensor()", lambda: torch.Tensor())
tr("Tensor(2,3)", lambda: torch.Tensor(2, 3).shape)
tr("Tensor([2,3])", lambda: torch.Tensor([2, 3]))
tr("Tensor((2,3))", lambda: torch.Tensor((2, 3)))
tr("Tensor(Size)", lambda: torch.Tensor(torch.Size([2, 3])).shape)
tr("Tensor(tensor)", lambda: torch.Tensor(torch.tensor([1, 2])))
tr("Tensor(int tensor)", lambda: torch.Tensor(torch.tensor([1, 2])))
tr("Tensor(np)", lambda: torch.Tensor(np.array([1, 2])))
tr("Tensor(-1)", lambda: torch.Tensor(-1))
tr("Tensor(2.5)", lambda: torch.Tensor(2.5))
tr("Tensor(dtype)", lambda: torch.Tensor([1], dtype=torch.int64))
tr("LongTensor(2)", lambda: torch.LongTensor(2).shape)
tr("LongTensor([1.5])", lambda: torch.LongTensor([1.5]))
tr("BoolTensor([1, 0])", lambda: torch.BoolTensor([1, 0]))
tr("ByteTensor([-1])", lambda: torch.ByteTensor([-1]))
tr("FloatTensor(float tensor)", lambda: torch.FloatTensor(torch.tensor([1.5], dtype=torch.float64)))
tr("DoubleTensor(storage)", lambda: torch.DoubleTensor(torch.DoubleStorage([1, 2])))
tr("x.new()", lambda: x.new())
tr("x.new(2)", lambda: x.new(2).shape)
tr("x.new([1,2])", lambda: x.new([1, 2]))
tr("x.new(tensor)", lambda: x.new(torch.tensor([1, 2])))
tr("x.new_tensor", lambda: x.new_tensor([1, 2]))
tr("x.new_tensor tensor", lambda: x.new_tensor(torch.tensor([1., 2.])))
tr("x.new_zeros size list", lambda: x.new_zeros([2]))
tr("x.new_zeros tuple", lambda: x.new_zeros((2, 1)))
tr("x.new_empty dtype", lambda: x.new_empty(2, dtype=torch.int8).dtype)
tr("x.new_full", lambda: x.new_full((2,), 7))
tr("x.new_ones requires", lambda: x.new_ones(2, requires_grad=True).requires_grad)
tr("torch.tensor requires int", lambda: torch.tensor([1], requires_grad=True))
tr("torch.tensor tensor warn", lambda: torch.tensor(torch.ones(1)))
tr("as_tensor dtype copy",
   lambda: (lambda a: torch.as_tensor(a, dtype=torch.float32) is a)(torch.ones(1)))
tr("as_tensor same", lambda: (lambda a: torch.as_tensor(a) is a)(torch.ones(1)))
tr("as_tensor list", lambda: torch.as_tensor([1, 2], dtype=torch.float16))
tr("asarray", lambda: torch.asarray([1, 2], dtype=torch.float32))
tr("asarray copy false",
   lambda: (lambda a: torch.asarray(a, copy=False).data_ptr() == a.data_ptr())(torch.ones(2)))
tr("asarray np", lambda: torch.asarray(np.arange(3)))
tr("asarray copy false np dtype",
   lambda: torch.asarray(np.arange(3), dtype=torch.float32, copy=False))
tr("scalar_tensor", lambda: torch.scalar_tensor(3))
tr("empty_like", lambda: torch.empty_like(x, dtype=torch.int8).shape)
tr("full_like float int", lambda: torch.full_like(torch.ones(2, dtype=torch.int64), 2.7))
tr("zeros_like memory", lambda: torch.zeros_like(x.t()).stride())
tr("ones_like contig",
   lambda: torch.ones_like(x.t(), memory_format=torch.contiguous_format).stride())
tr("rand_like int", lambda: torch.rand_like(torch.ones(2, dtype=torch.int64)))
tr("randint_like", lambda: torch.randint_like(x, 5).dtype)
tr("eye m", lambda: torch.eye(2, 3))
tr("arange float steps", lambda: torch.arange(0, 1, 0.1).shape)
tr("arange int dtype float step", lambda: torch.arange(0, 5, 1.5, dtype=torch.int64))
tr("linspace int", lambda: torch.linspace(0, 10, 4, dtype=torch.int64))
tr("logspace base", lambda: torch.logspace(0, 2, 3, base=2))
tr("tril_indices", lambda: torch.tril_indices(3, 3))
tr("complex()", lambda: torch.complex(torch.ones(1), torch.zeros(1)))
tr("polar", lambda: torch.polar(torch.ones(1), torch.zeros(1)))
tr("heaviside", lambda: torch.heaviside(torch.tensor([-1., 0., 2.]), torch.tensor([0.5])))

t = torch.ones(2); p = torch.ones(2, requires_grad=True); nl = p * 2
a32 = np.zeros(2, np.float32)
a64 = np.arange(3)
ro = np.zeros(2, np.float32)
ro.flags.writeable = False
tr("tensor same", lambda: torch.asarray(t) is t)
tr("tensor copy", lambda: torch.asarray(t, copy=True) is t)
tr("tensor dtype", lambda: torch.asarray(t, dtype=torch.float64))
tr("tensor dtype copy false", lambda: torch.asarray(t, dtype=torch.float64, copy=False))
tr("tensor device meta copy false", lambda: torch.asarray(t, device="meta", copy=False))
tr("leaf grad default", lambda: torch.asarray(p))
tr("leaf grad false", lambda: (torch.asarray(p, requires_grad=False), p.requires_grad)[1])
tr("nonleaf default", lambda: torch.asarray(nl))
tr("nonleaf false", lambda: torch.asarray(nl, requires_grad=False))
tr("nonleaf copy", lambda: torch.asarray(nl, copy=True))
tr("int requires", lambda: torch.asarray(torch.ones(2, dtype=torch.int64), requires_grad=True))
tr("np shares", lambda: (lambda x: (a32.__setitem__(0, 5), x)[1])(torch.asarray(a32)))
tr("np dtype", lambda: torch.asarray(a64, dtype=torch.float32))
tr("np dtype copy false", lambda: torch.asarray(a64, dtype=torch.float32, copy=False))
tr("np readonly", lambda: torch.asarray(ro))
tr("np readonly copy", lambda: torch.asarray(ro, copy=True))
tr("np scalar", lambda: torch.asarray(np.float32(2.5)))
tr("np scalar copy false", lambda: torch.asarray(np.float32(2.5), copy=False))
tr("np 0d", lambda: torch.asarray(np.array(2.5)))
tr("np requires", lambda: torch.asarray(np.ones(2), requires_grad=True))
tr("bytearray", lambda: torch.asarray(bytearray(b"\x00\x00\x80?")))
tr("bytearray dtype", lambda: torch.asarray(bytearray(b"\x01\x02"), dtype=torch.uint8))
tr("array.array", lambda: torch.asarray(array.array("f", [1.5, 2.5])))
tr("bytes", lambda: torch.asarray(b"\x00\x00\x80?"))
tr("list", lambda: torch.asarray([1, 2]))
tr("list dtype", lambda: torch.asarray([1, 2], dtype=torch.float16))
tr("list copy false", lambda: torch.asarray([1, 2], copy=False))
tr("list requires", lambda: torch.asarray([1., 2.], requires_grad=True))
tr("scalar", lambda: torch.asarray(3.5))
tr("scalar int", lambda: torch.asarray(3))
tr("bad dtype", lambda: torch.asarray([1], dtype="float32"))
tr("nested tensors", lambda: torch.asarray([torch.tensor(1.), torch.tensor(2.)]))

b = bytearray(range(8))
tr("basic", lambda: torch.frombuffer(b, dtype=torch.int16))
tr("count", lambda: torch.frombuffer(b, dtype=torch.int16, count=2))
tr("offset", lambda: torch.frombuffer(b, dtype=torch.int16, offset=2))
tr("offset odd", lambda: torch.frombuffer(b, dtype=torch.int16, offset=1))
tr("offset neg", lambda: torch.frombuffer(b, dtype=torch.int16, offset=-1))
tr("offset too big", lambda: torch.frombuffer(b, dtype=torch.int16, offset=8))
tr("count too big", lambda: torch.frombuffer(b, dtype=torch.int16, count=5))
tr("count 0", lambda: torch.frombuffer(b, dtype=torch.int16, count=0))
tr("empty", lambda: torch.frombuffer(bytearray(), dtype=torch.int16))
tr("not multiple", lambda: torch.frombuffer(bytearray(3), dtype=torch.int16))
tr("list", lambda: torch.frombuffer([1, 2], dtype=torch.int8))
tr("bytes ro", lambda: torch.frombuffer(b"ab", dtype=torch.int8))
tr("array", lambda: torch.frombuffer(array.array("i", [1, 2]), dtype=torch.int32))
tr("requires",
   lambda: torch.frombuffer(bytearray(4), dtype=torch.float32, requires_grad=True).requires_grad)
tr("shares",
   lambda: (lambda t: (b.__setitem__(0, 99), t[0].item())[1])(
       torch.frombuffer(b, dtype=torch.uint8)))

p = torch.ones(2, requires_grad=True)
for e in ["p.new_zeros(3)", "p.new_ones(3)", "p.new_full((2,), 5.)", "(p * 2).new_zeros(2)",
          "p.new_zeros(2, dtype=torch.int8)", "p.new_ones(2, device='meta')",
          "torch.ones(2, device='meta').new_zeros(3)", "p.new_full((2,), 1 + 1j)",
          "p.new_zeros((2, -1))", "torch.ones(2, dtype=torch.bfloat16).new_ones(2)",
          "torch.ones(1).new_full((2,), True)",
          "torch.ones(1, dtype=torch.int64).new_full((2,), 2.7)"]:
    tr(e, lambda: eval(e))
x = torch.ones(2)
for e in [
    'x.new_ones(2, requires_grad=True)', 'x.new_zeros(2, requires_grad=True)',
    'x.new_empty(2, requires_grad=True)', 'x.new_full((2,), 1., requires_grad=True)',
    'torch.zeros(2, requires_grad=True)', 'torch.ones_like(x, requires_grad=True)',
    'torch.full((2,), 1., requires_grad=True)', 'torch.arange(2., requires_grad=True)',
    'torch.rand(2, requires_grad=True)', 'torch.empty(2, requires_grad=True)',
    'torch.eye(2, requires_grad=True)', 'torch.linspace(0, 1, 2, requires_grad=True)',
    'torch.randn_like(x, requires_grad=True)',
    'torch.zeros(2, dtype=torch.int64, requires_grad=True)',
    'x.new_tensor([1.], requires_grad=True)', 'torch.tensor([1.], requires_grad=True)',
    'torch.tensor([1+1j], requires_grad=True)', 'torch.as_tensor([1.]).requires_grad',
    'torch.scalar_tensor(1., requires_grad=True)',
    'torch.empty_strided((2,), (1,), requires_grad=True)',
    'torch.full_like(x, 2, requires_grad=True)', 'torch.randint(3, (2,), requires_grad=True)',
    'torch.normal(0., 1., (2,), requires_grad=True)',
    'torch.ones(2, requires_grad=True, dtype=torch.complex64)',
]:
    tr(e, lambda: (lambda r: [r.requires_grad, r.is_leaf, str(r.dtype)])(eval(e)))
print(json.dumps(out))
'''


def test_constructors_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = sides.on_both(PROGRAM)
    byname = {rec[0]: rec for rec in theirs}
    assert byname["x.new_ones(2, requires_grad=True)"][2].startswith("[True, True")
    assert byname["FloatTensor(float tensor)"][1] == "TypeError"
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t], indent=1)
