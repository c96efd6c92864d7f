"""Float updates to the integer field and back (stochastic rounding, as SecAgg+ does).

A value clipped to [-clip, clip] maps to [0, levels]; stochastic rounding makes the integer an
unbiased estimate of the scaled value, so the error of one entry is below one step,
2 * clip / levels, and the error of a sum of n entries below n steps.
"""

from __future__ import annotations

import numpy as np


def step(clip: float, levels: int) -> float:
    return 2.0 * clip / levels


def quantize(values: np.ndarray, clip: float, levels: int, rng: np.random.Generator) -> np.ndarray:
    scaled = (np.clip(np.asarray(values, np.float64), -clip, clip) + clip) * (levels / (2.0 * clip))
    low = np.floor(scaled)
    return (low + (rng.random(scaled.shape) < scaled - low)).astype(np.int64)


def dequantize_sum(total: np.ndarray, count: int, clip: float, levels: int) -> np.ndarray:
    """The float sum of ``count`` quantized vectors whose integer sum is ``total``."""
    return np.asarray(total, np.float64) * step(clip, levels) - count * clip
