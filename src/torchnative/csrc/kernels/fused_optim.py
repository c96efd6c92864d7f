"""The fused CPU optimizer steps: ``_fused_adam_``, ``_fused_adamw_``, ``_fused_sgd_``,
``_fused_adagrad_`` (and their ``tensor_lr`` overloads), as ``torch.optim``'s ``fused=True`` calls
them.

Upstream's kernels (aten/src/ATen/native/Fused{Adam,SGD,Adagrad}.cpp and
native/cpu/Fused*Kernel.cpp) walk each parameter's memory in three kinds of stretches, and the
last bit of a result depends on which one an element falls in, because the compiler contracts
``a * b + c`` into one fused multiply-add differently in each:

- the explicit ``Vectorized`` loop over whole vectors (64 bytes wide with AVX512, 32 with AVX2):
  ``BODY``;
- the scalar remainder loop, which the AVX512 build's compiler vectorizes again with 32-byte
  vectors: ``EPILOGUE`` (the AVX2 build leaves it scalar);
- what is left of that remainder, one element at a time: ``SCALAR``.

Where an expression has two products (Adam's ``v * beta2 + (1 - beta2) * g * g``, SGD's
``buf * momentum + g * (1 - dampening)``), the body and the epilogue fuse the second product and
round the first; the scalar loop fuses the first and rounds the second. Everything else that can
be fused is fused everywhere; the DEFAULT build fuses nothing (``fma`` follows the capability).
Measured bit for bit against upstream, parameters of 1..40 float32 and 1..24 float64 elements and
every option: on an AVX512 machine (AVX512 layout), and on an AVX2 machine under its own AVX2
capability and ``ATEN_CPU_CAPABILITY=default``.

The parallel split (``at::parallel_for`` over 64-byte units) changes nothing: every chunk but the
last is a whole number of vectors, so the remainder is always the parameter's last elements.

Only contiguous float32/float64 parameters are computed; float16/bfloat16 (upstream computes them
in float32 through a different loop) and strided tensors are refused by name. Like upstream,
the kernels bump no version counters.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.refuse import TorchnativeNotImplementedError
from ..platform import cpu_capability
from .support.common import FLOAT32, FLOAT64, arr
from .pointwise_math import VEC_BYTES, fma
from ..ops.kernel_registry import kernel

BODY, EPILOGUE, SCALAR = 0, 1, 2
EPILOGUE_BYTES = 32 if cpu_capability.CAPABILITY == cpu_capability.AVX512 else 0


def _expected(cond: str) -> RuntimeError:
    return RuntimeError(f"Expected {cond} to be true, but got false.  (Could this error message be "
                        "improved?  If so, please report an enhancement request to PyTorch.)")


def _check(ok: bool, cond: str) -> None:
    if not ok:
        raise _expected(cond)


def _stretches(n: int, itemsize: int) -> np.ndarray:
    """Per element of a parameter: BODY, EPILOGUE or SCALAR (see the module docstring)."""
    body = n - n % (VEC_BYTES // itemsize)
    epi = EPILOGUE_BYTES // itemsize
    kind = np.full(n, SCALAR, dtype=np.int8)
    kind[:body] = BODY
    if epi:
        kind[body:body + ((n - body) // epi) * epi] = EPILOGUE
    return kind


def _flat(t, what: str) -> np.ndarray:
    """The tensor's elements in memory order, as a writable view."""
    if t.dtype not in (FLOAT32, FLOAT64):
        raise TorchnativeNotImplementedError(
            f"fused optimizer step on {t.dtype._cpp_name} tensors",
            "upstream computes float16/bfloat16 in float32 through its own loop; torchnative "
            "computes float32 and float64 only")
    a = arr(t)
    if not a.flags.c_contiguous:
        raise TorchnativeNotImplementedError(
            f"fused optimizer step on a non-contiguous {what}",
            "upstream walks the raw memory; torchnative computes contiguous tensors only")
    return a.reshape(-1)


def _skipped(found_inf) -> bool:
    return found_inf is not None and float(arr(found_inf).reshape(-1)[0]) == 1.0


def _unscale(g: np.ndarray, grad_scale, T) -> np.ndarray:
    """grad / grad_scale (read as float, cast to the parameter's type), written back to grad."""
    if grad_scale is None:
        return g.copy()
    scaled = g / T(np.float32(arr(grad_scale).reshape(-1)[0]))
    np.copyto(g, scaled)
    return scaled


def _two_products(kind, a, b, c, d, T):
    """a * b + c * d as the loops compute it: the body and the epilogue fuse c * d, the scalar
    loop fuses a * b."""
    n = kind.shape[0]
    second = fma(c, d, a * b)
    first = fma(a, np.full(n, b, dtype=a.dtype) if np.isscalar(b) else b, c * d)
    return np.where(kind == SCALAR, first, second).astype(T)


def _full(n, v, T):
    return np.full(n, T(v), dtype=T)


