"""Federated learning over torch.distributed: participants train locally and send deltas (the
federated lifetime), a coordinator aggregates. See docs/federated.md.

    from torchnative.nn import federated
    engine = federated.Engine(model, rounds=20, aggregator=federated.FedAvg())
    engine.participate(batches)   # rank 0 coordinates (no batches), the others train
"""

from .aggregators import (ALL as AGGREGATORS, Aggregator, Bulyan, FedAdagrad, FedAdam, FedAvg,
                          FedAvgM, FedMedian, FedProx, FedTrimmedAvg, FedYogi, Krum, MultiKrum)
from .coordinator import RoundReport
from .engine import Engine
from .errors import (FederatedError, PayloadTooLarge, QuorumError, RejectedUpdate, StaleUpdate)
from .participant import ParticipantRound
from .transform import RoundContext, Transform
from .validate import check_update

__all__ = ["Engine", "Transform", "RoundContext", "RoundReport", "ParticipantRound",
           "Aggregator", "FedAvg", "FedAvgM", "FedProx", "FedAdam", "FedYogi", "FedAdagrad",
           "FedMedian", "FedTrimmedAvg", "Krum", "MultiKrum", "Bulyan", "AGGREGATORS",
           "FederatedError", "QuorumError", "RejectedUpdate", "StaleUpdate", "PayloadTooLarge",
           "check_update"]


def __getattr__(name):
    # secure aggregation, differential privacy and the Flower adapter carry dependencies of their
    # own (cryptography, scipy, flwr): they load on first use, not with the engine
    if name in ("secagg", "privacy", "flower"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
