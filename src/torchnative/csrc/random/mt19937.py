"""at::mt19937 (aten/src/ATen/core/MT19937RNGEngine.h), vectorized over numpy.

The engine is Matsumoto-Nishimura MT19937 with upstream's bookkeeping kept verbatim: ``left``
counts down to the next twist and ``next`` indexes the state, exactly as ``mt19937_data_pod``
stores them, so a state read from upstream (``get_state``) continues bit for bit here.
Seeding leaves ``left = 1``: the state twists before the first draw.
"""

from __future__ import annotations

import numpy as np

N = 624
M = 397
MATRIX_A = np.uint32(0x9908B0DF)
UMASK = np.uint32(0x80000000)
LMASK = np.uint32(0x7FFFFFFF)
_U32 = np.uint32


def init_state(seed: int) -> np.ndarray:
    """``init_with_uint32``: the 624 words for ``seed`` (only its low 32 bits matter)."""
    mt = [seed & 0xFFFFFFFF]
    for j in range(1, N):  # 624 steps once per manual_seed: a Python loop is cheap enough
        prev = mt[-1]
        mt.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    return np.array(mt, dtype=np.uint32)


def _twist_part(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    y = (u & UMASK) | (v & LMASK)
    return (y >> _U32(1)) ^ np.where((v & _U32(1)).astype(bool), MATRIX_A, _U32(0))


def twist(s: np.ndarray) -> np.ndarray:
    """``next_state``: one generation of all 624 words (returns a new array).

    Word i uses the *new* word i-227 once i >= 227, so it runs in three slices whose inputs
    are all final when the slice starts.
    """
    new = np.empty_like(s)
    k = N - M  # 227
    new[:k] = s[M:] ^ _twist_part(s[:k], s[1:k + 1])
    new[k:2 * k] = new[:k] ^ _twist_part(s[k:2 * k], s[k + 1:2 * k + 1])
    new[2 * k:N - 1] = new[k:N - 1 - k] ^ _twist_part(s[2 * k:N - 1], s[2 * k + 1:N])
    new[N - 1] = new[N - 1 - k] ^ _twist_part(s[N - 1:N], new[0:1])[0]
    return new


def temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> _U32(11))
    y = y ^ ((y << _U32(7)) & _U32(0x9D2C5680))
    y = y ^ ((y << _U32(15)) & _U32(0xEFC60000))
    return y ^ (y >> _U32(18))


class MT19937:
    """The engine: ``state`` (624 uint32), ``left``, ``next``, ``seed``, ``seeded``."""

    __slots__ = ("state", "left", "next", "seed", "seeded")

    def __init__(self, seed: int = 5489):
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self.seeded = True
        self.state = init_state(self.seed)
        self.left = 1
        self.next = 0

    def copy(self) -> "MT19937":
        e = MT19937.__new__(MT19937)
        e.state, e.left, e.next, e.seed, e.seeded = self.state.copy(), self.left, self.next, self.seed, self.seeded
        return e

    def is_valid(self) -> bool:
        return bool(self.seeded) and 0 < self.left <= N and self.next <= N

    def random(self, n: int) -> np.ndarray:
        """``n`` successive ``operator()()`` outputs as uint32.

        A draw decrements ``left`` and twists when it hits zero; so ``left - 1`` words can be
        taken before the next twist, after which ``left = N`` and ``next = 0`` (we record
        ``left = N + 1`` so the same rule covers the word taken right after the twist).
        """
        out = np.empty(n, dtype=np.uint32)
        pos = 0
        while pos < n:
            if self.left == 1:
                self.state = twist(self.state)
                self.left, self.next = N + 1, 0
            k = min(n - pos, self.left - 1)
            out[pos:pos + k] = self.state[self.next:self.next + k]
            self.left -= k
            self.next += k
            pos += k
        return temper(out)

    def random64(self, n: int) -> np.ndarray:
        """``random64``: two successive words, the first as the high half."""
        w = self.random(2 * n).astype(np.uint64)
        return (w[0::2] << np.uint64(32)) | w[1::2]
