"""lerp_.Scalar, addcmul_ and addcdiv_'s dense lane (self a C-contiguous float32/float64 tensor,
the other operands tensors of its dtype and shape) writes the bits the derived in-place kernel
writes (the functional's result copied into self): special values in every operand, weights on
both sides of lerp's 0.5 branch, values that overflow; operands outside the lane (broadcast,
other dtypes, strided self, Python numbers) take the derived kernel. Control: a lerp that
always takes the small-weight branch is caught."""

from __future__ import annotations

import pytest
import torch

from inplace_checks import operand as _operand, same as _same
from torchnative.csrc.kernels import pointwise_misc as pm

A = torch.ops.aten
def _derived(functional, self, *args, **kw):
    out = self.clone()
    out.copy_(functional(self, *args, **kw))
    return out


CASES = [
    ("lerp", lambda s, a, b: A.lerp_.Scalar(s, a, 0.1), lambda s, a, b: A.lerp.Scalar(s, a, 0.1)),
    ("lerp hi", lambda s, a, b: A.lerp_.Scalar(s, a, 0.75), lambda s, a, b: A.lerp.Scalar(s, a, 0.75)),
    ("lerp -", lambda s, a, b: A.lerp_.Scalar(s, a, -2.5), lambda s, a, b: A.lerp.Scalar(s, a, -2.5)),
    ("lerp 1/2", lambda s, a, b: s.lerp_(a, 0.5), lambda s, a, b: torch.lerp(s, a, 0.5)),
    ("addcmul", lambda s, a, b: s.addcmul_(a, b, value=1e-3),
     lambda s, a, b: torch.addcmul(s, a, b, value=1e-3)),
    ("addcmul 1", lambda s, a, b: A.addcmul_(s, a, b), lambda s, a, b: A.addcmul(s, a, b)),
    ("addcdiv", lambda s, a, b: s.addcdiv_(a, b, value=-1e-3),
     lambda s, a, b: torch.addcdiv(s, a, b, value=-1e-3)),
    ("addcdiv int", lambda s, a, b: A.addcdiv_(s, a, b, value=3), lambda s, a, b: A.addcdiv(s, a, b, value=3)),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(1,), (16,), (16, 8, 3, 3), (10, 256), (3, 0)])
@pytest.mark.parametrize("name,inplace,functional", CASES, ids=[c[0] for c in CASES])
def test_lane_matches_derived_kernel(dtype, shape, name, inplace, functional, monkeypatch):
    s, a, b = (_operand(shape, dtype, k, positive=(k == 2)) for k in range(3))
    want = functional(s, a, b)
    taken = []
    real = pm._written
    monkeypatch.setattr(pm, "_written", lambda *args: taken.append(1) or real(*args))
    got = s.clone()
    assert inplace(got, a, b) is got
    assert taken and _same(got, want), name
    # the operand being self itself
    got = s.clone()
    inplace(got, got, b)
    assert _same(got, functional(s, s, b))


def test_outside_the_lane_takes_the_derived_kernel(monkeypatch):
    monkeypatch.setattr(pm, "_written", None)         # the lane would fail if taken
    s, a, b = (_operand((6, 5), torch.float32, k) for k in range(3))
    for self, x, y in ((s.t(), a.t(), b.t()),          # strided self
                       (s, a[:1], b),                 # broadcast operand
                       (s, a.double(), b),            # another dtype (refused as upstream does)
                       (s.half(), a.half(), b.half()),
                       (s, torch.tensor(2.0), b)):     # a 0-d operand
        for inplace, functional in ((lambda t, u, v: t.addcmul_(u, v, value=0.5),
                                     lambda t, u, v: torch.addcmul(t, u, v, value=0.5)),
                                    (lambda t, u, v: t.lerp_(u, 0.25),
                                     lambda t, u, v: torch.lerp(t, u, 0.25))):
            try:
                want = _derived(functional, self.clone(), x, y)
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match=str(e)[:40]):
                    inplace(self.clone(), x, y)
                continue
            got = self.clone()
            inplace(got, x, y)
            assert _same(got, want)


def test_meta_and_autograd_unchanged():
    m = torch.empty(4, 5, device="meta")
    assert A.addcmul_(m, m, m).device.type == "meta"
    p = torch.randn(4, 5, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.lerp_(torch.randn(4, 5), 0.1)
    v = p.detach()
    before = v._version
    v.addcdiv_(torch.randn(4, 5), torch.rand(4, 5) + 1)
    assert v._version == before + 1


def test_control_one_branch_is_caught(monkeypatch):
    s, a, _ = (_operand((64,), torch.float32, k) for k in range(3))
    want = A.lerp.Scalar(s, a, 0.75)
    monkeypatch.setattr(pm, "_lerp", lambda x, e, w, out=None: pm.fma(w, e - x, x, out))
    got = s.clone()
    got.lerp_(a, 0.75)
    assert not _same(got, want)


def test_modes_and_autograd_see_the_same_calls(dispatch_recorder):
    s, a, b = (_operand((4, 5), torch.float32, k, positive=(k == 2)) for k in range(3))
    plain = s.clone()
    plain.lerp_(a, 0.3).addcmul_(a, b, value=0.5).addcdiv_(a, b, value=2.0)
    moded = s.clone()
    with dispatch_recorder() as log:
        moded.lerp_(a, 0.3).addcmul_(a, b, value=0.5).addcdiv_(a, b, value=2.0)
    assert log.seen == ["aten.lerp_.Scalar", "aten.addcmul_.default", "aten.addcdiv_.default"]
    assert _same(plain, moded)
    # under grad mode, a non-leaf self records the in-place ops' history
    w = s.clone().requires_grad_()
    y = w * 1.0
    y.lerp_(a, 0.3).addcmul_(a, b, value=0.5).addcdiv_(a, b, value=2.0)
    assert y.grad_fn.name() == "AddcdivBackward0"
    y.sum().backward()
    assert torch.allclose(w.grad, torch.full_like(w, 0.7))