# --------------------------------------------------------------------------------- Adam, AdamW
def _adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
          weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, decoupled):
    if _skipped(found_inf):
        return
    n = len(params)
    _check(len(grads) == n, "grads.size() == n_tensors")
    _check(len(exp_avgs) == n, "exp_avgs.size() == n_tensors")
    _check(len(exp_avg_sqs) == n, "exp_avg_sqs.size() == n_tensors")
    if amsgrad:
        _check(len(max_exp_avg_sqs) == n, "max_exp_avg_sqs.size() == n_tensors")
    else:
        _check(len(max_exp_avg_sqs) == 0, "max_exp_avg_sqs.empty()")
    _check(len(state_steps) == n, "state_steps.size() == n_tensors")
    for i in range(n):
        p = _flat(params[i], "parameter")
        T = p.dtype.type
        g = _unscale(_flat(grads[i], "gradient"), grad_scale, T)
        m, v = _flat(exp_avgs[i], "exp_avg"), _flat(exp_avg_sqs[i], "exp_avg_sq")
        kind = _stretches(p.shape[0], p.dtype.itemsize)
        k = p.shape[0]
        step = float(np.float32(arr(state_steps[i]).reshape(-1)[0]))  # state_step.item<float>()
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = math.sqrt(bias_correction2)
        if maximize:
            g = -g
        new_p = p.copy()
        if weight_decay != 0:
            if decoupled:  # 1 - lr * weight_decay, in double, fused too
                new_p = new_p * T(fma(np.float64(-lr), np.float64(weight_decay), np.float64(1.0)))
            else:
                g = fma(new_p, _full(k, weight_decay, T), g).astype(T)
        # exp_avg.lerp_(grad, 1 - beta1): upstream's two-sided lerp, fused
        w = T(1 - beta1)
        if abs(w) < 0.5:
            new_m = fma(_full(k, w, T), g - m, m)
        else:
            new_m = fma(_full(k, w - T(1), T), g - m, g)
        new_m = new_m.astype(T)
        new_v = _two_products(kind, v, T(beta2), T(1 - beta2) * g, g, T)
        if amsgrad:
            vmax = _flat(max_exp_avg_sqs[i], "max_exp_avg_sq")
            new_vmax = np.maximum(vmax, new_v)
            base = new_vmax
        else:
            base = new_v
        denom = np.sqrt(base) / T(bias_correction2_sqrt) + T(eps)
        # the body adds (-step_size) * m / denom, the remainder subtracts step_size * m / denom
        new_p = new_p - (T(step_size) * new_m) / denom
        np.copyto(m, new_m)
        np.copyto(v, new_v)
        if amsgrad:
            np.copyto(vmax, new_vmax)
        np.copyto(p, new_p.astype(T))


def _lr_value(lr) -> float:
    return float(arr(lr).reshape(-1)[0]) if not isinstance(lr, (int, float)) else float(lr)


for _name, _decoupled in (("_fused_adam_", False), ("_fused_adamw_", True)):
    def _make(decoupled):
        def fused(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
            _adam(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, _lr_value(lr),
                  beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf,
                  decoupled)
        return fused

    kernel(_name, f"{_name}.tensor_lr")(_make(_decoupled))


# ------------------------------------------------------------------------------------------ SGD
@kernel("_fused_sgd_", "_fused_sgd_.tensor_lr")
def _fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening,
                nesterov, maximize, is_first_step, grad_scale=None, found_inf=None):
    if _skipped(found_inf):
        return
    lr = _lr_value(lr)
    n = len(self)
    _check(len(grads) == n, "grads.size() == n_tensors")
    if momentum == 0.0:
        _check(len(momentum_buffer_list) == 0, "momentum_buffer_list.empty()")
    else:
        _check(len(momentum_buffer_list) == n, "momentum_buffer_list.size() == n_tensors")
    for i in range(n):
        p = _flat(self[i], "parameter")
        T = p.dtype.type
        k = p.shape[0]
        kind = _stretches(k, p.dtype.itemsize)
        g = _unscale(_flat(grads[i], "gradient"), grad_scale, T)
        if maximize:
            g = -g
        if weight_decay != 0.0:
            g = fma(p, _full(k, weight_decay, T), g).astype(T)
        if momentum != 0.0:
            buf = _flat(momentum_buffer_list[i], "momentum buffer")
            if is_first_step:
                new_buf = g.copy()
            else:
                new_buf = _two_products(kind, buf, T(momentum), g, _full(k, 1 - dampening, T), T)
            np.copyto(buf, new_buf)
            if nesterov:
                g = fma(new_buf, _full(k, momentum, T), g).astype(T)
            else:
                g = new_buf
        # the body adds g * (-lr), the remainder subtracts g * lr: one fused step either way
        np.copyto(p, fma(g, _full(k, -lr, T), p).astype(T))


# -------------------------------------------------------------------------------------- Adagrad
@kernel("_fused_adagrad_", "_fused_adagrad_.tensor_lr")
def _fused_adagrad_(self, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps,
                    maximize, grad_scale=None, found_inf=None):
    if _skipped(found_inf):
        return
    lr = _lr_value(lr)
    n = len(self)
    _check(len(grads) == n, "grads.size() == n_tensors")
    _check(len(state_sums) == n, "state_sums.size() == n_tensors")
    _check(len(state_steps) == n, "state_steps.size() == n_tensors")
    for i in range(n):
        p = _flat(self[i], "parameter")
        T = p.dtype.type
        k = p.shape[0]
        g = _unscale(_flat(grads[i], "gradient"), grad_scale, T)
        s = _flat(state_sums[i], "state_sum")
        step = float(np.float32(arr(state_steps[i]).reshape(-1)[0]))
        clr = lr / (1.0 + (step - 1.0) * lr_decay)
        if maximize:
            g = -g
        if weight_decay != 0.0:
            g = fma(p, _full(k, weight_decay, T), g).astype(T)
        new_s = fma(g, g, s).astype(T)
        std = np.sqrt(new_s) + T(eps)
        np.copyto(s, new_s)
        np.copyto(p, (p - (T(clr) * g) / std).astype(T))
