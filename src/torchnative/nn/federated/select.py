"""Which available participants take part in a round: a fraction (at least a minimum), a
count, or the user's own callable; seeded per round so every run picks the same."""

from __future__ import annotations

import math
import random


def choose(available, select, round: int, seed: int, minimum: int) -> list:
    ids = sorted(available)
    if callable(select):
        picked = sorted(select(list(ids), round))
        unknown = [p for p in picked if p not in available]
        if unknown:
            raise ValueError(f"select returned participants that are not available: {unknown}")
        return picked
    if isinstance(select, bool) or not isinstance(select, (int, float)):
        raise TypeError(f"select must be a fraction, a count or a callable, got {select!r}")
    if isinstance(select, float):
        if not 0.0 < select <= 1.0:
            raise ValueError(f"select as a fraction must be in (0, 1], got {select}")
        k = max(minimum, math.ceil(select * len(ids)))
    else:
        if select < 1:
            raise ValueError(f"select as a count must be >= 1, got {select}")
        k = max(minimum, select)
    k = min(k, len(ids))
    return sorted(random.Random(seed * 1_000_003 + round).sample(ids, k))
