"""Each adaptation method refuses a setting it cannot use when it is made, naming the method and
the setting (a negative learning rate or threshold, a count below one, a sign that is no +-1,
an unknown optimizer); ``adapt.wrap`` refuses what is no module and a model wrapped already.
The defaults and the controls' settings (lr = 0, sign = -1) are accepted."""

from __future__ import annotations

import pytest
import torch.nn as nn

from torchnative import adapt

BAD = [
    (adapt.Tent, {"lr": -1}, ValueError, "Tent: lr must be >= 0.0"),
    (adapt.Tent, {"lr": "a"}, TypeError, "Tent: lr must be a real number, got str"),
    (adapt.Tent, {"lr": float("nan")}, ValueError, "Tent: lr"),
    (adapt.Tent, {"steps": 0}, ValueError, "Tent: steps must be >= 1"),
    (adapt.Tent, {"steps": 1.5}, TypeError, "Tent: steps must be an int"),
    (adapt.Tent, {"optim": "rmsprop"}, ValueError, "Tent: optim must be 'adam' or 'sgd'"),
    (adapt.Tent, {"sign": 2.0}, ValueError, "Tent: sign must be 1.0 or -1.0"),
    (adapt.Tent, {"momentum": True}, TypeError, "Tent: momentum must be a real number, got bool"),
    (adapt.EATA, {"e_margin": -1}, ValueError, "EATA: e_margin must be >= 0.0"),
    (adapt.EATA, {"fisher_alpha": -1}, ValueError, "EATA: fisher_alpha"),
    (adapt.ETA, {"d_margin": -0.1}, ValueError, "ETA: d_margin"),
    (adapt.SAR, {"rho": -1}, ValueError, "SAR: rho must be >= 0.0"),
    (adapt.CoTTA, {"mt": 1.5}, ValueError, r"CoTTA: mt must be in \[0.0, 1.0\]"),
    (adapt.CoTTA, {"n_aug": 0}, ValueError, "CoTTA: n_aug must be >= 1"),
    (adapt.RoTTA, {"memory_size": 0}, ValueError, "RoTTA: memory_size"),
    (adapt.RoTTA, {"num_classes": 0}, ValueError, "RoTTA: num_classes"),
    (adapt.LAME, {"knn": 0}, ValueError, "LAME: knn"),
    (adapt.MEMO, {"n_aug": -2}, ValueError, "MEMO: n_aug"),
    (adapt.TTT, {"online": "yes"}, TypeError, "TTT: online must be a bool"),
    (adapt.TTT, {"steps": 0}, ValueError, "TTT: steps"),
    (adapt.TLM, {"r": 0}, ValueError, "TLM: r must be >= 1"),
    (adapt.NormStats, {"alpha": 2}, ValueError, r"NormStats: alpha must be in \[0.0, 1.0\]"),
    (adapt.NormStats, {"momentum": -0.1}, ValueError, "NormStats: momentum"),
]


@pytest.mark.parametrize("make, kw, error, match", BAD,
                         ids=[f"{m.__name__}-{next(iter(k))}" for m, k, *_ in BAD])
def test_a_bad_setting_is_refused_by_name(make, kw, error, match):
    with pytest.raises(error, match=match):
        make(**kw)


@pytest.mark.parametrize("make", [adapt.Tent, adapt.EATA, adapt.ETA, adapt.SAR, adapt.CoTTA,
                                  adapt.RoTTA, adapt.LAME, adapt.MEMO, adapt.TTT, adapt.TLM,
                                  adapt.NormStats])
def test_defaults_are_accepted(make):
    make()


def test_controls_settings_are_accepted():
    assert adapt.Tent(lr=0.0, sign=-1).sign == -1.0
    assert adapt.SAR(lr=0, e_margin=None).lr == 0
    assert adapt.TTT(lr=0, online=False, steps=3).steps == 3


def test_wrap_refuses_what_is_no_module_and_a_wrapped_model():
    net = nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3))
    with pytest.raises(TypeError, match="model must be a torch.nn.Module, got str"):
        adapt.wrap("net", method=adapt.Tent())
    wrapped = adapt.wrap(net, method=adapt.Tent())
    with pytest.raises(ValueError, match="wrapped already"):
        adapt.wrap(wrapped, method=adapt.Tent())
    with pytest.raises(TypeError, match="method must be a torchnative.adapt method"):
        adapt.wrap(nn.Linear(2, 2), method=adapt.Tent)
