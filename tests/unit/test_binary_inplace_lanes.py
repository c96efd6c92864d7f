"""add_, sub_, mul_ and div_'s dense lane (self a C-contiguous float32/float64 tensor, the other
operand a tensor of its dtype and size or a real number) writes the bits the derived in-place
kernel writes (the functional's result copied into self): special values on both sides, alphas
that take the fused multiply-add, an operand that is self, sizes on both sides of fma32's
chunked path; what is outside the lane takes the derived kernel with its errors. Controls: an
alpha rounded the other way and a lane that ignores alpha are caught."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from inplace_checks import SPECIAL, operand, same as _same
from torchnative.csrc.kernels import pointwise_binary_inplace as pbi
from torchnative.csrc.platform import cpu_capability
from torchnative.csrc.random import fpmath

_SPECIAL = SPECIAL + [2.0 ** -126]


def _operand(shape, dtype, seed):
    return operand(shape, dtype, seed, special=_SPECIAL)


def _derived(functional, self, *args, **kw):
    """The functional's result copied into a clone of self, with the in-place cast check."""
    result = functional(self, *args, **kw)
    if not torch.can_cast(result.dtype, self.dtype):
        raise RuntimeError("can't be cast to the desired output type")
    out = self.clone()
    out.copy_(result)
    return out


CASES = [
    ("add", lambda s, o: s.add_(o), torch.add, {}),
    ("add alpha", lambda s, o: s.add_(o, alpha=-1e-3), torch.add, {"alpha": -1e-3}),
    ("add int alpha", lambda s, o: s.add_(o, alpha=3), torch.add, {"alpha": 3}),
    ("sub", lambda s, o: s.sub_(o), torch.sub, {}),
    ("sub alpha", lambda s, o: s.sub_(o, alpha=0.37), torch.sub, {"alpha": 0.37}),
    ("mul", lambda s, o: s.mul_(o), torch.mul, {}),
    ("div", lambda s, o: s.div_(o), torch.div, {}),
]
# fma32's whole-array path, its chunked path over two chunks and a tail
SIZES = [(1,), (16,), (10, 256), (3, 0), (2 * fpmath._CHUNK + 77,)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SIZES, ids=str)
@pytest.mark.parametrize("name,inplace,functional,kw", CASES, ids=[c[0] for c in CASES])
def test_lane_matches_derived_kernel(dtype, shape, name, inplace, functional, kw, monkeypatch):
    s, o = _operand(shape, dtype, 1), _operand(shape, dtype, 2)
    taken = []
    real = pbi.written
    monkeypatch.setattr(pbi, "written", lambda *args: taken.append(1) or real(*args))
    for other in (o, 2.5, -3, 1e-3, True):  # a tensor, wrapped numbers
        if name.startswith("sub") and other is True:
            continue  # sub refuses bools (outside the lane, below)
        want = _derived(functional, s, other, **kw)
        got = s.clone()
        assert inplace(got, other) is got
        assert _same(got, want), (name, other)
    assert taken
    got = s.clone()  # the operand being self itself
    inplace(got, got)
    assert _same(got, _derived(functional, s, s, **kw))


def test_outside_the_lane_takes_the_derived_kernel(monkeypatch):
    monkeypatch.setattr(pbi, "written", None)          # the lane would fail if taken
    s, o = _operand((6, 5), torch.float32, 1), _operand((6, 5), torch.float32, 2)
    cases = ((s.t(), o.t()),                           # strided self
             (s, o[:1]),                               # a broadcast operand
             (s, o.double()),                          # another dtype (refused as upstream does)
             (s.half(), o.half()),
             (s.int(), o.int()),
             (s, torch.tensor(2.0)),                   # a 0-d tensor that is not a wrapped number
             (s, 1 + 2j),                              # a complex number (refused)
             (s, True))                                # a bool (sub refuses it)
    for self, other in cases:
        for inplace, functional, kw in ((lambda t, u: t.add_(u, alpha=2), torch.add, {"alpha": 2}),
                                        (lambda t, u: t.sub_(u), torch.sub, {}),
                                        (lambda t, u: t.mul_(u), torch.mul, {}),
                                        (lambda t, u: t.div_(u), torch.div, {})):
            try:
                want = _derived(functional, self.clone(), other, **kw)
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match=str(e)[:40]):
                    inplace(self.clone(), other)
                continue
            got = self.clone()
            inplace(got, other)
            assert _same(got, want)
    for bad in (True, 2j):  # alphas the functional's checks refuse
        with pytest.raises(RuntimeError, match="alpha"):
            s.clone().add_(o, alpha=bad)


def test_a_read_only_arrays_tensor_is_written_as_upstream_writes_it():
    arr = np.ones(4, np.float32)
    arr.setflags(write=False)
    with pytest.warns(UserWarning, match="not writable"):
        t = torch.from_numpy(arr)
    t.add_(1.0).mul_(3.0)
    assert arr.tolist() == [6.0] * 4


def test_meta_autograd_and_versions_unchanged():
    m = torch.empty(4, 5, device="meta")
    assert m.add_(m, alpha=2).device.type == "meta"
    p = torch.randn(4, 5, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.mul_(2.0)
    v = p.detach()
    before = v._version
    v.add_(torch.randn(4, 5), alpha=0.5).mul_(3.0).div_(2.0).sub_(1.0)
    assert v._version == before + 4


def test_modes_and_autograd_see_the_same_calls(dispatch_recorder):
    s, o = _operand((4, 5), torch.float32, 1), _operand((4, 5), torch.float32, 2)
    plain = s.clone()
    plain.add_(o, alpha=0.5).sub_(o).mul_(0.9).div_(o)
    moded = s.clone()
    with dispatch_recorder() as log:
        moded.add_(o, alpha=0.5).sub_(o).mul_(0.9).div_(o)
    assert log.seen == ["aten.add_.Tensor", "aten.sub_.Tensor", "aten.mul_.Tensor",
                        "aten.div_.Tensor"]
    assert _same(plain, moded)
    w = torch.rand(4, 5).requires_grad_()
    y = w * 1.0
    y.add_(o, alpha=0.5).mul_(3.0)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert torch.equal(w.grad, torch.full_like(w, 3.0))


@pytest.mark.parametrize("n", [fpmath._SMALL, 2 * fpmath._CHUNK + 77])
def test_control_other_rounding_of_alpha_is_caught(n, monkeypatch):
    """add_ with alpha rounds as upstream's build does (once where it contracts the multiply-add,
    twice under the DEFAULT capability); a lane that rounds the other way must differ somewhere
    (over these random values a few lanes in ten thousand do)."""
    s, o = _operand((n,), torch.float32, 1), _operand((n,), torch.float32, 2)
    want = _derived(torch.add, s, o, alpha=-1e-3)
    if cpu_capability.CONTRACTS_FMA:
        other = lambda a, b, c, out: np.add(c, a * b, out=out)  # noqa: E731
    else:
        other = fpmath.fma32
    monkeypatch.setattr(pbi, "fma", other)
    got = s.clone()
    got.add_(o, alpha=-1e-3)
    assert not _same(got, want)


def test_control_alpha_ignored_is_caught(monkeypatch):
    s, o = _operand((64,), torch.float32, 1), _operand((64,), torch.float32, 2)
    want = _derived(torch.add, s, o, alpha=-0.5)
    monkeypatch.setattr(pbi, "checked", lambda alpha, dt: np.float32(1))
    got = s.clone()
    got.add_(o, alpha=-0.5)
    assert not _same(got, want)
