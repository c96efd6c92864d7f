"""Secure aggregation (SecAgg+): the coordinator learns the sum of the updates, nothing else."""

from .protocol import Config, Coordinator, Participant, SecAggRoundFailed, neighbours
from .rounds import run_round

__all__ = ["Config", "Coordinator", "Participant", "SecAggRoundFailed", "neighbours", "run_round"]
