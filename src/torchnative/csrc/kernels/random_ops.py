"""Random sampling kernels over the CPU generator engine (csrc/random), bit for bit with upstream.

The engine draws values in the order upstream's kernels do for a contiguous tensor. Upstream
iterates a nullary TensorIterator, which walks the output in memory order (dims sorted by
stride), so a non-contiguous output receives the same stream in memory order (``_fill``); where
a kernel's path depends on contiguity (normal_'s vectorized fill), the engine is told. Factories
(rand, randn, randint, *_like, normal.float_float) are ``empty`` + the in-place sampler, as
upstream's CompositeExplicitAutograd C++ writes them (its Python decompositions draw with
different algorithms, so they are not used). Generators come as the ``generator`` argument;
None means the default generator.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.tensor import contiguous_of, numel_of
from ..core import dtypes as D
from .. import random as R
from ..core.cast import cast_array
from ..core.construct import checked_device, empty
from ..core.promotion import promote_types
from ..core.tensor import TensorBase
from .support.common import INT64, arr, opmath, wrap
from ..core.mem_overlap import assert_no_internal_overlap
from .indexing import _name, expand_inplace_check, infer_size, ti_perm
from .support.scalar import scalar_to
from ..ops.kernel_registry import kernel

def _engine(generator):
    if generator is None:
        if not _DEFAULT:
            from ..core.generator import default_generator

            _DEFAULT.append(default_generator)
        generator = _DEFAULT[0]
    return generator._state


_DEFAULT: list = []  # the default CPU generator, once imported (one object per process)


def _order(t: TensorBase) -> list:
    """The nullary TensorIterator's dim order for ``t``: slowest dim first."""
    return ti_perm(t._size, [t._stride])[::-1]


def _iter_view(t: TensorBase) -> np.ndarray:
    """A view of ``t`` whose C order is upstream's iteration order (memory order)."""
    a = arr(t)
    if contiguous_of(t) or a.ndim < 2:
        return a
    return np.transpose(a, _order(t))


def _fill(t: TensorBase, values: np.ndarray) -> TensorBase:
    view = _iter_view(t)
    view[...] = values.reshape(view.shape)
    return t


def _real_view(t: TensorBase) -> TensorBase:
    from .views import view_as_real

    return view_as_real(t)


def _dtype_name(t: TensorBase) -> str:
    name = t._dtype._name
    if name not in R.dtypes.FLOATS and name not in R.dtypes.INTS:  # upstream has no kernel either
        raise NotImplementedError(f"random sampling not implemented for '{_name(t._dtype)}'")
    return name


def _sampled(t: TensorBase, draw, direct: bool = False) -> TensorBase:
    """Fill ``t`` with ``draw(shape, dtype_name)`` in upstream's iteration order. A ``direct``
    sampler takes ``out=``, a contiguous ``t``'s own array it may fill in place (skipping the
    copy) or leave alone."""
    assert_no_internal_overlap(t)
    n = numel_of(t)
    with _dispatch_errors():
        if n == 0:
            draw((0,), _dtype_name(t))  # argument and dtype checks still run
            return t
        if direct and contiguous_of(t):
            a = arr(t)
            values = draw((n,), _dtype_name(t), out=a)
            if np.may_share_memory(values, a):
                return t  # filled in place (a sampler's own array is fresh: it shares nothing)
            return _fill(t, values)
        return _fill(t, draw((n,), _dtype_name(t)))


class _dispatch_errors:
    """The engine reports an unsupported dtype as RuntimeError; upstream's AT_DISPATCH raises
    NotImplementedError ('"kernel" not implemented for \'Long\'')."""

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is RuntimeError and '" not implemented for ' in str(value):
            raise NotImplementedError(str(value)) from None
        return False


