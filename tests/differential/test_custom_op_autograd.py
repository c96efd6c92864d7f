"""Operators defined in Python with their gradient registered through torch.library
(``register_autograd`` on a ``torch.library.define``d op and on a ``custom_op``): the autograd
kernel the registration installs runs, records its own node and redispatches below autograd, as
on upstream. Also what runs below autograd records nothing (the exclude guards, aten::detach). torchvision's operators and the kernels contract get their gradients this way."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import available, run_both

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import json, torch
out = {}
torch.library.define("tnlib::twice", "(Tensor x, float k=2.0) -> Tensor")

@torch.library.impl("tnlib::twice", "CPU")
def _(x, k=2.0):
    return x * k

def backward(ctx, g):  # deliberately not the derivative of x * k: the registered one must run
    return g * 100, None

torch.library.register_autograd("tnlib::twice", backward)
x = torch.ones(3, requires_grad=True)
y = torch.ops.tnlib.twice(x, 3.0)
out["forward"] = y.tolist()
out["grad_fn"] = type(y.grad_fn).__name__
y.sum().backward()
out["grad"] = x.grad.tolist()
with torch.no_grad():
    z = torch.ops.tnlib.twice(x)
out["no_grad"] = [z.tolist(), z.requires_grad]

@torch.library.custom_op("tnlib::sq", mutates_args=())
def sq(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x.detach() ** 2 * scale

def setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.scale = inputs[1]

def bw(ctx, g):
    (x,) = ctx.saved_tensors
    return 2 * x * g * ctx.scale, None

sq.register_autograd(bw, setup_context=setup)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(sq(x, 0.5) * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
out["custom_op_grad"] = x.grad.tolist()
x2 = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
out["gradcheck"] = torch.autograd.gradcheck(lambda t: sq(t, 3.0), (x2,))
t = torch.ones(1, requires_grad=True)
u = torch.ones(1)
f = torch._C._any_requires_grad
out["any_requires_grad"] = [f(u), f(t), f(u, t), f([u, t]), f((u, [t])), f([[t]]), f({"a": t}),
                            f(x=t), f(1, "a"), f([1, t])]
x = torch.ones(2, requires_grad=True)
with torch._C._AutoDispatchBelowAutograd():
    y = x * 2
    z = torch.ops.aten.mul.Tensor(x, x)
with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.AutogradCPU)):
    w = x.sin()
out["below_autograd_records_nothing"] = [y.requires_grad, z.requires_grad, w.requires_grad,
                                         (x * 2).requires_grad]
y = torch.ones(2, requires_grad=True) * 2
d, e = torch.detach(y), torch.ops.aten.detach.default(y)
d.add_(1)
out["detach_function"] = [d.requires_grad, d.grad_fn is None, e.requires_grad, d._is_view(),
                          d._version, y._version, y.tolist()]
print(json.dumps(out))
'''


def test_registered_autograd_kernels_run_as_upstream():
    ours, theirs = run_both(PROGRAM)
    # the registered backward ran (the operator's own derivative would give 3.0 per element)
    assert theirs["grad"] == [100.0, 100.0, 100.0]
    assert theirs["custom_op_grad"] == [1.0, 20.0, 300.0]
    assert theirs["below_autograd_records_nothing"] == [False, False, False, True]
    assert theirs["detach_function"][:3] == [False, True, False]
    assert ours == theirs
