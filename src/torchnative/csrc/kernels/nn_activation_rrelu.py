"""RReLU (Activation.cpp): rrelu and rrelu_ as upstream's composites over rrelu_with_noise, its
CPU kernel, and rrelu_with_noise_backward.

Training draws one ``uniform_real_distribution<double>(lower, upper)`` value per element that
is <= 0 (NaN is not), in the input's logical order, from the generator's 64-bit stream: the low
53 bits scaled by 2**-53, times (upper - lower), plus lower, in double, with lower and upper
first rounded to the opmath type (float below double) as ``Scalar::to<opmath_t>`` does. The
draw is rounded to opmath, the output is input * r rounded to the dtype, the noise r itself
(1 where the input is positive). Evaluation is leaky_relu with the mean of the bounds.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from ..random.distributions import uniform_double
from .random_ops import _engine
from .support.common import arr, opmath, wrap
from .support.nn_util import not_implemented

# the training kernel's AT_DISPATCH_FLOATING_TYPES_AND(BFloat16): no float16 on the CPU
_FLOATS = frozenset(D.BY_NAME[n] for n in ("float32", "float64", "bfloat16"))


def _check_bounds(lower, upper):
    if not float(lower) <= float(upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _train(self, lower, upper, generator):
    """(output, noise) as numpy arrays in the input's shape, contiguous."""
    x = np.ascontiguousarray(arr(self)).reshape(-1)
    om = opmath(self._dtype).type
    lo, hi = float(om(lower)), float(om(upper))
    take = x <= 0
    r = np.ones(x.shape, om)
    k = int(np.count_nonzero(take))
    if k:
        u = uniform_double(_engine(generator), k)
        r[take] = (u * (hi - lo) + lo).astype(om)
    out = (x.astype(om) * r).reshape(self._size)
    return out, r.reshape(self._size)


def _write(dest, values):
    call("copy_", dest, wrap(np.ascontiguousarray(values), dest._dtype))


def _rrelu_with_noise_into(output, self, noise, lower, upper, training, generator):
    _check_bounds(lower, upper)
    if training:
        if self._dtype not in _FLOATS:
            raise not_implemented("rrelu_with_noise_out_cpu", self._dtype)
        out, r = _train(self, lower, upper, generator)
        _write(noise, r)
        _write(output, out)
    else:
        slope = (float(lower) + float(upper)) / 2
        call("copy_", output, call("leaky_relu", self, slope))
    return output


@kernel("rrelu_with_noise")
def rrelu_with_noise(self, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    return _rrelu_with_noise_into(_contiguous_like(self), self, noise, lower, upper, training, generator)


@kernel("rrelu_with_noise_")
def rrelu_with_noise_(self, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    return _rrelu_with_noise_into(self, self, noise, lower, upper, training, generator)


@kernel("rrelu_with_noise.out")
def rrelu_with_noise_out(self, noise, lower=0.125, upper=1.0 / 3.0, training=False,
                         generator=None, *, out):
    from ..dispatch.structured import resize_out

    resize_out(out, self._size)
    return _rrelu_with_noise_into(out, self, noise, lower, upper, training, generator)


def _contiguous_like(self):
    """empty_like(self, LEGACY_CONTIGUOUS_MEMORY_FORMAT)."""
    return empty(self._size, self._dtype, self.device)


@kernel("rrelu", composite=True)
def rrelu(self, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    _check_bounds(lower, upper)
    return call("rrelu_with_noise", self, _contiguous_like(self), lower, upper, training, generator)


@kernel("rrelu_", composite=True)
def rrelu_(self, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    _check_bounds(lower, upper)
    return call("rrelu_with_noise_", self, _contiguous_like(self), lower, upper, training, generator)


@kernel("rrelu_with_noise_backward")
def rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training, self_is_result):
    """grad * noise when trained with a real range, else leaky_relu's gradient at the mean."""
    if training and float(upper) - float(lower) > 1e-6:
        return call("mul.Tensor", grad_output, noise)
    slope = (float(lower) + float(upper)) / 2
    return call("leaky_relu_backward", grad_output, self, slope, self_is_result)
