"""at::mt19937 (aten/src/ATen/core/MT19937RNGEngine.h) with numpy's MT19937 producing the words.

The engine is Matsumoto-Nishimura MT19937 with upstream's bookkeeping kept verbatim: ``left``
counts down to the next twist and ``next`` indexes the state, exactly as ``mt19937_data_pod``
stores them, so a state read from upstream (``get_state``) continues bit for bit here.
Seeding leaves ``left = 1``: the state twists before the first draw.

numpy's ``MT19937`` is the same engine (same twist, same tempering); its state is the 624 words
and ``pos``, the index of the next word, twisting first when ``pos == 624``. Upstream's state maps
onto it whenever ``left + next == 625`` (every state a draw leaves behind) or ``left == 1``
(the next draw twists, so ``next`` no longer matters): then ``pos = 625 - left``. Any other state
(``set_state`` accepts every ``0 < left <= 624, next <= 624``) reads its words here until the
next twist, after which numpy takes over.
"""

from __future__ import annotations

import numpy as np

N = 624
M = 397
MATRIX_A = np.uint32(0x9908B0DF)
UMASK = np.uint32(0x80000000)
LMASK = np.uint32(0x7FFFFFFF)
_U32 = np.uint32
_FULL_RANGE = 1 << 32


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
    """``next_state``: one generation of all 624 words (returns a new array). The reference the
    tests hold numpy's engine to.

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


def _numpy_engine(key: np.ndarray, pos: int, bg=None):
    if bg is None:
        bg = np.random.MT19937(0)
    bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
    return bg, np.random.Generator(bg)


_checked = False

# Up to this many words ``random_raw`` (uint64 per word, then narrowed) is the cheaper source:
# ``integers`` pays ~5 us a call before its first word (10 words: 0.7 us against 5; 8K: 23 against
# 28); for many more ``integers``, writing uint32 or the pairs at once, wins.
RAW_WORDS = 1 << 13
RAW_PAIRS = 1 << 10


def _check_numpy_stream() -> None:
    """numpy hands out the raw tempered words three ways: ``random_raw`` (one word per uint64),
    ``Generator.integers(0, 2**32, dtype=uint32)`` (full range: the words one by one) and
    ``integers(0, 2**64, dtype=uint64)`` (full range: two words, the first as the high half,
    which is upstream's ``random64``). Confirm all three once, against the reference twist, so a
    numpy that changed any of them fails loudly instead of drawing different numbers."""
    global _checked
    key = init_state(5489)
    first = twist(key)
    want = temper(np.concatenate([first, twist(first)]))  # 1248 words: past a twist
    _, gen = _numpy_engine(key, N)
    words = gen.integers(0, _FULL_RANGE, 700, dtype=np.uint32)
    bg, gen = _numpy_engine(key, N)
    raw = bg.random_raw(700)
    bg, gen = _numpy_engine(key, N)
    pairs = gen.integers(0, 1 << 64, 624, dtype=np.uint64)
    hi, lo = want.astype(np.uint64)[0::2], want.astype(np.uint64)[1::2]
    if not (np.array_equal(words, want[:700]) and np.array_equal(raw, want[:700]) and
            np.array_equal(pairs, (hi << np.uint64(32)) | lo)):
        raise RuntimeError(f"numpy {np.__version__}'s MT19937 raw or full-range integer streams "
                           "are not the raw mt19937 stream; torchnative's CPU generator cannot "
                           "draw from them")
    _checked = True


def _legacy_seeding_works() -> bool:
    """numpy's ``MT19937._legacy_seeding`` runs ``init_genrand`` (upstream's ``init_with_uint32``)
    in C and leaves ``pos = 624`` (twist first), ~10x cheaper than ``init_state``'s loop. It is
    numpy's private API: used only if present and giving ``init_state``'s words here."""
    bg = np.random.MT19937(0)
    seeding = getattr(bg, "_legacy_seeding", None)
    if seeding is None:
        return False
    try:
        for seed in (0, 5489, 0xFFFFFFFF):
            seeding(seed)
            st = bg.state["state"]
            if st["pos"] != N or not np.array_equal(st["key"], init_state(seed)):
                return False
    except (TypeError, ValueError):
        return False
    return True


_LEGACY_SEEDING = None


class MT19937:
    """The engine: ``state`` (624 uint32), ``left``, ``next``, ``seed``, ``seeded``.

    ``_bg``/``_gen`` hold the words while the state maps onto numpy's; ``_key`` holds them
    (and is None otherwise) while it does not.
    """

    __slots__ = ("_bg", "_gen", "_key", "_left", "_next", "seed", "seeded")

    def __init__(self, seed: int = 5489):
        self.reseed(seed)

    @classmethod
    def from_fields(cls, state: np.ndarray, left: int, next_: int, seed: int, seeded: bool) -> "MT19937":
        e = cls.__new__(cls)
        e.seed, e.seeded = seed, seeded
        e._set(np.array(state, np.uint32), int(left), int(next_))
        return e

    def _set(self, key: np.ndarray, left: int, next_: int) -> None:
        self._left, self._next = left, next_
        if left == 1 or left + next_ == N + 1:
            self._bg, self._gen = _numpy_engine(key, N + 1 - left, getattr(self, "_bg", None))
            self._key = None
        else:  # the numpy engine (if any) is kept for reuse; ``_key`` marks it unused
            self._key = key

    def reseed(self, seed: int) -> None:
        global _LEGACY_SEEDING
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self.seeded = True
        if _LEGACY_SEEDING is None:
            _LEGACY_SEEDING = _legacy_seeding_works()
        if _LEGACY_SEEDING:
            if getattr(self, "_bg", None) is None:
                self._bg = np.random.MT19937(0)
                self._gen = np.random.Generator(self._bg)
            self._bg._legacy_seeding(self.seed & 0xFFFFFFFF)
            self._left, self._next, self._key = 1, 0, None
        else:
            self._set(init_state(self.seed), 1, 0)

    # upstream's fields, readable and (for tests that build broken engines) writable
    @property
    def state(self) -> np.ndarray:
        if self._key is not None:
            return self._key.copy()
        return self._bg.state["state"]["key"]

    @property
    def left(self) -> int:
        return self._left

    @left.setter
    def left(self, value: int) -> None:
        self._set(self.state, int(value), self._next)

    @property
    def next(self) -> int:
        return self._next

    @next.setter
    def next(self, value: int) -> None:
        self._set(self.state, self._left, int(value))

    def copy(self) -> "MT19937":
        return MT19937.from_fields(self.state, self._left, self._next, self.seed, self.seeded)

    def is_valid(self) -> bool:
        return bool(self.seeded) and 0 < self._left <= N and self._next <= N

    def random(self, n: int) -> np.ndarray:
        """``n`` successive ``operator()()`` outputs as uint32.

        A draw decrements ``left`` and twists when it hits zero; so ``left - 1`` words can be
        taken before the next twist, after which ``left = N`` and ``next = 0``.
        """
        n = int(n)
        if n <= 0:
            return np.empty(0, np.uint32)
        head = None
        if self._key is not None:  # an unmappable state: its own words up to the twist
            head = self._own_words(n)
            n -= head.size
            if n == 0:
                return head
        if not _checked:
            _check_numpy_stream()
        if n <= RAW_WORDS:
            out = self._bg.random_raw(n).astype(np.uint32)
        else:
            out = self._gen.integers(0, _FULL_RANGE, n, dtype=np.uint32)
        self._advance(n)
        return out if head is None else np.concatenate([head, out])

    def _own_words(self, n: int) -> np.ndarray:
        """An unmappable state's words, up to its next twist, after which numpy's engine takes
        over (``left == 1``: numpy twists next)."""
        k = min(n, self._left - 1)
        if self._next + k > N:
            raise RuntimeError(f"mt19937 state with left={self._left}, next={self._next} reads "
                               "past its 624 words")
        head = temper(self._key[self._next:self._next + k])
        self._left -= k
        self._next += k
        if k < n:
            self._set(self._key, 1, self._next)
        return head

    def _advance(self, n: int) -> None:
        """upstream's ``left``/``next`` after ``n`` more words from a mappable state."""
        before = self._left - 1  # words taken before the first twist
        if n <= before:
            self._left -= n
            self._next += n
        else:
            self._next = (n - before - 1) % N + 1
            self._left = N + 1 - self._next

    def random64(self, n: int) -> np.ndarray:
        """``random64``: two successive words, the first as the high half; numpy's full-range
        uint64 draw is exactly that (checked once, ``_check_numpy_stream``). Few pairs come
        cheaper as raw words put together."""
        n = int(n)
        if self._key is not None or n <= 0:  # an unmappable state: word by word
            v = self.random(2 * n).astype(np.uint64)
            return (v[0::2] << np.uint64(32)) | v[1::2]
        if not _checked:
            _check_numpy_stream()
        if n <= RAW_PAIRS:
            v = self._bg.random_raw(2 * n)
            out = v[0::2] << np.uint64(32)
            out |= v[1::2]
        else:
            out = self._gen.integers(0, 1 << 64, n, dtype=np.uint64)
        self._advance(2 * n)
        return out
