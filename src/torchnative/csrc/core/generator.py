"""torch.Generator: upstream's CPU mt19937 generator (the engine lives in csrc/random).

Upstream hands torch._opaque_base.OpaqueBaseMeta over at import through
``torch._C._set_generator_metaclass`` and swaps Generator's metaclass in place; a heap
metaclass of our own (``_GeneratorMeta``, not exported) makes that swap legal in Python.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as D
from .device import device as _device
from .refuse import TorchnativeNotImplementedError
from .typename import TP_NAMES, typename

DEFAULT_SEED = 67280421310721  # c10::detail::default_rng_seed_val


class _GeneratorMeta(type):
    """Generator's metaclass until upstream hands over OpaqueBaseMeta."""


class Generator(metaclass=_GeneratorMeta):
    def __init__(self, device=None):
        dev = _device("cpu") if device is None else _device(device)
        if dev.type != "cpu":
            raise TorchnativeNotImplementedError(
                f"torch.Generator(device='{dev}')", "torchnative generates random numbers on cpu only")
        self._device = dev
        self._engine = None
        self._seed = DEFAULT_SEED

    @property
    def device(self):
        return self._device

    @property
    def _state(self):
        """The mt19937 state, created on first use (seeded with the current seed); not public,
        as upstream's Generator has no such attribute."""
        if self._engine is None:
            from ..random import CPUGeneratorState

            self._engine = CPUGeneratorState(self._seed)
        return self._engine

    def manual_seed(self, seed):
        # THPGenerator_manualSeed: an int (numpy's pass the check, then fail to unpack as
        # unsigned), read as unsigned, or as signed where that overflows
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {typename(seed)}")
        if not isinstance(seed, int):
            raise TypeError("an integer is required")
        if seed < -(1 << 63) or seed >= (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed & ((1 << 64) - 1)
        if self._engine is not None:
            self._engine.manual_seed(self._seed)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        import os

        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def get_state(self):
        from .construct import tensor_from_numpy

        return tensor_from_numpy(self._state.get_state())

    def set_state(self, new_state):
        # upstream's THPGenerator_setState checks the argument before the engine sees it
        from .tensor import TensorBase

        if not isinstance(new_state, TensorBase):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not D.BY_NAME["uint8"] or new_state.device.type != "cpu":
            raise TypeError("RNG state must be a torch.ByteTensor")
        self._state.set_state(new_state.numpy())
        self._seed = self._state.initial_seed()
        return self

    def clone_state(self):
        g = type(self)(self._device)
        g.set_state(self.get_state())
        return g

    def get_offset(self) -> int:
        raise RuntimeError("get_offset is not supported on CPU generators")

    def set_offset(self, offset: int):
        raise RuntimeError("set_offset is not supported on CPU generators")

    def graphsafe_get_state(self):
        raise TorchnativeNotImplementedError("torch.Generator.graphsafe_get_state",
                                             "graph-safe generator states serve CUDA graphs")

    def graphsafe_set_state(self, state):
        raise TorchnativeNotImplementedError("torch.Generator.graphsafe_set_state",
                                             "graph-safe generator states serve CUDA graphs")

    def __reduce__(self):
        return (type(self), (self._device,), (self._seed, None, self.get_state()))

    def __setstate__(self, state):
        seed, _offset, st = state
        self.manual_seed(seed)
        self.set_state(st)


Generator.__module__ = "torch._C"  # as upstream's pybind class (its repr, and pickles by it)
default_generator = Generator()
default_generator.seed()  # getDefaultCPUGenerator: seeded nondeterministically, per process


def set_generator_metaclass(meta) -> None:
    Generator.__class__ = meta


TORCH_C = {
    "torch._C.Generator": Generator,
    "torch._C.default_generator": default_generator,
    "torch._C._set_generator_metaclass": set_generator_metaclass,
}


TP_NAMES[Generator] = "torch._C.Generator"
