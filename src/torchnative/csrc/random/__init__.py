"""Upstream's CPU random generator (mt19937) and its samplers, bit for bit, over numpy.

Used to build torch._C, so nothing here imports torch. Which bits depend on the CPU capability,
and how that was measured: docs/cpu.md.
"""

from .distributions import (bernoulli_, cauchy_, exponential_, geometric_, log_normal_, normal_,
                            randint, random_, uniform_, uniform_double, uniform_float)
from .sampling import dropout, multinomial, native_dropout, randperm
from .state import DEFAULT_RNG_SEED, STATE_SIZE, CPUGeneratorState

__all__ = ["CPUGeneratorState", "DEFAULT_RNG_SEED", "STATE_SIZE", "bernoulli_", "cauchy_", "dropout",
           "exponential_", "geometric_", "log_normal_", "multinomial", "native_dropout", "normal_",
           "randint", "random_", "randperm", "uniform_", "uniform_double", "uniform_float"]