# ------------------------------------------------------------------------- in-place samplers
@kernel("uniform_")
def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    if self._dtype.is_complex:
        if numel_of(self):
            uniform_(_real_view(self), from_, to, generator=generator)
        return self
    dt = self._dtype
    if dt.is_floating_point:  # uniform_impl_'s checks (the engine's messages print floats
        lo, hi = R.dtypes.float_range(dt._name)  # the Python way)
        for value, label in ((from_, "from"), (to, "to")):
            if not lo <= value <= hi:
                raise RuntimeError(f"{label} is out of bounds for {R.dtypes.META_NAME[dt._name]}")
        if not from_ <= to:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                               f"from={_fmt(from_)} > to={_fmt(to)}")
        if not to - from_ <= hi:
            raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{_name(dt)}>"
                               f"::max(), but found to={_fmt(to)} and from={_fmt(from_)} which "
                               "result in to-from to exceed the limit")
    gen = _engine(generator)
    return _sampled(self, lambda shape, name, out=None: R.uniform_(gen, shape, name, from_, to, out=out),
                    direct=True)


@kernel("normal_")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    if numel_of(self) == 0:
        return self
    if self._dtype.is_complex:  # real and imaginary parts share the variance
        normal_(_real_view(self), mean, std / math.sqrt(2), generator=generator)
        return self
    gen = _engine(generator)
    contiguous = contiguous_of(self)
    return _sampled(self, lambda shape, name, out=None: R.normal_(gen, shape, name, mean, std,
                                                                  contiguous=contiguous, out=out),
                    direct=True)


def _fmt(x) -> str:
    """A double as C++'s ostream prints it (6 significant digits)."""
    return f"{float(x):g}"


@kernel("random_")
def random_(self, *, generator=None):
    gen = _engine(generator)
    return _sampled(self, lambda shape, name: R.random_(gen, shape, name))


@kernel("random_.to")
def random_to(self, to, *, generator=None):
    gen = _engine(generator)
    return _sampled(self, lambda shape, name: R.random_(gen, shape, name, 0, to))


@kernel("random_.from")
def random_from(self, from_, to=None, *, generator=None):
    gen = _engine(generator)
    return _sampled(self, lambda shape, name: R.random_(gen, shape, name, from_, to))


