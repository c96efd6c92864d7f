"""The window factories of TensorFactories.cpp: hamming (hann is hamming with alpha = beta =
0.5), bartlett, blackman and kaiser, each built as upstream builds it — an arange in the
requested dtype and in-place arithmetic on it, so every rounding step is the dtype's — with a
periodic window the first L of a symmetric window of L + 1 (a narrow view, as upstream).
Also the Tensor-bounded linspace overloads torch.signal.windows calls."""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from ..platform.cpp_names import typemeta
from .special_bessel import i0
from .support.common import as_compute, wrap
from .support.nn_util import not_implemented

_LAYOUT_NAMES = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr",
                 "sparse_csc": "SparseCsc", "sparse_bsr": "SparseBsr",
                 "sparse_bsc": "SparseBsc", "_mkldnn": "Mkldnn", "jagged": "Jagged"}


def _options(dtype, layout, device, pin_memory) -> str:
    """c10's TensorOptions as its operator<< prints it; unset fields say "(default)"."""
    dname = typemeta(_dtype(dtype)._name)  # the Python binding always fills the dtype in
    dev = str(device) if device is not None else "cpu (default)"
    lay = _LAYOUT_NAMES[layout._name] if layout is not None else "Strided (default)"
    pin = ("true" if pin_memory else "false") if pin_memory is not None else "false (default)"
    return (f"TensorOptions(dtype={dname}, device={dev}, layout={lay}, requires_grad=false "
            f"(default), pinned_memory={pin}, memory_format=(nullopt))")


def _dtype(dtype):
    return dtype if dtype is not None else D.get_default_dtype()


