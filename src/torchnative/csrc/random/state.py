"""``CPUGeneratorState``: upstream's CPUGeneratorImpl (aten/src/ATen/CPUGeneratorImpl.cpp).

The state is the mt19937 engine plus the two cached Box-Muller samples. ``get_state`` returns the
5056 bytes of upstream's ``CPUGeneratorImplState`` POD, byte for byte (x86-64 layout, padding zero):

    offset  field                                   C type
       0    legacy_pod.the_initial_seed             uint64
       8    legacy_pod.left                         int32
      12    legacy_pod.seeded                       int32
      16    legacy_pod.next                         uint64
      24    legacy_pod.state[624]                   uint64 each (holds the uint32 words)
    5016    legacy_pod.normal_x / normal_y / rho    double x3 (only normal_y is used: the
                                                    cached double normal sample)
    5040    legacy_pod.normal_is_valid              int32 (+4 bytes padding)
    5048    next_float_normal_sample                float
    5052    is_next_float_normal_sample_valid       bool (+3 bytes padding)
"""

from __future__ import annotations

import os

import numpy as np

from .mt19937 import MT19937, N

DEFAULT_RNG_SEED = 67280421310721  # c10::detail::default_rng_seed_val
STATE_SIZE = 5056
_U64 = (1 << 64) - 1


class CPUGeneratorState:
    """mt19937 engine + ``next_double_normal_sample`` / ``next_float_normal_sample`` caches."""

    __slots__ = ("engine", "next_double_normal", "next_float_normal")

    def __init__(self, seed: int = DEFAULT_RNG_SEED):
        self.engine = MT19937(int(seed) & _U64)
        self.next_double_normal: float | None = None
        self.next_float_normal: float | None = None

    # -- seeding -------------------------------------------------------------------------------
    def manual_seed(self, seed: int) -> "CPUGeneratorState":
        """``set_current_seed``: reseed and drop the cached normal samples. Negative Python ints
        arrive here as their two's complement, as upstream's binding unpacks them."""
        self.next_double_normal = None
        self.next_float_normal = None
        self.engine.reseed(int(seed) & _U64)
        return self

    def initial_seed(self) -> int:
        return self.engine.seed

    def seed(self) -> int:
        """Non-deterministic reseed: upstream reads 8 bytes of /dev/urandom (readURandomLong)."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> None:
        raise RuntimeError("CPU Generator does not use offset")

    def clone(self) -> "CPUGeneratorState":
        g = CPUGeneratorState.__new__(CPUGeneratorState)
        g.engine = self.engine.copy()
        g.next_double_normal, g.next_float_normal = self.next_double_normal, self.next_float_normal
        return g

    # -- raw draws -----------------------------------------------------------------------------
    def random(self, n: int) -> np.ndarray:
        """``n`` calls of ``CPUGeneratorImpl::random()`` (uint32)."""
        return self.engine.random(int(n))

    def random64(self, n: int) -> np.ndarray:
        """``n`` calls of ``CPUGeneratorImpl::random64()`` (uint64, first word high)."""
        return self.engine.random64(int(n))

    # -- serialisation -------------------------------------------------------------------------
    def get_state(self) -> np.ndarray:
        buf = np.zeros(STATE_SIZE, np.uint8)
        e = self.engine
        buf[0:8] = np.frombuffer(np.uint64(e.seed).tobytes(), np.uint8)
        buf[8:16] = np.frombuffer(np.array([e.left, int(e.seeded)], "<i4").tobytes(), np.uint8)
        buf[16:24] = np.frombuffer(np.uint64(e.next).tobytes(), np.uint8)
        buf[24:5016] = np.frombuffer(e.state.astype("<u8").tobytes(), np.uint8)
        if self.next_double_normal is not None:
            buf[5024:5032] = np.frombuffer(np.float64(self.next_double_normal).tobytes(), np.uint8)
            buf[5040:5044] = np.frombuffer(np.int32(1).tobytes(), np.uint8)
        if self.next_float_normal is not None:
            buf[5048:5052] = np.frombuffer(np.float32(self.next_float_normal).tobytes(), np.uint8)
            buf[5052] = 1
        return buf

    def set_state(self, new_state) -> "CPUGeneratorState":
        arr = np.asarray(new_state)
        if arr.dtype != np.uint8:
            raise RuntimeError(f"expected a uint8 (torch.ByteTensor) RNG state, got {arr.dtype}")
        raw = np.ascontiguousarray(arr).reshape(-1)
        if raw.size != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found "
                               f"the input RNG state size to be {raw.size}")
        b = raw.tobytes()
        seed = int(np.frombuffer(b, "<u8", 1, 0)[0])
        left, seeded = (int(v) for v in np.frombuffer(b, "<i4", 2, 8))
        nxt = int(np.frombuffer(b, "<u8", 1, 16)[0]) & 0xFFFFFFFF  # static_cast<uint32_t>
        if not (seeded != 0 and 0 < left <= N and nxt <= N):
            raise RuntimeError("Invalid mt19937 state")
        words = np.frombuffer(b, "<u8", N, 24).astype(np.uint32)  # std::copy truncates to 32 bits
        e = MT19937.from_fields(words, left, nxt, seed, seeded != 0)
        self.engine = e
        self.next_float_normal = (float(np.frombuffer(b, "<f4", 1, 5048)[0]) if b[5052] else None)
        normal_valid = int(np.frombuffer(b, "<i4", 1, 5040)[0])
        self.next_double_normal = (float(np.frombuffer(b, "<f8", 1, 5024)[0]) if normal_valid else None)
        return self