@kernel("bernoulli_.float")
def bernoulli_float(self, p=0.5, *, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
    if numel_of(self) == 0:
        return self
    gen = _engine(generator)
    return _sampled(self, lambda shape, name: R.bernoulli_(gen, shape, name, float(p)))


@kernel("bernoulli_.Tensor")
def bernoulli_tensor(self, p, *, generator=None):
    if numel_of(self) == 0:
        return self
    assert_no_internal_overlap(self)
    expand_inplace_check(self._size, p._size)
    gen = _engine(generator)
    pa = np.broadcast_to(arr(p), self._size)
    if not contiguous_of(self) and len(self._size) > 1:
        pa = np.transpose(pa, _order(self))  # p is read in the output's iteration order
    if p._dtype.is_floating_point and not ((pa >= 0) & (pa <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")
    with _dispatch_errors():
        values = R.bernoulli_(gen, (numel_of(self),), _dtype_name(self), pa.reshape(-1))
    return _fill(self, values)


@kernel("exponential_")
def exponential_(self, lambd=1.0, *, generator=None):
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    if numel_of(self) == 0:
        return self
    gen = _engine(generator)
    return _sampled(self, lambda shape, name: R.exponential_(gen, shape, name, lambd))


@kernel("geometric_")
def geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    if numel_of(self) == 0:
        return self
    gen = _engine(generator)
    return _sampled(self, lambda shape, name: R.geometric_(gen, shape, name, p))


@kernel("cauchy_")
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    if not self._dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {_name(self._dtype)}")
    if numel_of(self) == 0:
        return self
    gen = _engine(generator)
    return _sampled(self, lambda shape, name: R.cauchy_(gen, shape, name, median, sigma))


@kernel("log_normal_")
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    if numel_of(self) == 0:
        return self
    gen = _engine(generator)
    return _sampled(self, lambda shape, name: R.log_normal_(gen, shape, name, mean, std))


# ------------------------------------------------ functional forms: clone, then sample in place
def _clone(t: TensorBase) -> TensorBase:
    from .copy import _clone as clone

    return clone(t, None)


def _functional(inplace):
    def functional(self, *args, **kwargs):
        return inplace(_clone(self), *args, **kwargs)

    return functional


for _name_, _fn in (("uniform", uniform_), ("normal_functional", normal_), ("random", random_),
                    ("random.to", random_to), ("random.from", random_from),
                    ("bernoulli.Tensor", bernoulli_tensor), ("exponential", exponential_),
                    ("geometric", geometric_), ("cauchy", cauchy_),
                    ("log_normal", log_normal_)):
    kernel(_name_)(_functional(_fn))


def _empty_contiguous_like(t: TensorBase, dt=None) -> TensorBase:
    return empty(t._size, dt or t._dtype)


@kernel("bernoulli")
def bernoulli(self, *, generator=None):
    return bernoulli_tensor(_empty_contiguous_like(self), self, generator=generator)


@kernel("bernoulli.p")
def bernoulli_p(self, p=0.5, *, generator=None):
    return bernoulli_float(_empty_contiguous_like(self), p, generator=generator)


@kernel("bernoulli.out")
def bernoulli_out(self, *, generator=None, out):
    from .copy import resize_

    resize_(out, self._size)
    return bernoulli_tensor(out, self, generator=generator)


# ------------------------------------------------------------------------------ normal family
def _inplace_binary(out: TensorBase, other, op) -> None:
    """``out.op_(other)`` as TensorIterator does it: compute in the promoted type's opmath,
    round into ``out``'s dtype."""
    a = arr(out)
    if isinstance(other, TensorBase):
        common = promote_types(out._dtype, other._dtype)
        b = arr(other)
        b = cast_array(b, other._dtype, common) if other._dtype != common else b
    else:
        common = out._dtype
        b = np.asarray(other)
    cdt = opmath(common)
    x = cast_array(a, out._dtype, common) if out._dtype != common else a
    res = op(x.astype(cdt, copy=False), b.astype(cdt, copy=False))
    res = res.astype(D.numpy_dtype(common)) if res.dtype != D.numpy_dtype(common) else res
    a[...] = cast_array(res, common, out._dtype) if common != out._dtype else res


def _check_std_tensor(std: TensorBase) -> None:
    if std._dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if std.numel() and not (arr(std) >= 0).all():
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _resize_output(out: TensorBase, shape) -> None:
    from ..dispatch.structured import resize_out

    resize_out(out, shape)


def _normal_mean_tensor_out(mean, std, generator, out):
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    _resize_output(out, mean._size)
    normal_(out, 0.0, std, generator=generator)
    _inplace_binary(out, mean, np.add)
    return out


def _normal_std_tensor_out(mean, std, generator, out):
    _check_std_tensor(std)
    _resize_output(out, std._size)
    normal_(out, 0.0, 1.0, generator=generator)
    mean_t = np.asarray(scalar_to(mean, out._dtype))  # at::full({}, mean, output.options())
    _inplace_binary(out, std, np.multiply)
    _inplace_binary(out, mean_t, np.add)
    return out


def _normal_both_out(mean, std, generator, out):
    _check_std_tensor(std)
    _resize_output(out, infer_size(mean._size, std._size))
    normal_(out, 0.0, 1.0, generator=generator)
    _inplace_binary(out, std, np.multiply)
    _inplace_binary(out, mean, np.add)
    return out


@kernel("normal.Tensor_float")
def normal_tensor_float(mean, std=1.0, *, generator=None):
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    return _normal_mean_tensor_out(mean, std, generator, _empty_contiguous_like(mean))


@kernel("normal.Tensor_float_out")
def normal_tensor_float_out(mean, std=1.0, *, generator=None, out):
    return _normal_mean_tensor_out(mean, std, generator, out)


@kernel("normal.float_Tensor")
def normal_float_tensor(mean, std, *, generator=None):
    _check_std_tensor(std)
    return _normal_std_tensor_out(mean, std, generator, _empty_contiguous_like(std))


@kernel("normal.float_Tensor_out")
def normal_float_tensor_out(mean, std, *, generator=None, out):
    return _normal_std_tensor_out(mean, std, generator, out)


@kernel("normal.Tensor_Tensor")
def normal_tensor_tensor(mean, std, *, generator=None):
    _check_std_tensor(std)
    out = empty(infer_size(mean._size, std._size), mean._dtype)
    return _normal_both_out(mean, std, generator, out)


@kernel("normal.Tensor_Tensor_out")
def normal_tensor_tensor_out(mean, std, *, generator=None, out):
    return _normal_both_out(mean, std, generator, out)


def _factory_dtype(dtype):
    return dtype if dtype is not None else D.get_default_dtype()


@kernel("normal.float_float")
def normal_float_float(mean, std, size, *, generator=None, dtype=None, layout=None, device=None,
                       pin_memory=None):
    out = empty(tuple(size), _factory_dtype(dtype), checked_device(device))
    return normal_(out, mean, std, generator=generator)


# ---------------------------------------------------------------------------------- factories
def _factory(size, dtype, device, default=None):
    dt = dtype if dtype is not None else (default or D.get_default_dtype())
    return empty(tuple(size), dt, checked_device(device))


@kernel("rand", "rand.generator")
def rand(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return uniform_(_factory(size, dtype, device), 0.0, 1.0, generator=generator)


@kernel("randn", "randn.generator")
def randn(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return normal_(_factory(size, dtype, device), 0.0, 1.0, generator=generator)


@kernel("randint", "randint.generator")
def randint(high, size, *, generator=None, dtype=None, layout=None, device=None,
            pin_memory=None):
    out = _factory(size, dtype, device, INT64)
    return random_from(out, 0, high, generator=generator)


@kernel("randint.low", "randint.low_generator")
def randint_low(low, high, size, *, generator=None, dtype=None, layout=None, device=None,
                pin_memory=None):
    out = _factory(size, dtype, device, INT64)
    return random_from(out, low, high, generator=generator)


def _like(self, dtype, device, memory_format):
    from .copy import _empty_like

    dev = checked_device(device) if device is not None else self.device
    return _empty_like(self, dtype or self._dtype, dev, memory_format)


@kernel("rand_like")
def rand_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    return uniform_(_like(self, dtype, device, memory_format), 0.0, 1.0)


@kernel("randn_like")
def randn_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    return normal_(_like(self, dtype, device, memory_format), 0.0, 1.0)


@kernel("randint_like")
def randint_like(self, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                 memory_format=None):
    return random_from(_like(self, dtype, device, memory_format), 0, high)


@kernel("randint_like.Tensor")
def randint_like_tensor(self, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                        memory_format=None):
    return random_from(_like(self, dtype, device, memory_format), 0, int(high.item()))


@kernel("randint_like.low_dtype")
def randint_like_low(self, low, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                     memory_format=None):
    return random_from(_like(self, dtype, device, memory_format), low, high)


@kernel("randperm", "randperm.generator")
def randperm(n, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype if dtype is not None else INT64
    checked_device(device)
    with _dispatch_errors():
        values = R.randperm(_engine(generator), n, dt._name)
    return wrap(values, dt)


@kernel("multinomial")
def multinomial(self, num_samples, replacement=False, *, generator=None):
    with _dispatch_errors():
        values = R.multinomial(_engine(generator), arr(self), num_samples, replacement)
    return wrap(np.ascontiguousarray(values, dtype=np.int64), INT64)


@kernel("multinomial.out")
def multinomial_out(self, num_samples, replacement=False, *, generator=None, out):
    # multinomial_out checks out's dtype after the input's rank and dtype, before sampling
    if 0 < len(self._size) <= 2 and self.dtype.is_floating_point and out.dtype is not INT64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype._cpp_name}")
    from ..dispatch.structured import resize_out, write_into

    result = multinomial(self, num_samples, replacement, generator=generator)
    resize_out(out, result._size)
    write_into(out, result)
    return out
