"""The federated engine and the server optimizers refuse settings they cannot use when they are
made, by name: a model that is no module, an aggregator class where an instance belongs, counts
that are no ints, negative server rates and momenta, betas outside [0, 1), a tau of zero."""

from __future__ import annotations

import pytest
import torch.nn as nn

from torchnative.nn import federated as fed


@pytest.mark.parametrize("kw, error, match", [
    ({"model": "m"}, TypeError, "model must be a torch.nn.Module, got str"),
    ({"aggregator": fed.FedAvg}, TypeError, "aggregator must be an Aggregator instance"),
    ({"rounds": "2"}, TypeError, "rounds must be an int, got str"),
    ({"epochs": 1.5}, TypeError, "epochs must be an int, got float"),
    ({"rounds": 0}, ValueError, "rounds, epochs and min_participants must be >= 1"),
])
def test_engine_refuses_bad_settings(kw, error, match):
    kw = {"model": nn.Linear(2, 2), **kw}
    with pytest.raises(error, match=match):
        fed.Engine(kw.pop("model"), **kw)


@pytest.mark.parametrize("make, match", [
    (lambda: fed.FedAvgM(server_momentum=-1), "FedAvgM: server_learning_rate and server_momentum"),
    (lambda: fed.FedAvgM(server_learning_rate=float("nan")), "FedAvgM"),
    (lambda: fed.FedAdam(eta=-1), "FedAdam: eta must be >= 0"),
    (lambda: fed.FedYogi(beta_1=1.0), "FedYogi: .*betas in \\[0, 1\\)"),
    (lambda: fed.FedAdagrad(tau=0), "FedAdagrad: .*tau > 0"),
])
def test_server_optimizers_refuse_bad_settings(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_defaults_are_accepted():
    fed.Engine(nn.Linear(2, 2), rounds=2, aggregator=fed.FedAvg())
    for make in (fed.FedAvgM, fed.FedAdam, fed.FedYogi, fed.FedAdagrad):
        make()
