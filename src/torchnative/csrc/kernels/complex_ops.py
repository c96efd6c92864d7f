"""Complex numbers: real/imag views, lazy conjugation, and building complex tensors.

``real`` and ``imag`` are views, as upstream's: ``view_as_real(self).select(-1, 0 or 1)``, so
they alias the complex storage (float dtype, strides and offset doubled) and ``x.real.add_(1)``
changes ``x``. They are composites called through the door, so modes see ``view_as_real`` and
``select`` as they do upstream and autograd differentiates them through those.

``conj()`` of a complex tensor is upstream's lazy view: same memory, the conjugate bit flipped
(``core/conj_neg_bits.py``), so writing through ``x.conj()`` changes ``x``; ``_neg_view`` flips
the negative bit likewise. Kernels that do not handle the bits see them resolved by the door's
fallback (``dispatch/math_bits.py``). ``_conj_physical`` and the ``*_copy`` variants materialize.
"""

from __future__ import annotations

import numpy as np

from ..core import complex_half
from ..core import dtypes as D
from ..core.conj_neg_bits import CONJ, NEG, set_bits
from ..dispatch.call import call
from .support.common import arr
from .copy import _empty_like
from .pointwise_base import broadcast_shape, finish
from .views import view_of
from ..ops.kernel_registry import kernel


# --- real and imag: views of the complex storage ------------------------------------------------

@kernel("real", composite=True)
def real(self):
    if not self.dtype.is_complex:
        return self
    if self._math_bits & CONJ:  # the real part reads the same through the bit: drop it
        self = call("_conj", self)
    return call("select.int", call("view_as_real", self), -1, 0)


@kernel("imag", composite=True)
def imag(self):
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if self._math_bits & CONJ:  # conj's imaginary part is the negated one: a negative view
        return call("_neg_view", call("select.int", call("view_as_real", call("_conj", self)),
                                      -1, 1))
    return call("select.int", call("view_as_real", self), -1, 1)


# --- conjugation ----------------------------------------------------------------------------------

@kernel("conj", composite=True)
def conj(self):
    return call("_conj", self) if self.dtype.is_complex else self


@kernel("conj_physical", composite=True)
def conj_physical(self):
    return call("_conj_physical", self) if self.dtype.is_complex else self


def _complex_only(self, what: str) -> None:
    if not self.dtype.is_complex:
        # upstream: TensorImpl::_set_conj asserts the dtype is complex
        raise RuntimeError("isComplexType(typeMetaToScalarType(dtype())) INTERNAL ASSERT FAILED: "
                           f"{what} of a {self.dtype._cpp_name} tensor")


def _flipped(self, bit: int):
    """A view of ``self`` with ``bit`` flipped (view_of carries self's bits over)."""
    out = view_of(self, self._size, self._stride, self._offset)
    set_bits(out, out._math_bits ^ bit)
    return out


def _conjugated(self):
    """A new tensor laid out as ``empty_like(self)`` holding conj(self) (self's values if real)."""
    out = _empty_like(self, self.dtype, self.device, None)
    if out._np is not None:
        np.conjugate(arr(self), out=out._np) if self.dtype.is_complex else \
            np.copyto(out._np, arr(self))
    return out


@kernel("_conj", meta=True)
def _conj(self):
    """A view of the same memory with the conjugate bit flipped."""
    _complex_only(self, "_conj")
    return _flipped(self, CONJ)


@kernel("_conj_copy", meta=True)
def _conj_copy(self):
    _complex_only(self, "_conj_copy")
    return _conjugated(self)


@kernel("_conj_physical", meta=True)
def _conj_physical(self):
    """A new tensor with conj(self) (a copy of a real tensor), laid out as TensorIterator's
    unary output."""
    if self._np is None:
        return _empty_like(self, self.dtype, self.device, None)
    a = arr(self)
    r = np.conjugate(a) if self.dtype.is_complex else a.copy(order="K")
    return finish(r, self.dtype, self)


@kernel("conj_physical_", meta=True)
def conj_physical_(self):
    if self.dtype.is_complex and self._np is not None:
        np.conjugate(self._np, out=self._np)
    return self


