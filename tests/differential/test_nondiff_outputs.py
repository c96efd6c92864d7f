"""Operators whose outputs derivatives.yaml declares non-differentiable (``output_differentiability:
[False]``: histc, view.dtype, view_copy.dtype, the comparisons...): upstream records nothing for
them, not even a NotImplemented node, and ``view(dtype)`` is a non-differentiable view (storage
and version counter shared, no ``_base``, in-place allowed on a leaf's)."""

from __future__ import annotations

import pytest

import sides
from torchnative.testing.upstream import available

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
def flags(t, base=None):
    return [t.requires_grad, t.grad_fn is not None, t.is_leaf, t._base is not None,
            base is not None and t._base is base, str(t.dtype)]

out = {}
x = torch.rand(10, requires_grad=True)
out["histc"] = flags(torch.histc(x, bins=4))
o = torch.empty(4)
out["histc out"] = outcome(lambda: flags(torch.histc(x, bins=4, out=o)))
out["view_copy.dtype"] = flags(torch.ops.aten.view_copy.dtype(x, torch.float32))
out["ne"] = flags(x.ne(0.5))
out["view dtype same"] = flags(x.view(torch.float32), x)
out["view dtype int"] = flags(x.view(torch.int32), x)
y = x * 2
out["view dtype non-leaf"] = flags(y.view(torch.float32), y)
t = torch.ones(4)
v = t.view(torch.int32)
v.add_(1)
out["versions shared"] = [t._version, v._version, flags(v, t)]
with torch.no_grad():
    out["no_grad view"] = flags(x.view(torch.float32), x)
leaf = torch.ones(4, requires_grad=True)
out["in-place on a leaf's view"] = outcome(lambda: (leaf.view(torch.float32).mul_(2), leaf._version, leaf.tolist())[1:])
out["view then backward"] = outcome(lambda: (x.view(torch.float32) * 2).sum().backward())
print(json.dumps(out))
'''


def test_nondifferentiable_outputs_record_nothing():
    ours, theirs = sides.on_both(PROGRAM)
    assert theirs["histc"][0] is False and theirs["view dtype same"][3] is False
    wrong = sides.differing(ours, theirs)
    assert wrong == {}