def _start(name, window_length, dtype, layout, device, pin_memory):
    """window_function_checks, then the degenerate lengths: None to go on, else the result."""
    if layout is not None and layout._name == "sparse_coo":
        raise RuntimeError(f"{name} is not implemented for sparse types, got: "
                           f"{_options(dtype, layout, device, pin_memory)}")
    dt = _dtype(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"{_options(dtype, layout, device, pin_memory)}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length == 0:
        return call("empty.memory_format", [0], dtype=dt, device=device)
    if window_length == 1:
        return call("ones", [1], dtype=dt, device=device)
    if device is not None and str(device) == "meta":  # only the shape exists there
        return call("empty.memory_format", [window_length], dtype=dt, device=device)
    return None


def _window(name, window_length, periodic, dtype, layout, device, pin_memory, shape):
    """The checks and degenerate lengths, then ``shape(arange(n), n)`` over the symmetric length
    n (L + 1 for a periodic window, whose first L values are returned as a narrow view)."""
    done = _start(name, window_length, dtype, layout, device, pin_memory)
    if done is not None:
        return done
    n = window_length + 1 if periodic else window_length
    w = shape(call("arange", n, dtype=_dtype(dtype), device=device), n)
    return call("narrow", w, 0, 0, n - 1) if periodic else w


def _hamming(window_length, periodic, alpha, beta, dtype, layout, device, pin_memory):
    def shape(w, n):
        w = call("cos_", call("mul_.Scalar", w, math.pi * 2.0 / float(n - 1)))
        return call("add_.Scalar", call("mul_.Scalar", w, -beta), alpha)

    return _window("hamming_window", window_length, periodic, dtype, layout, device, pin_memory,
                   shape)


@kernel("hamming_window", meta=True)
def hamming_window(window_length, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _hamming(window_length, True, 0.54, 0.46, dtype, layout, device, pin_memory)


@kernel("hamming_window.periodic", meta=True)
def hamming_window_periodic(window_length, periodic, *, dtype=None, layout=None, device=None,
                            pin_memory=None):
    return _hamming(window_length, periodic, 0.54, 0.46, dtype, layout, device, pin_memory)


@kernel("hamming_window.periodic_alpha", meta=True)
def hamming_window_periodic_alpha(window_length, periodic, alpha, *, dtype=None, layout=None,
                                  device=None, pin_memory=None):
    return _hamming(window_length, periodic, alpha, 0.46, dtype, layout, device, pin_memory)


@kernel("hamming_window.periodic_alpha_beta", meta=True)
def hamming_window_periodic_alpha_beta(window_length, periodic, alpha, beta, *, dtype=None,
                                       layout=None, device=None, pin_memory=None):
    return _hamming(window_length, periodic, alpha, beta, dtype, layout, device, pin_memory)


def _hann(window_length, periodic, dtype, layout, device, pin_memory):
    """hamming with alpha = beta = 0.5, after the checks under hann's own name."""
    done = _start("hann_window", window_length, dtype, layout, device, pin_memory)
    if done is not None:
        return done
    return _hamming(window_length, periodic, 0.5, 0.5, dtype, layout, device, pin_memory)


@kernel("hann_window", meta=True)
def hann_window(window_length, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _hann(window_length, True, dtype, layout, device, pin_memory)


@kernel("hann_window.periodic", meta=True)
def hann_window_periodic(window_length, periodic, *, dtype=None, layout=None, device=None,
                         pin_memory=None):
    return _hann(window_length, periodic, dtype, layout, device, pin_memory)


def _bartlett(window_length, periodic, dtype, layout, device, pin_memory):
    def shape(w, n):
        w = call("mul_.Scalar", w, 2.0 / float(n - 1))
        first_half = ((n - 1) >> 1) + 1
        tail = call("narrow", w, 0, first_half, n - first_half)
        call("add_.Scalar", call("mul_.Scalar", tail, -1), 2)
        return w

    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   pin_memory, shape)


@kernel("bartlett_window", meta=True)
def bartlett_window(window_length, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _bartlett(window_length, True, dtype, layout, device, pin_memory)


@kernel("bartlett_window.periodic", meta=True)
def bartlett_window_periodic(window_length, periodic, *, dtype=None, layout=None, device=None,
                             pin_memory=None):
    return _bartlett(window_length, periodic, dtype, layout, device, pin_memory)


def _blackman(window_length, periodic, dtype, layout, device, pin_memory):
    def shape(w, n):
        w = call("mul_.Scalar", w, math.pi / float(n - 1))
        four = call("mul_.Scalar", call("cos_", call("mul.Scalar", w, 4)), 0.08)
        two = call("mul_.Scalar", call("cos_", call("mul.Scalar", w, 2)), 0.5)
        return call("add.Scalar", call("sub.Tensor", four, two), 0.42)

    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   pin_memory, shape)


@kernel("blackman_window", meta=True)
def blackman_window(window_length, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _blackman(window_length, True, dtype, layout, device, pin_memory)


@kernel("blackman_window.periodic", meta=True)
def blackman_window_periodic(window_length, periodic, *, dtype=None, layout=None, device=None,
                             pin_memory=None):
    return _blackman(window_length, periodic, dtype, layout, device, pin_memory)


def _kaiser(window_length, periodic, beta, dtype, layout, device, pin_memory):
    def shape(pos, n):
        dt = pos._dtype
        if dt.is_complex:
            raise not_implemented("kaiser_window_cpu", dt)
        # kaiser_window_kernel: I0(beta sqrt(|1 - ((a - alpha) / alpha)^2|)) / I0(beta), alpha =
        # (L - 1) / 2, in the dtype's opmath; I0 is Cephes' Chebyshev expansion
        # (special_bessel), evaluated in double and rounded once (no farther from the exact
        # value than upstream's)
        ct = np.float64 if dt._name == "float64" else np.float32
        a = as_compute(pos, dt).astype(ct)
        alpha = ct((n - 1) / 2.0)
        b = ct(beta)
        with np.errstate(all="ignore"):
            r = (a - alpha) / alpha
            arg = b * np.sqrt(np.abs(ct(1) - r * r))
            vals = (i0(arg.astype(np.float64)) / i0(np.float64(b))).astype(ct)
        w = wrap(vals, D.BY_NAME["float64" if ct is np.float64 else "float32"])
        return w if w._dtype is dt else call("_to_copy", w, dtype=dt)

    return _window("kaiser_window", window_length, periodic, dtype, layout, device, pin_memory,
                   shape)


@kernel("kaiser_window", meta=True)
def kaiser_window(window_length, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _kaiser(window_length, True, 12.0, dtype, layout, device, pin_memory)


@kernel("kaiser_window.periodic", meta=True)
def kaiser_window_periodic(window_length, periodic, *, dtype=None, layout=None, device=None,
                           pin_memory=None):
    return _kaiser(window_length, periodic, 12.0, dtype, layout, device, pin_memory)


@kernel("kaiser_window.beta", meta=True)
def kaiser_window_beta(window_length, periodic, beta, *, dtype=None, layout=None, device=None,
                       pin_memory=None):
    return _kaiser(window_length, periodic, beta, dtype, layout, device, pin_memory)


def _linspace_tensors(start, end, steps, dtype, layout, device, pin_memory):
    from .factories import tensor_bounds

    start, end = tensor_bounds("linspace", start, end)
    return call("linspace", start, end, steps, dtype=dtype,
                layout=layout, device=device, pin_memory=pin_memory)


@kernel("linspace.Tensor_Tensor", "linspace.Tensor_Scalar", "linspace.Scalar_Tensor")
def linspace_tensor(start, end, steps, *, dtype=None, layout=None, device=None,
                    pin_memory=None):
    return _linspace_tensors(start, end, steps, dtype, layout, device, pin_memory)
