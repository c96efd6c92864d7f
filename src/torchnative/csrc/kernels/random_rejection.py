"""``_standard_gamma``, ``_sample_dirichlet``, ``poisson`` and ``binomial`` on the CPU generator
(the samplers: csrc/random/rejection.py).

Upstream's kernels write a fresh contiguous output through a ``cpu_serial_kernel``, so inputs are
read in the output's C order whatever their strides; the dtype checks run in upstream's order
(argument checks, then TensorIterator's same-dtype check, then AT_DISPATCH's "not implemented").
"""

from __future__ import annotations

import numpy as np

from ..core.construct import empty
from ..core.tensor import TensorBase
from ..dispatch.call import call
from ..dispatch.structured import _check_same, resize_out
from ..ops.kernel_registry import kernel
from ..random import dtypes as rdt
from ..random import rejection as rj
from .random_ops import _engine
from .support.broadcast import broadcast_shape
from .support.common import FLOAT64, arr, wrap
from .support.nn_util import not_implemented

_FLOATS = ("float32", "float64")


def dispatch_floating(name: str, t: TensorBase, extra=()) -> None:
    """AT_DISPATCH_FLOATING_TYPES(_AND...) refusing any other dtype, with upstream's message."""
    if t._dtype._name not in _FLOATS + tuple(extra):
        raise not_implemented(name, t._dtype)


def check_same_dtype(first: TensorBase, *others: TensorBase) -> None:
    """TensorIterator's check_all_same_dtype: every operand has the output's dtype."""
    for t in others:
        _check_same(first._dtype, t)


def iteration_shape(out_shape, *inputs: TensorBase) -> tuple:
    """TensorIterator's shape, the inputs' broadcast (the output, sized like the first argument,
    does not take part); an output of another shape is resized, with upstream's warning."""
    shape = broadcast_shape(*(t._size for t in inputs))
    if shape != tuple(out_shape):
        resize_out(empty(tuple(out_shape), inputs[0]._dtype), shape)
    return shape


def in_order(t: TensorBase, shape) -> np.ndarray:
    """``t``'s values broadcast to ``shape``, flattened in C order (the output's iteration order)."""
    return np.ascontiguousarray(np.broadcast_to(arr(t), shape)).reshape(-1)


@kernel("_standard_gamma")
def standard_gamma(self, generator=None):
    dispatch_floating("gamma_cpu", self)
    shape = tuple(self._size)
    values = rj.standard_gamma(_engine(generator), in_order(self, shape))
    return wrap(values.reshape(shape), self._dtype)


@kernel("_sample_dirichlet")
def sample_dirichlet(self, generator=None):
    dispatch_floating("dirichlet", self)
    shape = tuple(self._size)
    gamma = rj.dirichlet_gammas(_engine(generator), in_order(self, shape).astype(np.float64))
    gamma_t = wrap(gamma.reshape(shape), FLOAT64)
    total = arr(call("sum.dim_IntList", gamma_t, [-1], True))  # upstream: gamma.sum(-1, true)
    values = rj.dirichlet_normalise(gamma.reshape(shape), np.broadcast_to(total, shape),
                                    self._dtype._name == "float32")
    return wrap(np.ascontiguousarray(values).reshape(shape), self._dtype)


@kernel("poisson")
def poisson(self, generator=None):
    dispatch_floating("poisson_cpu", self, ("float16", "bfloat16"))
    shape = tuple(self._size)
    counts = rj.poisson(_engine(generator), in_order(self, shape))
    return wrap(rdt.from_int64(counts, self._dtype._name).reshape(shape), self._dtype)


@kernel("binomial")
def binomial(count, prob, generator=None):
    for t, what in ((count, "count"), (prob, "prob")):
        if not t._dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {what}, got: "
                             f"{t._dtype._cpp_name}")
    check_same_dtype(count, prob)
    shape = iteration_shape(count._size, count, prob)
    dispatch_floating("binomial_cpu", count)
    values = rj.binomial(_engine(generator), in_order(count, shape), in_order(prob, shape))
    return wrap(values.reshape(shape), count._dtype)
