"""Client-side differential privacy: each participant clips its update and adds the Gaussian
noise itself, so nothing that leaves the device is un-noised (local DP, as Flower's
``LocalDpMod`` with the noise given by a multiplier of the clipping norm)."""

from __future__ import annotations

from ..transform import RoundContext, Transform
from . import clipping, noise


class LocalGaussian(Transform):
    """Clip to ``clip_norm`` and add N(0, (noise_multiplier * clip_norm)**2) per entry."""

    def __init__(self, clip_norm: float, noise_multiplier: float, seed: int | None = None):
        if clip_norm <= 0 or noise_multiplier < 0:
            raise ValueError(f"need clip_norm > 0 and noise_multiplier >= 0, got {clip_norm}, {noise_multiplier}")
        self.clip_norm, self.noise_multiplier, self.seed = clip_norm, noise_multiplier, seed

    @property
    def std(self) -> float:
        return self.noise_multiplier * self.clip_norm

    def privatize(self, update: dict, generator) -> dict:
        clipped, _ = clipping.clip(update, self.clip_norm)
        return noise.add_gaussian(clipped, self.std, generator)

    def privacy_cost(self):
        # each participant's own mechanism: the coordinator knows who was selected, so the
        # round's sampling does not amplify it (sample rate 1, every round counted)
        return self.noise_multiplier, False

    def on_send(self, update: dict, ctx: RoundContext) -> dict:
        # a seed, when given, is mixed with the round and the participant: no two draws repeat
        seed = None if self.seed is None else hash((self.seed, ctx.round, ctx.participant)) & ((1 << 63) - 1)
        return self.privatize(update, noise.generator(seed))
