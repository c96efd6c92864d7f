"""Masks from a seed: the ChaCha20 keystream as the pseudo-random generator.

Flower's reference expands a seed with numpy's RandomState after folding it to 32 bits; the
keystream keeps the whole 256-bit seed, so a mask cannot be found by searching 2**32 seeds.
"""

from __future__ import annotations

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms


def mask(seed: bytes, size: int, modulus: int) -> np.ndarray:
    """``size`` integers uniform in [0, modulus), modulus a power of two at most 2**32."""
    if len(seed) != 32:
        raise ValueError(f"a mask seed is 32 bytes, got {len(seed)}")
    if modulus & (modulus - 1) or not 2 <= modulus <= 1 << 32:
        raise ValueError(f"modulus must be a power of two in [2, 2**32], got {modulus}")
    encryptor = Cipher(algorithms.ChaCha20(seed, b"\0" * 16), mode=None).encryptor()
    stream = encryptor.update(bytes(4 * size))
    words = np.frombuffer(stream, dtype="<u4").astype(np.int64)
    return words & (modulus - 1)  # a power-of-two modulus keeps the low bits exactly uniform
