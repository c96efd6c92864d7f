"""The generator as a user drives it: seeds of every kind (a float or a string refused, numpy
integers refused as upstream's unsigned unpacking refuses them, negative and past-range ints),
its state (a wrong state refused), fork_rng, and the samplers' argument checks (multinomial,
bernoulli, normal, randint, uniform_, exponential_, geometric_, log_normal_, random_, poisson) --
compared with upstream, values, errors and warnings."""
from __future__ import annotations

import json

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r'''
torch.manual_seed(0)
out = []


def show(r):
    if isinstance(r, torch.Tensor):
        r = [str(r.dtype), list(r.shape), r.flatten().tolist()[:4]]
    return repr(r)


def tr(name, f):
    out.append(attempt(name, f, show))


g = torch.Generator()
tr("seed neg", lambda: g.manual_seed(-1).initial_seed())
tr("seed big", lambda: g.manual_seed(2**64).initial_seed())
tr("seed float", lambda: g.manual_seed(1.5))
tr("seed str", lambda: g.manual_seed("1"))
tr("manual_seed neg", lambda: torch.manual_seed(-5).initial_seed())
tr("get_state", lambda: (g.get_state().dtype, g.get_state().shape))
tr("set_state bad", lambda: g.set_state(torch.zeros(10, dtype=torch.uint8)))
tr("set_state float", lambda: g.set_state(torch.zeros(5056)))
tr("set_state ok",
   lambda: (g.manual_seed(3), g.set_state(g.get_state()), torch.rand(2, generator=g))[2])
tr("seed()", lambda: isinstance(g.seed(), int))
tr("device", lambda: g.device)
tr("rand gen wrong type", lambda: torch.rand(2, generator="g"))
tr("fork_rng", lambda: (torch.manual_seed(0),
                        [torch.random.fork_rng().__enter__(), torch.rand(1)][1], torch.rand(1))[2])
tr("get_rng_state", lambda: torch.get_rng_state().shape)
tr("set_rng_state bad", lambda: torch.set_rng_state(torch.zeros(3, dtype=torch.uint8)))
tr("randperm gen", lambda: torch.randperm(5, generator=torch.Generator().manual_seed(1)))
tr("multinomial no replace too many", lambda: torch.multinomial(torch.ones(3), 4))
tr("multinomial zero", lambda: torch.multinomial(torch.zeros(3), 1))
tr("multinomial inf", lambda: torch.multinomial(torch.tensor([1., float('inf')]), 1))
tr("bernoulli p>1", lambda: torch.bernoulli(torch.tensor([1.5])))
tr("normal std neg tensor", lambda: torch.normal(torch.zeros(2), torch.tensor([1., -1.])))
tr("randint low>=high", lambda: torch.randint(3, 3, (2,)))
tr("randint dtype bool", lambda: torch.randint(0, 2, (3,), dtype=torch.bool))
tr("uniform_ from>to", lambda: torch.empty(2).uniform_(1, 0))
tr("exponential_ neg", lambda: torch.empty(2).exponential_(-1))
tr("geometric_ bad", lambda: torch.empty(2).geometric_(1.5))
tr("cauchy_", lambda: torch.empty(2).cauchy_(generator=torch.Generator().manual_seed(0)))
tr("log_normal_ bad", lambda: torch.empty(2).log_normal_(0, -1))
tr("random_ bool", lambda: torch.empty(3, dtype=torch.bool).random_(
    generator=torch.Generator().manual_seed(0)))
tr("random_ range", lambda: torch.empty(3, dtype=torch.int8).random_(100, 200))
tr("poisson neg", lambda: torch.poisson(torch.tensor([-1.])))
tr("initial_seed default", lambda: torch.manual_seed(7) and torch.initial_seed())
for v in [2**63, 2**64 - 1, -2**63, -2**63 - 1, True, np.int64(5), 2**64]:
    tr(f"gen seed {v!r}", lambda: torch.Generator().manual_seed(v).initial_seed())
print(json.dumps(out))
'''


def test_generator_api_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = sides.on_both(PROGRAM)
    byname = {rec[0]: rec for rec in theirs}
    assert byname["seed float"][1] == "RuntimeError"
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t], indent=1)