@kernel("conj_physical.out", meta=True)
def conj_physical_out(self, *, out):
    """upstream: unary_op_impl_out -> TensorIterator::unary_op, which requires out's dtype to be
    self's (no cast)."""
    from ..dispatch.structured import resize_out

    if out.dtype != self.dtype:
        raise RuntimeError(f"Found dtype {out.dtype._cpp_name} but expected "
                           f"{self.dtype._cpp_name}")
    resize_out(out, self._size)
    if out._np is not None:
        src = arr(self)
        if np.shares_memory(out._np, src) and out._np is not src:
            src = src.copy()
        if self.dtype.is_complex:
            np.conjugate(src, out=out._np)
        else:
            np.copyto(out._np, src)
    return out


# --- the negative bit ---------------------------------------------------------------------------

def _negated(self):
    if self.dtype == D.BY_NAME["bool"]:
        raise RuntimeError("\"neg_cpu\" not implemented for 'Bool'")
    out = _empty_like(self, self.dtype, self.device, None)
    if out._np is not None:
        np.negative(arr(self), out=out._np)
    return out


@kernel("_neg_view", meta=True)
def _neg_view(self):
    """A view of the same memory with the negative bit flipped."""
    return _flipped(self, NEG)


@kernel("_neg_view_copy", meta=True)
def _neg_view_copy(self):
    return _negated(self)


# --- complex(real, imag) and polar(abs, angle) -------------------------------------------------

_FLOATING = ("Half", "Float", "Double")


def _check_floating(a, b) -> None:
    if a.dtype._cpp_name not in _FLOATING or b.dtype._cpp_name not in _FLOATING:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{a.dtype._cpp_name} and {b.dtype._cpp_name}")


def _check_dtype(result_dtype, a, b) -> None:
    """upstream's complex_check_dtype (TensorFactories.cpp)."""
    _check_floating(a, b)
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {a.dtype._cpp_name} but got scalar "
                           f"type {b.dtype._cpp_name} for second argument")
    want = a.dtype.to_complex()
    if result_dtype != want:
        raise RuntimeError(f"Expected object of scalar type {want._cpp_name} but got scalar type "
                           f"{result_dtype._cpp_name} for argument 'out'")


def _build(name: str, a, b, polar: bool):
    """The complex tensor of ``a`` and ``b`` (broadcast), laid out as TensorIterator does."""
    if polar and a.dtype._cpp_name == "Half":
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    dt = a.dtype.to_complex()
    shape = broadcast_shape(a._size, b._size)
    x, y = np.broadcast_to(arr(a), shape), np.broadcast_to(arr(b), shape)
    if dt._name == "complex32":  # the float16 parts are the pair, as they are
        return finish(complex_half.pack(x, y), dt, a, b)
    r = np.empty(shape, dtype=D.numpy_dtype(dt))
    with np.errstate(all="ignore"):
        if polar:  # a*cos(b), a*sin(b), as upstream's kernel (0*cos(inf) is nan there too)
            r.real, r.imag = x * np.cos(y), x * np.sin(y)
        else:
            r.real, r.imag = x, y
    return finish(r, dt, a, b)


@kernel("complex")
def complex_(real, imag):
    _check_floating(real, imag)
    _check_dtype(real.dtype.to_complex(), real, imag)
    return _build("complex", real, imag, polar=False)


@kernel("polar")
def polar(abs, angle):
    _check_floating(abs, angle)
    _check_dtype(abs.dtype.to_complex(), abs, angle)
    return _build("polar", abs, angle, polar=True)


def _out_form(name: str, polar_: bool):
    def with_out(a, b, *, out):
        from .copy import copy_into
        from ..dispatch.structured import resize_out

        _check_dtype(out.dtype, a, b)
        result = _build(name, a, b, polar=polar_)
        resize_out(out, result._size)
        copy_into(out, result)
        return out

    with_out.__name__ = f"{name}_out"
    return with_out


kernel("complex.out")(_out_form("complex", False))
kernel("polar.out")(_out_form("polar", True))
