"""Server-side aggregation of the round's deltas (one family per file)."""

from .base import Aggregator, weighted_mean
from .fedavg import FedAvg, FedAvgM, FedProx
from .fedopt import FedAdagrad, FedAdam, FedYogi
from .krum import Bulyan, Krum, MultiKrum
from .robust import FedMedian, FedTrimmedAvg

ALL = {c.name: c for c in (FedAvg, FedAvgM, FedProx, FedAdam, FedYogi, FedAdagrad, FedMedian,
                           FedTrimmedAvg, Krum, Bulyan)}

__all__ = ["Aggregator", "weighted_mean", "FedAvg", "FedAvgM", "FedProx", "FedAdam", "FedYogi",
           "FedAdagrad", "FedMedian", "FedTrimmedAvg", "Krum", "MultiKrum", "Bulyan", "ALL"]
