"""What can go wrong in a federated round, each with its own name."""

from __future__ import annotations


class FederatedError(RuntimeError):
    """A run cannot go on (the coordinator went away, a participant was told to stop)."""


class QuorumError(FederatedError):
    """Too few participants reported in a round; nothing was averaged."""


class RejectedUpdate(ValueError):
    """An update was refused before aggregation (non-finite values, wrong names or shapes, a
    payload over the cap, or a round number that is not the current one)."""

    def __init__(self, message: str, participant: int | None = None, round: int | None = None):
        super().__init__(message)
        self.participant, self.round = participant, round


class StaleUpdate(RejectedUpdate):
    """An update for a round that is already closed."""


class PayloadTooLarge(RejectedUpdate):
    """An update larger than the configured payload cap."""
