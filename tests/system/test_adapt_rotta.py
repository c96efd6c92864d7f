"""RoTTA on ours: its memory bank's rules, and controls on a fog stream. Agreement with upstream
step by step is in test_adapt.py (``bn:rotta``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torchnative import adapt
from torchnative.adapt import digits_c as dc, digits_models as dm
from torchnative.adapt.rotta_memory import CategoryBalancedMemory
from torchnative.delta import MissingLayer


def _sample(v):
    return torch.full((1, 2, 2), float(v))


def test_memory_is_category_balanced():
    mem = CategoryBalancedMemory(capacity=4, num_class=2)
    for i in range(6):  # six confident samples of class 0: the class holds at most 4 / 2
        mem.add(_sample(i), 0, 0.0)
    assert [len(c) for c in mem.items] == [2, 0]
    mem.add(_sample(10), 1, 0.0)
    mem.add(_sample(11), 1, 0.0)
    assert [len(c) for c in mem.items] == [2, 2]
    # full: a newcomer of a class below its share evicts from the most occupied class (both
    # here, the highest score wins), not from its own
    data, ages = mem.samples()
    assert len(data) == 4 and all(0 < a <= 8 / 4 for a in ages)


def test_memory_evicts_the_oldest_and_most_uncertain_first():
    mem = CategoryBalancedMemory(capacity=4, num_class=2)  # two per class
    mem.add(_sample(1), 0, 0.1)   # older
    mem.add(_sample(2), 0, 0.1)   # newer
    mem.add(_sample(3), 0, 0.1)   # replaces the older one
    kept = sorted(float(s[0, 0, 0]) for s, _, _ in mem.items[0])
    assert kept == [2.0, 3.0]
    # an uncertain stored sample goes before a confident older one
    mem = CategoryBalancedMemory(capacity=4, num_class=2)  # two per class
    mem.add(_sample(1), 0, 0.0)
    mem.add(_sample(2), 0, math.log(2))  # maximal entropy for 2 classes
    mem.add(_sample(3), 0, 0.0)
    assert sorted(float(s[0, 0, 0]) for s, _, _ in mem.items[0]) == [1.0, 3.0]
    # a newcomer more uncertain than everything stored is not let in
    mem.add(_sample(4), 0, 10.0)
    assert sorted(float(s[0, 0, 0]) for s, _, _ in mem.items[0]) == [1.0, 3.0]


def test_memory_score_follows_the_reference_formula():
    mem = CategoryBalancedMemory(capacity=64, num_class=10, lambda_t=1.0, lambda_u=1.0)
    assert mem.score(32, 1.0) == pytest.approx(1 / (1 + math.exp(-0.5)) + 1 / math.log(10))
    with pytest.raises(ValueError, match="capacity"):
        CategoryBalancedMemory(capacity=0, num_class=10)


@pytest.fixture(scope="module")
def fog():
    _, _, xe, ye = dc.load_digits_split()
    return torch.from_numpy(dc.corrupt(xe[:384], "fog", 5)), ye[:384]


def _run(fog, **kw):
    torch.manual_seed(0)
    model = dm.source_model("bn")
    with torch.no_grad():
        source = model(fog[0]).argmax(1).numpy()
    a = adapt.wrap(model, method=adapt.RoTTA(**kw))
    online = torch.cat([a(fog[0][i:i + 64]) for i in range(0, 384, 64)]).argmax(1).numpy()
    with torch.no_grad():
        student = model(fog[0]).argmax(1).numpy()
        teacher = a.method.predict(model, fog[0]).argmax(1).numpy()
    y = fog[1]
    return {"source": (source != y).mean(), "online": (online != y).mean(),
            "student": (student != y).mean(), "teacher": (teacher != y).mean(),
            "changed": a.delta.changed(), "wrapped": a, "model": model}


def test_rotta_beats_the_source_and_reverts(fog):
    before = {k: v.clone() for k, v in dm.source_model("bn").state_dict().items()}
    r = _run(fog)
    assert r["online"] < r["source"] and r["teacher"] < r["source"], r
    assert any(n.endswith("running_mean") for n in r["changed"])
    r["wrapped"].revert()
    after = r["model"].state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert "memory" not in r["wrapped"].delta.state and "teacher" not in r["wrapped"].delta.state


def test_rotta_controls(fog):
    # lr = 0: the affine parameters stay; only the robust statistics follow the stream
    r0 = _run(fog, lr=0.0)
    assert r0["changed"] and all("running" in n for n in r0["changed"])
    # a flipped loss sign drives the student away from the teacher: its error rises
    up, down = _run(fog, lr=1e-2), _run(fog, lr=1e-2, sign=-1.0)
    assert down["student"] > up["student"], (up["student"], down["student"])


def test_rotta_needs_batchnorm():
    gn = dm.DigitsCNN("gn")
    with pytest.raises(MissingLayer, match="RoTTA needs a BatchNorm"):
        adapt.wrap(gn, method=adapt.RoTTA())
