"""Misbehaving participants for robustness measurements: a Transform that, on chosen
participants, scales or sign-flips the update before it is sent."""

from __future__ import annotations

from .transform import Transform


class Scale(Transform):
    """Multiply the update of `attackers` by `factor` (negative: sign flip, large: boosting)."""

    def __init__(self, attackers, factor: float):
        self.attackers, self.factor = set(int(a) for a in attackers), float(factor)

    def on_send(self, update, ctx):
        if ctx.participant in self.attackers:
            return {n: t * self.factor for n, t in update.items()}
        return update
