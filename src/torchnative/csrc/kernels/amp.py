"""Gradient scaling's two kernels (torch.amp.GradScaler on CPU; AmpGradScalerKernels.cpp).

_amp_foreach_non_finite_check_and_unscale_ multiplies each gradient by inv_scale in place (in
the gradient's compute type: float32 for float16/bfloat16, double for float64) and writes 1.0 into
found_inf when any element is inf or NaN; an inv_scale of exactly 1 leaves the values as they are.
No version counter moves (upstream's operator has no ADInplaceOrView kernel). _amp_update_scale_ backs the
scale off after an overflow, else grows it every growth_interval clean steps (in double, rounded
to float, kept when finite).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..ops.kernel_registry import kernel
from .support.common import arr, as_compute, wrap

_FLOAT = D.BY_NAME["float32"]
_INT = D.BY_NAME["int32"]


def _check_one_element(t, name, dtype, dtype_word):
    if t.device.type != "cpu":
        raise RuntimeError(f"{name} must be a CPU tensor.")
    if t.numel() != 1:
        raise RuntimeError(f"{name} must be a 1-element tensor.")
    if t._dtype is not dtype:
        raise RuntimeError(f"{name} must be {dtype_word} tensor.")


@kernel("_amp_foreach_non_finite_check_and_unscale_")
def non_finite_check_and_unscale_(self, found_inf, inv_scale):
    if len(self) == 0:
        return
    _check_one_element(inv_scale, "inv_scale", _FLOAT, "a float")
    _check_one_element(found_inf, "found_inf", _FLOAT, "a float")
    inv = np.float32(arr(inv_scale).reshape(-1)[0])
    for t in self:
        if t.device.type != "cpu":
            raise RuntimeError("one of scaled_grads was not a CPU tensor.")
        if not t._dtype.is_floating_point or t._dtype.itemsize == 1:
            raise NotImplementedError(
                f'"_amp_foreach_non_finite_check_and_unscale_cpu" not implemented for '
                f"'{t._dtype._cpp_name}'")
        vals = as_compute(t, t._dtype)
        if not np.isfinite(vals).all():
            arr(found_inf).reshape(-1)[0] = 1.0
        if inv != 1:
            vals = vals * (inv if vals.dtype == np.float32 else np.float64(inv))
        # written in place without a version bump: upstream registers no ADInplaceOrView kernel
        # for this operator; the storage's write count still moves (caches over it see it)
        arr(t)[...] = arr(wrap(np.asarray(vals), t._dtype))
        if t._st is not None:
            t._st._tn_writes += 1


@kernel("_amp_update_scale_")
def update_scale_(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                  growth_interval):
    _check_one_element(growth_tracker, "growth_tracker", _INT, "an int")
    _check_one_element(self, "current_scale", _FLOAT, "a float")
    _check_one_element(found_inf, "found_inf", _FLOAT, "a float")
    scale = arr(self).reshape(-1)
    tracker = arr(growth_tracker).reshape(-1)
    if arr(found_inf).reshape(-1)[0]:
        scale[0] = np.float32(float(scale[0]) * scale_backoff_factor)
        tracker[0] = 0
    else:
        successful = int(tracker[0]) + 1
        if successful == growth_interval:
            grown = np.float32(float(scale[0]) * scale_growth_factor)
            if np.isfinite(grown):
                scale[0] = grown
            tracker[0] = 0
        else:
            tracker[0] = successful
    return self
