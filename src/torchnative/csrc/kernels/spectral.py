"""The fft family's CPU kernels (mkl/SpectralOps.cpp): _fft_r2c, _fft_c2r and _fft_c2c, which
every torch.fft function reaches; their out= overloads come from the door's structured wrapper.

``normalization`` is upstream's fft_norm_mode: 0 leaves the transform unscaled, 1 scales it by
1/sqrt(n), any other value by 1/n, n being the number of points of the signal (the product of the
transformed sizes, the full real length for one-sided transforms). The values are numpy's
pocketfft in double precision (float32 inputs are widened and the result rounded once, which is
at least as accurate as upstream's single-precision MKL transform). The layout is upstream's:
MKL writes a batch of transforms into a buffer whose batch dimensions come first, ordered by the
input's strides, and whose transformed dimensions follow in the order the kernel sorted them; the
result is a strided view of that buffer. A two-sided real-to-complex transform fills the upper
half of the last dimension by conjugate symmetry from the one-sided result, as upstream does.

``fft_r2c_backward`` and ``fft_c2r_backward`` are derivatives.yaml's helpers for _fft_r2c and
_fft_c2r (FunctionsManual.cpp), written with operators called through the door.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.construct import empty
from ..core.device import CPU
from ..core.tensor import contiguous_strides
from .support.common import arr
from ..dispatch.call import call
from ..ops.kernel_registry import kernel

_B = D.BY_NAME
_ASSERT = ('{cond} INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/mkl/'
           'SpectralOps.cpp":{line}, please report a bug to PyTorch. ')
_IN_ASSERT = _ASSERT.format(cond="in_size == signal_size[i + 1] || in_size == (signal_size[i + 1] "
                                 "/ 2) + 1", line=462)
_OUT_ASSERT = _ASSERT.format(cond="out_size == signal_size[i + 1] || out_size == "
                                  "(signal_size[i + 1] / 2) + 1", line=464)


def _scale(normalization: int, n: int) -> float:
    if normalization == 0:
        return 1.0
    return 1.0 / np.sqrt(float(n)) if normalization == 1 else 1.0 / float(n)


def _check_precision(dt):
    """_plan_mkl_fft: single or double precision only."""
    value = dt.to_real() if dt.is_complex else dt
    if value not in (_B["float32"], _B["float64"]):
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {value._cpp_name}")


def _partition(items: list, pred) -> int:
    """libstdc++'s std::partition (the bidirectional algorithm): the elements satisfying
    ``pred`` move to the front, in the order the swaps leave them; returns their count."""
    first, last = 0, len(items)
    while True:
        while True:
            if first == last:
                return first
            if pred(items[first]):
                first += 1
            else:
                break
        last -= 1
        while True:
            if first == last:
                return first
            if not pred(items[last]):
                last -= 1
            else:
                break
        items[first], items[last] = items[last], items[first]
        first += 1


def _by_stride(dims, strides) -> list:
    """std::sort by decreasing stride (an insertion sort at these sizes, so ties keep order)."""
    return sorted(dims, key=lambda d: -strides[d])


def _sort_dims(strides, dims, exclude_last=False) -> list:
    dims = list(dims)
    if exclude_last:
        return _by_stride(dims[:-1], strides) + dims[-1:]
    return _by_stride(dims, strides)


def _exec_fft_layout(in_sizes, in_strides, out_sizes, dims) -> tuple:
    """_exec_fft's checks and the strides of its result (see the module docstring)."""
    ndim = len(in_sizes)
    if any(d < 0 or d >= ndim for d in dims) or len(set(dims)) != len(dims):
        raise RuntimeError(_OUT_ASSERT)
    transformed = set(dims)
    perm = list(range(ndim))
    n_batch = _partition(perm, lambda d: d not in transformed)
    batch = _by_stride(perm[:n_batch], in_strides)
    signal_in = [in_sizes[d] for d in dims]
    if int(np.prod(signal_in, dtype=np.int64)) == 0:
        if int(np.prod(in_sizes, dtype=np.int64)) == 0:
            shape = ", ".join(str(s) for s in [-1] + signal_in)
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape [{shape}] because "
                               "the unspecified dimension size -1 can be any value and is "
                               "ambiguous")
    for d in dims:
        i, o = in_sizes[d], out_sizes[d]
        n = max(i, o)
        if not (i == n or i == n // 2 + 1):
            raise RuntimeError(_IN_ASSERT)
        if not (o == n or o == n // 2 + 1):
            raise RuntimeError(_OUT_ASSERT)
    if int(np.prod([in_sizes[d] for d in batch], dtype=np.int64)) == 0:
        raise RuntimeError("MKL FFT error: Intel oneMKL DFTI ERROR: Inconsistent configuration "
                           "parameters")
    sig_out = [out_sizes[d] for d in dims]
    sig_strides = contiguous_strides(sig_out)
    stride0 = 1
    for s in sig_out:
        stride0 *= max(s, 1)
    strides = [0] * ndim
    batch_numel = 1
    for d in reversed(batch):
        strides[d] = batch_numel * stride0
        batch_numel *= out_sizes[d]
    for j, d in enumerate(dims):
        strides[d] = sig_strides[j]
    return tuple(strides)


def _result(values: np.ndarray, dt, strides) -> object:
    out = empty(values.shape, dt, CPU, stride=strides)
    np.copyto(arr(out), values.astype(D.numpy_dtype(dt), copy=False))
    return out


def _widened(t) -> np.ndarray:
    a = arr(t)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64, copy=False)


def _signal_numel(sizes, dims) -> int:
    n = 1
    for d in dims:
        n *= sizes[d]
    return n


@kernel("_fft_c2c")
def _fft_c2c(self, dim, normalization, forward):
    dt = self._dtype
    if not dt.is_complex:
        raise RuntimeError(f"Only supports complex dtypes, but found: {dt._cpp_name}")
    _check_precision(dt)
    dims = [int(d) for d in dim]
    sizes = tuple(self._size)
    sorted_dims = _sort_dims(self._stride, dims)
    strides = _exec_fft_layout(sizes, self._stride, sizes, sorted_dims)
    return _result(_c2c_values(_widened(self), dims, normalization, forward), dt, strides)


def _c2c_values(x, dims, normalization, forward):
    if not dims:
        return x
    if forward:
        y = np.fft.fftn(x, axes=dims)
    else:
        y = np.fft.ifftn(x, axes=dims, norm="forward")  # unnormalized
    s = _scale(normalization, _signal_numel(x.shape, dims))
    return y * s if s != 1.0 else y


@kernel("_fft_r2c")
def _fft_r2c(self, dim, normalization, onesided):
    dt = self._dtype
    if not dt.is_floating_point:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {dt._cpp_name}")
    dims = [int(d) for d in dim]
    if not dims:
        raise RuntimeError("ArrayRef: attempted to access back() of empty list")
    _check_precision(dt)
    sizes = tuple(self._size)
    out_sizes = list(sizes)
    last = dims[-1]
    half = sizes[last] // 2 + 1 if 0 <= last < len(sizes) else 0
    if onesided and 0 <= last < len(sizes):
        out_sizes[last] = half
    sorted_dims = _sort_dims(self._stride, dims, exclude_last=True)
    strides = _exec_fft_layout(sizes, self._stride, out_sizes, sorted_dims)
    x = _widened(self)
    y = np.fft.rfftn(x, axes=dims)
    s = _scale(normalization, _signal_numel(sizes, dims))
    if s != 1.0:
        y = y * s
    if not onesided:
        y = _fill_conjugate_symmetry(y, dims, sizes[last])
    return _result(y, dt.to_complex(), strides)


def _fill_conjugate_symmetry(half, dims, n):
    """The two-sided spectrum of a real signal from its one-sided half: X[k] = conj(X[-k]),
    indices negated modulo each transformed size."""
    last = dims[-1]
    h = half.shape[last]
    full_shape = list(half.shape)
    full_shape[last] = n
    full = np.empty(full_shape, half.dtype)
    lead = (slice(None),) * last
    full[lead + (slice(0, h),)] = half
    if n > h:
        mirrored = half
        for d in dims[:-1]:
            mirrored = np.roll(np.flip(mirrored, d), 1, d)
        src = (n - np.arange(h, n)) % n
        full[lead + (slice(h, n),)] = np.conj(np.take(mirrored, src, axis=last))
    return full


@kernel("_fft_c2r")
def _fft_c2r(self, dim, normalization, last_dim_size):
    dt = self._dtype
    if not dt.is_complex:
        raise RuntimeError(f"Only supports complex dtypes, but found: {dt._cpp_name}")
    dims = [int(d) for d in dim]
    if not dims:
        raise RuntimeError("ArrayRef: attempted to access back() of empty list")
    _check_precision(dt)
    last_dim_size = int(last_dim_size)
    sizes, strides = tuple(self._size), tuple(self._stride)
    if len(dims) > 1:
        # upstream runs a complex-to-complex inverse over all but the last dimension first
        c2c_dims = dims[:-1]
        strides = _exec_fft_layout(sizes, strides, sizes, _sort_dims(strides, c2c_dims))
    last = dims[-1]
    out_sizes = list(sizes)
    if 0 <= last < len(sizes):
        out_sizes[last] = last_dim_size
    out_strides = _exec_fft_layout(sizes, strides, out_sizes, [last])
    x = _widened(self)
    if len(dims) > 1:
        x = np.fft.ifftn(x, axes=dims[:-1], norm="forward")
    n = max(sizes[last], last_dim_size)
    y = np.fft.irfft(x, n=last_dim_size, axis=last, norm="forward") if last_dim_size == n else \
        np.fft.irfft(x, n=n, axis=last, norm="forward").take(range(last_dim_size), axis=last)
    s = _scale(normalization, _signal_numel(sizes, dims[:-1]) * n)
    if s != 1.0:
        y = y * s
    return _result(y, dt.to_real(), out_strides)


# ---- out= (mkl/SpectralOps.cpp's _out kernels: the result resized into out, then copy_, which
# converts to out's dtype as copy_ does) ---------------------------------------------------------

def _fft_out(result, out):
    from ..dispatch.structured import resize_out, write_into

    resize_out(out, result._size)
    write_into(out, result)
    return out


kernel("_fft_c2c.out")(lambda self, dim, normalization, forward, *, out: _fft_out(
    _fft_c2c(self, dim, normalization, forward), out))
kernel("_fft_r2c.out")(lambda self, dim, normalization, onesided, *, out: _fft_out(
    _fft_r2c(self, dim, normalization, onesided), out))
kernel("_fft_c2r.out")(lambda self, dim, normalization, last_dim_size, *, out: _fft_out(
    _fft_c2r(self, dim, normalization, last_dim_size), out))


# ---- derivatives.yaml helpers (FunctionsManual.cpp) ----------------------------------------------

def fft_r2c_backward(grad, dim, normalization, onesided, last_dim_size):
    """The adjoint of a real-to-complex transform: a one-sided gradient is zero-padded to the
    full length of the last dimension, then the inverse complex transform, real part."""
    if not onesided:
        return _real(call("_fft_c2c", grad, list(dim), normalization, False))
    sizes = list(grad.shape)
    last = dim[-1] % len(sizes)
    zero_length = int(last_dim_size) - sizes[last]
    full = grad
    if zero_length > 0:
        new_shape = list(sizes)
        new_shape[last] = int(last_dim_size)
        full = call("new_zeros", grad, new_shape, dtype=None, layout=None, device=None,
                    pin_memory=None)
        call("copy_", call("slice.Tensor", full, last, 0, sizes[last], 1), grad)
    return _real(call("_fft_c2c", full, list(dim), normalization, False))


def _real(t):
    """at::real of a complex tensor, as upstream computes it: view_as_real, then select."""
    return call("select.int", call("view_as_real", t), -1, 0)


def fft_c2r_backward(grad, dim, normalization):
    """The adjoint of a complex-to-real transform: the one-sided real-to-complex transform of
    the gradient, with the entries that stand for two (their mirror images dropped by the
    one-sided input) doubled."""
    gi = call("_fft_r2c", grad, list(dim), normalization, True)
    last = dim[-1]
    double_length = grad.shape[last] - gi.shape[last]
    if double_length > 0:
        call("mul_.Scalar", call("narrow", gi, last, 1, double_length), 2)
    return gi


# ---- torch.fft's CompositeImplicitAutograd functions (SpectralOps.cpp) ---------------------------
#
# They promote the input (integers to the default dtype; half precision is refused), wrap the
# dimension(s), zero-pad or slice the signal to the requested length and call the three kernels
# above through the door, as upstream's C++ does; autograd then records those kernels, whose
# formulas derivatives.yaml gives.

_F32, _F64 = _B["float32"], _B["float64"]


def _promote_fft(t, require_complex=False):
    dt = t._dtype
    if dt.is_complex:
        return t
    new = dt
    if not dt.is_floating_point:
        new = D.get_default_dtype()
    if new not in (_F32, _F64):
        raise RuntimeError(f"Unsupported dtype {new._cpp_name}")
    if require_complex:
        new = new.to_complex()
    return t if new is dt else call("to.dtype", t, new, False, False, None)


def _norm_from_string(norm, forward) -> int:
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    from ..core.tensor import wrap_dim

    return wrap_dim(dim, ndim)


def _resize_fft_input(x, dims, sizes):
    """x with x.size(dims[i]) == sizes[i], zero-padded at the end or sliced from the start."""
    original = list(x.shape)
    pad = [0] * (2 * len(original))
    must_copy = False
    for d, s in zip(dims, sizes):
        if s == -1:
            continue
        if original[d] < s:
            must_copy = True
            pad[len(pad) - 2 * d - 1] = s - original[d]
        if original[d] > s:
            x = call("slice.Tensor", x, d, 0, s, 1)
    return call("constant_pad_nd", x, pad, 0) if must_copy else x


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


# the output kind each transform's out= must have: (check, words in upstream's message)
_OUT_KIND = {"_fft_r2c": (lambda dt: dt.is_complex, "a complex"),
             "_fft_c2c": (lambda dt: dt.is_complex, "a complex"),
             "_fft_c2r": (lambda dt: dt.is_floating_point, "a floating point")}


def _maybe_out(op, fname, out, x, dims, norm, last):
    """``op`` (_fft_r2c / _fft_c2r / _fft_c2c) into ``out`` when given, after upstream's check
    of out's kind; ``last``: onesided, last_dim_size or forward, as ``op`` takes it."""
    if out is not None:
        ok, kind = _OUT_KIND[op]
        if not ok(out._dtype):
            raise RuntimeError(f"{fname} expects {kind} output tensor, but got "
                               f"{out._dtype._cpp_name}")
        return call(f"{op}.out", x, list(dims), norm, last, out=out)
    return call(op, x, list(dims), norm, last)


def _fft_r2c_1d(fname, out, x, n, dim, norm_str, forward, onesided):
    if x._dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real input tensor, but got {x._dtype._cpp_name}")
    if out is not None and not out._dtype.is_complex:
        raise RuntimeError(f"{fname} expects a complex output tensor, but got "
                           f"{out._dtype._cpp_name}")
    x = _promote_fft(x)
    dim = _wrap(dim, x.dim())
    size = x.shape[dim] if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize_fft_input(x, [dim], [n])
    norm = _norm_from_string(norm_str, forward)
    if out is not None and forward:
        ret = call("_fft_r2c.out", x, [dim], norm, onesided, out=out)
    else:
        ret = call("_fft_r2c", x, [dim], norm, onesided)
    if not forward:
        return call("conj_physical.out", ret, out=out) if out is not None else \
            call("conj", ret)
    return ret


def _fft_c2r_1d(fname, out, x, n, dim, norm_str, forward):
    if out is not None and not out._dtype.is_floating_point:
        raise RuntimeError(f"{fname} expects a floating point output tensor, but got "
                           f"{out._dtype._cpp_name}")
    x = _promote_fft(x, require_complex=True)
    dim = _wrap(dim, x.dim())
    size = 2 * (x.shape[dim] - 1) if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize_fft_input(x, [dim], [n // 2 + 1])
    norm = _norm_from_string(norm_str, forward)
    if forward:
        x = call("conj", x)
    return _maybe_out("_fft_c2r", fname, out, x, [dim], norm, size)


def _fft_c2c_1d(fname, out, x, n, dim, norm_str, forward):
    if not x._dtype.is_complex:
        raise RuntimeError(f"{fname} expects a complex input tensor, but got "
                           f"{x._dtype._cpp_name}")
    dim = _wrap(dim, x.dim())
    size = x.shape[dim] if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize_fft_input(x, [dim], [n])
    norm = _norm_from_string(norm_str, forward)
    return _maybe_out("_fft_c2c", fname, out, x, [dim], norm, forward)


def _canonicalize(x, s, dim):
    """(shape, dims) of an n-dimensional transform, defaults applied."""
    ndim = x.dim()
    sizes = list(x.shape)
    dims = None
    if dim is not None:
        dims = [_wrap(int(d), ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [int(v) for v in s]
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [sizes[d] if v == -1 else v for v, d in zip(s, dims)]
    elif dims is None:
        dims = list(range(ndim))
        shape = sizes
    else:
        shape = [sizes[d] for d in dims]
    for v in shape:
        if v <= 0:
            raise RuntimeError(f"Invalid number of data points ({v}) specified")
    return shape, dims


def _canonicalize_c2r(fname, x, s, dim):
    shape, dims = _canonicalize(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if s is None or int(s[-1]) == -1:
        last_dim_size = 2 * (x.shape[dims[-1]] - 1)
    else:
        last_dim_size = shape[-1]
    if last_dim_size < 1:
        raise RuntimeError(f"Invalid number of data points ({last_dim_size}) specified")
    shape[-1] = last_dim_size // 2 + 1
    return shape, dims, last_dim_size


def _fftn_c2c(out, x, shape, dims, norm_str, forward):
    if not x._dtype.is_complex:
        raise RuntimeError(f"fftn expects a complex input tensor, but got{x._dtype._cpp_name}")
    x = _resize_fft_input(x, dims, shape)
    return _maybe_out("_fft_c2c", "fftn", out, x, dims, _norm_from_string(norm_str, forward),
                      forward)


def _fftn(out, x, s, dim, norm, forward):
    shape, dims = _canonicalize(x, s, dim)
    x = _promote_fft(x, require_complex=True)
    return _fftn_c2c(out, x, shape, dims, norm, forward)


def _rfftn(out, x, s, dim, norm_str):
    if x._dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{x._dtype._cpp_name}")
    shape, dims = _canonicalize(x, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize_fft_input(_promote_fft(x), dims, shape)
    return _maybe_out("_fft_r2c", "rfftn", out, x, dims, _norm_from_string(norm_str, True), True)


def _irfftn(out, x, s, dim, norm_str):
    shape, dims, last = _canonicalize_c2r("irfftn", x, s, dim)
    x = _resize_fft_input(_promote_fft(x, require_complex=True), dims, shape)
    return _maybe_out("_fft_c2r", "irfftn", out, x, dims, _norm_from_string(norm_str, False), last)


def _hfftn(out, x, s, dim, norm_str):
    shape, dims, last = _canonicalize_c2r("hfftn", x, s, dim)
    x = _resize_fft_input(_promote_fft(x, require_complex=True), dims, shape)
    norm = _norm_from_string(norm_str, True)
    tmp = call("_fft_c2c", x, dims[:-1], norm, True) if len(dims) > 1 else x
    tmp = call("conj", tmp)
    return _maybe_out("_fft_c2r", "hfftn", out, tmp, [dims[-1]], norm, last)


def _ihfftn(out, x, s, dim, norm_str):
    shape, dims = _canonicalize(x, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize_fft_input(_promote_fft(x), dims, shape)
    norm = _norm_from_string(norm_str, False)
    tmp = call("_fft_r2c", x, [dims[-1]], norm, True)
    if len(dims) == 1:
        # (upstream's out= form here passes its arguments to conj_physical_out swapped)
        return call("conj_physical.out", out, out=tmp) if out is not None else call("conj", tmp)
    tmp = call("conj_physical", tmp)
    return _maybe_out("_fft_c2c", "ihfftn", out, tmp, dims[:-1], norm, False)


def _register_1d(name, impl):
    kernel(f"fft_{name}", composite=True)(
        lambda self, n=None, dim=-1, norm=None: impl(None, self, n, dim, norm))

    def with_out(self, n=None, dim=-1, norm=None, *, out):
        impl(out, self, n, dim, norm)
        return out

    kernel(f"fft_{name}.out", composite=True)(with_out)


def _register_nd(name, impl, default_dim):
    kernel(f"fft_{name}", composite=True)(
        lambda self, s=None, dim=default_dim, norm=None: impl(None, self, s, dim, norm))

    def with_out(self, s=None, dim=default_dim, norm=None, *, out):
        impl(out, self, s, dim, norm)
        return out

    kernel(f"fft_{name}.out", composite=True)(with_out)


_register_1d("fft", lambda out, x, n, dim, norm: (
    _fft_c2c_1d("fft", out, x, n, dim, norm, True) if x._dtype.is_complex else
    _fft_r2c_1d("fft", out, x, n, dim, norm, True, False)))
_register_1d("ifft", lambda out, x, n, dim, norm: (
    _fft_c2c_1d("ifft", out, x, n, dim, norm, False) if x._dtype.is_complex else
    _fft_r2c_1d("ifft", out, x, n, dim, norm, False, False)))
_register_1d("rfft", lambda out, x, n, dim, norm: _fft_r2c_1d("rfft", out, x, n, dim, norm, True,
                                                               True))
_register_1d("irfft", lambda out, x, n, dim, norm: _fft_c2r_1d("irfft", out, x, n, dim, norm,
                                                                False))
_register_1d("hfft", lambda out, x, n, dim, norm: _fft_c2r_1d("hfft", out, x, n, dim, norm, True))
_register_1d("ihfft", lambda out, x, n, dim, norm: _fft_r2c_1d("ihfft", out, x, n, dim, norm,
                                                                False, True))
for _suffix, _default in (("n", None), ("2", [-2, -1])):
    _register_nd("fft" + _suffix, lambda out, x, s, dim, norm: _fftn(out, x, s, dim, norm, True),
                 _default)
    _register_nd("ifft" + _suffix, lambda out, x, s, dim, norm: _fftn(out, x, s, dim, norm,
                                                                      False), _default)
    _register_nd("rfft" + _suffix, _rfftn, _default)
    _register_nd("irfft" + _suffix, _irfftn, _default)
    _register_nd("hfft" + _suffix, _hfftn, _default)
    _register_nd("ihfft" + _suffix, _ihfftn, _default)
