"""What a user meets in autograd's common mistakes and questions -- a saved tensor modified in
place, a second backward, an in-place change of a leaf or of its view, a non-scalar backward,
``.numpy()`` of a tensor that requires grad, unused inputs, inference tensors, hooks,
``retain_grad``, a non-leaf's ``.grad`` (upstream warns) -- the values, errors and warnings
compared with upstream's."""
from __future__ import annotations

import json

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r'''
import json, warnings
import numpy as np
import torch

out = []


def show(r):
    if isinstance(r, torch.Tensor):
        r = [str(r.dtype), list(r.shape), r.detach().tolist(), r.requires_grad,
             type(r.grad_fn).__name__ if r.grad_fn else None]
    return repr(r)


def tr(name, f):
    out.append(attempt(name, f, show))


def c1():
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    y = (b ** 2).sum()
    b.add_(1)
    y.backward()
tr("modified saved", c1)
def c2():
    a = torch.ones(3, requires_grad=True)
    y = (a * a).sum()
    y.backward()
    y.backward()
tr("backward twice", c2)
def c3():
    a = torch.ones(3, requires_grad=True)
    a.add_(1)
tr("leaf inplace", c3)
def c4():
    a = torch.ones(3, requires_grad=True)
    (a * 2).backward()
tr("nonscalar", c4)
def c5():
    a = torch.ones(3, requires_grad=True)
    return a.numpy()
tr("numpy of grad", c5)
def c6():
    a = torch.ones(3, requires_grad=True)
    b = a[0]
    b.backward()
    return a.grad
tr("index backward", c6)
def c7():
    a = torch.ones(3)
    a.backward()
tr("no grad backward", c7)
def c8():
    a = torch.ones(3, requires_grad=True)
    v = a.view(3)
    v.mul_(2)
    return v
tr("view of leaf inplace", c8)
def c9():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    v = b[:2]
    v.mul_(2)
    b.sum().backward()
    return a.grad
tr("view inplace clone", c9)
def c10():
    a = torch.ones(3, requires_grad=True)
    b = a.detach()
    b.add_(1)
    return a
tr("detach shares", c10)
def c11():
    a = torch.ones(3, requires_grad=True)
    y = a.exp()
    a.data.mul_(2)
    y.sum().backward()
    return a.grad
tr("data mutation", c11)
def c12():
    a = torch.ones(3, requires_grad=True)
    with torch.no_grad(): b = a * 2
    return b
tr("no_grad", c12)
def c13():
    a = torch.ones(2, 2, requires_grad=True)
    y = a.sum()
    g, = torch.autograd.grad(y, a, create_graph=True)
    return g
tr("grad create_graph", c13)
def c14():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    y = (a * 2).sum()
    return torch.autograd.grad(y, [a, b])
tr("unused input", c14)
def c15():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    y = (a * 2).sum()
    return torch.autograd.grad(y, [a, b], allow_unused=True)
tr("allow unused", c15)
def c16():
    a = torch.tensor([1, 2])
    a.requires_grad_()
tr("int requires grad", c16)
def c17():
    a = torch.ones(3, requires_grad=True)
    h = a.register_hook(lambda g: g * 2)
    (a * 3).sum().backward()
    return a.grad
tr("hook", c17)
def c18():
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    b.retain_grad()
    b.sum().backward()
    return b.grad
tr("retain_grad", c18)
def c19():
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    b.sum().backward()
    return b.grad
tr("nonleaf grad access", c19)
def c20():
    a = torch.ones(3, requires_grad=True)
    y = (a*2).sum()
    y.backward(inputs=[a])
    return a.grad
tr("backward inputs", c20)
def c21():
    x = torch.ones(2, requires_grad=True)
    with torch.inference_mode(): y = x * 2
    return y.requires_grad, y.is_inference()
tr("inference_mode", c21)
def c22():
    x = torch.ones(2)
    with torch.inference_mode(): y = torch.ones(2)
    y.add_(1)
tr("inference inplace outside", c22)
def c23():
    a = torch.ones(3, requires_grad=True)
    y = a.sum()
    y.backward(torch.ones(2))
tr("backward wrong grad shape", c23)
def c24():
    a = torch.ones(3, requires_grad=True)
    y = (a * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    return a.grad
tr("retain graph accumulate", c24)
def c25():
    a = torch.ones(3, requires_grad=True)
    return a.sum().item(), float(a.sum()), int(a[0])
tr("item", c25)
def c26():
    a = torch.ones(3, requires_grad=True)
    b = a.sigmoid()
    b.mul_(2)
    b.sum().backward()
    return a.grad
tr("sigmoid output inplace", c26)
def c27():
    a = torch.ones(3, requires_grad=True)
    b = torch.relu(a)
    b += 1
    b.sum().backward()
    return a.grad
tr("relu out inplace", c27)
def c28():
    w = torch.nn.Parameter(torch.ones(2))
    return repr(w), str(w.grad_fn), w.is_leaf
tr("param repr", c28)
def c29():
    a = torch.ones(3, requires_grad=True)
    b = a.tanh()
    b.mul_(2)
    b.sum().backward()
    return a.grad
tr("tanh out inplace", c29)
def c30():
    a = torch.ones(2,3, requires_grad=True)
    b = a.t()
    b.add_(1)
tr("leaf view inplace", c30)
def c31():
    a = torch.randn(3, requires_grad=True)
    torch.autograd.backward([a.sum(), (a*2).sum()])
    return a.grad
tr("multi backward", c31)
def c32():
    a = torch.ones(3, requires_grad=True)
    y = a.detach().requires_grad_()
    return y.is_leaf, y.requires_grad
tr("detach requires", c32)
def c33():
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    b.requires_grad_(False)
tr("nonleaf requires false", c33)
def c34():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    del x
    return y.grad_fn.next_functions[0][0].variable
tr("accumulate variable", c34)
def c35():
    x = torch.ones(3, requires_grad=True)
    y = (x ** 2)
    return y.grad_fn.name(), y.grad_fn._saved_self, y.grad_fn._saved_exponent
tr("saved attrs", c35)

print(json.dumps(out))
'''


def test_autograd_user_errors_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = sides.on_both(PROGRAM)
    byname = {rec[0]: rec for rec in theirs}
    assert byname["backward twice"][1] == "RuntimeError"
    assert byname["nonleaf grad access"][3]  # the warning is given
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t], indent=1)
