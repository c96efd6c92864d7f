"""A new user's common mistakes -- shapes that do not multiply, a float or out-of-range
target, a convolution's channels, ``view`` of a non-contiguous tensor, mismatched ``cat``,
indices out of range, losses of the wrong shape, an optimizer without parameters, a state dict
missing a key, negative sizes -- met with upstream's error types, messages and warnings."""
from __future__ import annotations

import json

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r'''
import json, warnings
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
SIZES = [
    'torch.zeros(-1)', 'torch.zeros(2, -3)', 'torch.ones(-1)', 'torch.empty(-1)',
    'torch.full((-1,), 1.)', 'torch.rand(-1)', 'torch.randn(-1)', 'torch.randint(3, (-1,))',
    'torch.empty_strided((-1,), (1,))', 'x.new_zeros(-1)', 'x.new_ones(-1)', 'x.new_empty(-1)',
    'x.new_full((-1,), 1)', 'torch.zeros_like(x).resize_(-1)', 'torch.eye(-1)', 'x.view(-2)',
    'x.expand(-2)', 'torch.zeros((-1,), out=torch.empty(0))',
    'torch.ones((-1,), dtype=torch.int64)', "torch.zeros(-1, device='meta')", 'torch.randperm(-1)',
    'torch.arange(-1).reshape(-1)', 'x.repeat(-1)', 'torch.tensor([]).reshape(0, -1)',
    'torch.zeros(0, -1)',
]
out = []


def show(r):
    if isinstance(r, torch.Tensor):
        r = (str(r.dtype), tuple(r.shape))
    return repr(r)


def tr(name, f):
    out.append(attempt(name, f, show))


x = torch.randn(64, 10)
tr("linear mismatch", lambda: nn.Linear(5, 3)(x))
tr("mm mismatch", lambda: x @ torch.randn(5, 3))
tr("bmm mismatch", lambda: torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 5, 6)))
tr("matmul 1d", lambda: torch.randn(3) @ torch.randn(4))
tr("ce float target", lambda: F.cross_entropy(x, torch.zeros(64)))
tr("ce int32 target", lambda: F.cross_entropy(x, torch.zeros(64, dtype=torch.int32)))
tr("ce target oob", lambda: F.cross_entropy(x, torch.full((64,), 10)))
tr("ce batch mismatch", lambda: F.cross_entropy(x, torch.zeros(32, dtype=torch.long)))
tr("ce prob target", lambda: F.cross_entropy(x, torch.softmax(torch.randn(64, 10), 1)))
tr("nll neg target", lambda: F.nll_loss(x, torch.full((64,), -5)))
tr("conv channels", lambda: nn.Conv2d(3, 8, 3)(torch.randn(1, 1, 8, 8)))
tr("conv 3d input to 2d", lambda: nn.Conv2d(3, 8, 3)(torch.randn(3, 8, 8)))
tr("conv small input", lambda: nn.Conv2d(3, 8, 5)(torch.randn(1, 3, 3, 3)))
tr("conv 2d input", lambda: nn.Conv2d(3, 8, 3)(torch.randn(8, 8)))
tr("view noncontig", lambda: torch.randn(3, 4).t().view(12))
tr("view bad size", lambda: torch.randn(3, 4).view(5, -1))
tr("view two -1", lambda: torch.randn(3, 4).view(-1, -1))
tr("reshape bad", lambda: torch.randn(3, 4).reshape(5, 3))
tr("cat mismatch", lambda: torch.cat([torch.randn(2, 3), torch.randn(2, 4)]))
tr("cat dtype mix", lambda: torch.cat([torch.randn(2, 3), torch.ones(2, 3, dtype=torch.int64)]))
tr("stack mismatch", lambda: torch.stack([torch.randn(2, 3), torch.randn(3, 3)]))
tr("broadcast", lambda: torch.randn(3, 4) + torch.randn(5))
tr("index oob", lambda: torch.randn(3)[5])
tr("index oob neg", lambda: torch.randn(3)[-4])
tr("index tensor oob", lambda: torch.randn(3)[torch.tensor([0, 7])])
tr("embedding oob", lambda: nn.Embedding(10, 4)(torch.tensor([3, 12])))
tr("embedding float idx", lambda: nn.Embedding(10, 4)(torch.tensor([3.0])))
tr("bn eval 1 sample train", lambda: nn.BatchNorm1d(4)(torch.randn(1, 4)))
tr("bn wrong features", lambda: nn.BatchNorm1d(4)(torch.randn(8, 5)))
tr("layernorm wrong", lambda: nn.LayerNorm(5)(torch.randn(3, 4)))
tr("mse shape mismatch", lambda: F.mse_loss(torch.randn(3, 1), torch.randn(3)))
tr("bce out of range", lambda: F.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.0])))
tr("bce target shape", lambda: F.binary_cross_entropy(torch.rand(3), torch.rand(3, 1)))
tr("bce logits",
   lambda: F.binary_cross_entropy_with_logits(torch.randn(3), torch.tensor([0, 1, 1])))
tr("softmax no dim", lambda: F.softmax(torch.randn(3, 4)))
tr("max empty", lambda: torch.tensor([]).max())
tr("argmax empty", lambda: torch.tensor([]).argmax())
tr("mean int", lambda: torch.tensor([1, 2]).mean())
tr("item multi", lambda: torch.randn(3).item())
tr("bool ambiguous", lambda: bool(torch.randn(3)))
tr("numpy float16 ok", lambda: torch.randn(2).half().numpy().dtype)
tr("numpy bf16", lambda: torch.randn(2).bfloat16().numpy())
tr("sqrt int", lambda: torch.tensor([4]).sqrt())
tr("int div", lambda: torch.tensor([5]) / 2)
tr("int floordiv neg", lambda: torch.tensor([-5]) // 2)
tr("int inplace div", lambda: torch.tensor([5]).div_(2))
tr("uint8 sub", lambda: torch.tensor([1], dtype=torch.uint8) - 2)
tr("expand bad", lambda: torch.randn(3, 1).expand(2, 4))
tr("permute bad", lambda: torch.randn(3, 4).permute(0))
tr("transpose oob", lambda: torch.randn(3, 4).transpose(0, 2))
tr("squeeze dim oob", lambda: torch.randn(3).squeeze(2))
tr("unsqueeze oob", lambda: torch.randn(3).unsqueeze(3))
tr("sum dim oob", lambda: torch.randn(3).sum(1))
tr("gather idx shape", lambda: torch.randn(3, 4).gather(1, torch.tensor([[0, 5]])))
tr("scatter oob", lambda: torch.zeros(3).scatter_(0, torch.tensor([4]), 1.0))
tr("topk too big", lambda: torch.randn(3).topk(5))
tr("multinomial neg", lambda: torch.multinomial(torch.tensor([-1., 2.]), 1))
tr("randint bad", lambda: torch.randint(5, 2, (3,)))
tr("normal neg std", lambda: torch.normal(0., -1., (2,)))
tr("arange bad step", lambda: torch.arange(0, 5, -1))
tr("linspace neg steps", lambda: torch.linspace(0, 1, -1))
tr("zeros neg", lambda: torch.zeros(-1))
tr("full bool", lambda: torch.full((2,), True))
tr("tensor ragged", lambda: torch.tensor([[1, 2], [3]]))
tr("lstm wrong input", lambda: nn.LSTM(4, 8)(torch.randn(5, 3, 6)))
tr("pad too big", lambda: F.pad(torch.randn(1, 2, 3), (4, 4), mode="reflect"))
tr("interp bad", lambda: F.interpolate(torch.randn(1, 1, 4), size=(3, 3)))
tr("maxpool too big", lambda: F.max_pool2d(torch.randn(1, 1, 2, 2), 3))
tr("dropout p bad", lambda: F.dropout(torch.randn(3), p=1.5))
tr("clip grad none", lambda: nn.utils.clip_grad_norm_([nn.Parameter(torch.ones(2))], 1.0))
tr("optimizer empty", lambda: torch.optim.SGD([], lr=0.1))
tr("optimizer bad lr", lambda: torch.optim.Adam([nn.Parameter(torch.ones(1))], lr=-1))
tr("load_state_dict missing", lambda: nn.Linear(2, 2).load_state_dict({"weight": torch.ones(2, 2)}))
tr("load_state_dict shape", lambda: nn.Linear(2, 2).load_state_dict(
    {"weight": torch.ones(3, 2), "bias": torch.ones(2)}))
tr("param assign tensor", lambda: setattr(nn.Linear(2, 2), "weight", torch.ones(2, 2)))
tr("module call wrong", lambda: nn.Linear(2, 2)(torch.ones(2, 2), torch.ones(2)))
tr("sequential index", lambda: nn.Sequential(nn.ReLU())[3])
tr("unflatten sizes", lambda: torch.ones(2, 3).unflatten(1, (2, 2)))
tr("unflatten inferred", lambda: torch.ones(2, 3).unflatten(1, (-1, 2)))
tr("Unflatten module", lambda: torch.nn.Unflatten(1, (2, 2))(torch.ones(2, 3)))
tr("pixel_shuffle channels", lambda: F.pixel_shuffle(torch.ones(1, 3, 2, 2), 2))
x = torch.ones(2)
for e in SIZES:
    tr(e, lambda: eval(e))
print(json.dumps(out))
'''


def test_common_mistakes_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = sides.on_both(PROGRAM)
    errors = sum(rec[1] != "ok" for rec in theirs)
    assert errors >= 60, errors  # the mistakes are reached
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t], indent=1)
