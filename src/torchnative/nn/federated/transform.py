"""The per-round hook on what a participant sends and what the coordinator receives.

Secure aggregation masks the update on the participant and unmasks only the sum on the
coordinator; differential privacy clips and noises. Both plug in here; the default changes
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RoundContext:
    round: int
    participant: int | None          # this participant's id (None on the coordinator)
    participants: list               # ids selected for the round
    num_samples: int = 0             # this participant's sample count (participant side)
    store: object = None             # the run's c10d store, prefixed per round ("xform/<round>/")
    timeout: float = 60.0            # bound for any wait on `store`
    seed: int = 0                    # the run's seed
    dropped: list = field(default_factory=list)  # coordinator side: selected ids that did not report


class Transform:
    def on_send(self, update: dict, ctx: RoundContext) -> dict:
        """Participant side, after local training: the dict (same names) that is sent."""
        return update

    def on_receive(self, updates: dict, weights: dict, ctx: RoundContext):
        """Coordinator side, with the round's accepted updates by participant id: returns the
        (updates, weights) the aggregator sees."""
        return updates, weights

    def privacy_cost(self):
        """A differentially private transform: ``(noise_multiplier, amplified)`` of one round,
        ``amplified`` when the round's random selection hides who took part (server-side noise
        on the aggregate); None for a transform that adds no privacy."""
        return None
