"""torchnative.api: each system event against each lifetime, a restart in a real second process,
and an adapting wrapper that outlives the session deltas it loses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from torchnative import adapt
from torchnative.api import EVENTS, TorchNativeAPI
from torchnative.delta import LifetimeError, select
from torchnative.testing import upstream

HERE = Path(__file__).parent


def cnn(seed=0):
    torch.manual_seed(seed)
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                      nn.Linear(4 * 64, 10))
    with torch.no_grad():  # a base that is not the default init, so a foreign base is detectable
        m[1].weight.normal_()
        m[1].bias.normal_()
    return m


# event -> lifetime -> (still on the model, saved to the store, sent)
EXPECT = {
    "background": {"request": (False, False, False), "session": (False, False, False),
                   "persistent": (True, True, False), "federated": (True, True, False)},
    "foreground": {k: (True, False, False) for k in ("request", "session", "persistent", "federated")},
    "user_switch": {"request": (False, False, False), "session": (False, False, False),
                    "persistent": (False, True, False), "federated": (False, True, False)},
    "sync_window": {"request": (True, False, False), "session": (True, False, False),
                    "persistent": (True, False, False), "federated": (True, False, True)},
    "shutdown": {"request": (False, False, False), "session": (False, False, False),
                 "persistent": (False, True, False), "federated": (False, True, False)},
}


def fire(dep, event, sent):
    if event == "user_switch":
        dep.user_switch("bob")
    elif event == "sync_window":
        dep.sync_window(lambda user, off: sent.append((user, off)))
    else:
        getattr(dep, event)()


@pytest.mark.parametrize("kind", ["request", "session", "persistent", "federated"])
@pytest.mark.parametrize("event", EVENTS)
def test_event_against_lifetime(tmp_path, event, kind):
    m = cnn()
    base = m[1].weight.detach().clone()
    dep = TorchNativeAPI(tmp_path).deploy(m, user="ann")
    d = dep.delta(kind, select.norm_affine(m))
    with torch.no_grad():
        m[1].weight.add_(0.5)
    sent = []
    fire(dep, event, sent)
    on_model, saved, was_sent = EXPECT[event][kind]
    assert torch.equal(m[1].weight, base + 0.5 if on_model else base)
    assert dep.path(type(d), "ann").exists() == saved
    assert bool(sent) == was_sent
    if was_sent:
        (user, off), = sent
        assert user == "ann" and torch.equal(off["1.weight"], (base + 0.5) - base)
        assert not off["1.bias"].any()


def test_user_switch_brings_each_user_their_own_delta(tmp_path):
    m = cnn()
    base = m[1].weight.detach().clone()
    dep = TorchNativeAPI(tmp_path).deploy(m, user="ann")
    dep.delta("persistent", select.norm_affine(m))
    with torch.no_grad():
        m[1].weight.add_(0.5)
    dep.user_switch("bob")
    assert torch.equal(m[1].weight, base)
    dep.delta("persistent", select.norm_affine(m))
    with torch.no_grad():
        m[1].weight.add_(-1.0)
    dep.user_switch("ann")
    assert torch.equal(m[1].weight, base + 0.5)
    dep.user_switch("bob")
    assert torch.equal(m[1].weight, base - 1.0)
    dep.shutdown()
    assert torch.equal(m[1].weight, base)
    with pytest.raises(RuntimeError, match="shut down"):
        dep.background()


def test_persistent_delta_is_never_discarded_silently(tmp_path):
    m = cnn()
    d = TorchNativeAPI(tmp_path).deploy(m, user="ann").delta("persistent", select.norm_affine(m))
    with pytest.raises(LifetimeError, match="persistent per-user delta may not be discarded"):
        d.discard()


RESTART = """
import json, sys, torch
sys.path.insert(0, {tests!r})
from test_api import cnn
from torchnative.api import TorchNativeAPI
out = {{}}
for user in ("ann", "bob"):
    m = cnn()
    dep = TorchNativeAPI({store!r}).deploy(m, user=user)
    out[user] = {{"kinds": [d.lifetime.name for d in dep.deltas],
                 "weight": m[1].weight.detach().view(torch.int32).tolist(),
                 "bias": m[1].bias.detach().view(torch.int32).tolist()}}
print(json.dumps(out))
"""


def test_survives_a_restart_in_a_second_process(tmp_path):
    m = cnn()
    base_w = m[1].weight.detach().view(torch.int32).tolist()
    dep = TorchNativeAPI(tmp_path).deploy(m, user="ann")
    dep.delta("persistent", select.norm_affine(m))
    with torch.no_grad():
        m[1].weight.mul_(1.25)
        m[1].bias.add_(0.125)
    want_w = m[1].weight.detach().view(torch.int32).tolist()
    want_b = m[1].bias.detach().view(torch.int32).tolist()
    dep.delta("session", select.norm_affine(m))
    with torch.no_grad():
        m[1].weight.add_(3.0)  # a session's change must not survive
    dep.shutdown()
    assert m[1].weight.detach().view(torch.int32).tolist() == base_w
    both = upstream.run_json_ours(RESTART.format(tests=str(HERE), store=str(tmp_path)))
    got, other = both["ann"], both["bob"]
    assert got["kinds"] == ["persistent per-user"]
    assert got["weight"] == want_w and got["bias"] == want_b
    assert other["kinds"] == [] and other["weight"] == base_w


def test_adapting_wrapper_outlives_its_session(tmp_path):
    m = cnn()
    m.eval()
    base = {k: v.clone() for k, v in m.state_dict().items()}
    dep = TorchNativeAPI(tmp_path).deploy(m, user="ann")
    a = dep.wrap(adapt.Tent(lr=0.1), "session")
    x = torch.randn(8, 1, 8, 8)
    a(x)
    assert a.delta.changed()
    first = a.delta
    dep.background()
    assert all(torch.equal(base[k], v) for k, v in m.state_dict().items())
    assert a.delta is not first and a.delta.changed() == []
    a(x)
    assert a.delta.changed() and a.updates == 2
    dep.shutdown()
    assert all(torch.equal(base[k], v) for k, v in m.state_dict().items())
