"""Matrix products over numpy's BLAS (LinearAlgebra.cpp / Blas.cpp): mm, bmm, addmm, baddbmm,
addbmm, addmv, mv, dot, vdot; and the CompositeImplicitAutograd operators matmul (both
overloads) and linear, which call the others through the door in the order upstream's C++ does,
so __torch_dispatch__ sees the same operators.

Numerics: float32/float64/complex go straight to np.matmul (BLAS); float16, bfloat16 and float8
compute in float32 and round once, as upstream's CPU gemm accumulates in opmath; integers use
numpy's integer matmul, whose wrap-around agrees with upstream's modulo 2**bits. ``beta == 0``
ignores ``self`` entirely (NaN in it does not propagate), as BLAS does.
"""

from __future__ import annotations

import os

import numpy as np

from .support import blas_threads
from .support.gemv import by_rows, matrix_vector, vector_matrix
from ..core.tensor import contiguous_of
from ..core import dtypes as D
from ..core.construct import empty
from ..core.device import CPU
from .support.common import arr, wrap
from ..dispatch.call import call
from .support.nn_util import contiguous, not_implemented, opmath_dtype, subclass_like, typemeta
from .support.scalar import scalar_to
from .support.widened_cache import widened
from .lowp_product import times_transposed
from .support.broadcast import infer_size
from ..ops.kernel_registry import kernel
from .views import expand as _expand_view

_B = D.BY_NAME
_INTS = frozenset(_B[n] for n in ("uint8", "int8", "int16", "int32", "int64"))
_STD = _INTS | frozenset(_B[n] for n in ("float32", "float64", "complex64", "complex128",
                                          "float16", "bfloat16"))
# _AT_DISPATCH_ADDMM_TYPES: the standard set plus four float8 types (not bool, not uint16+).
_ADDMM = _STD | frozenset(_B[n] for n in ("float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz",
                                          "float8_e4m3fnuz"))
_WIDEN = frozenset(d for d in _ADDMM if d.is_floating_point and d.itemsize < 4)
_BLOCKED = frozenset((_B["bfloat16"], _B["float16"]))  # numpy widens these exactly by astype
# Linear.cpp's TORCH_LINEAR_FLATTEN_3D switch, read once as upstream does
_FLATTEN_3D = os.environ.get("TORCH_LINEAR_FLATTEN_3D") == "1"


def _operand(t, dt) -> np.ndarray:
    """The numpy array gemm reads: the tensor itself, or widened to float32 for 16/8-bit floats
    (an operand's widened copy kept between products: support/widened_cache.py)."""
    return widened(t, dt) if dt in _WIDEN else arr(t)


def _mm_product(m1, m2, dt) -> np.ndarray:
    """m1 @ m2 in opmath. A 16-bit float ``m2`` that is a row-major weight's transpose (linear's
    ``w.t()``) is read in place a block at a time (lowp_product.py) instead of widened whole."""
    w = arr(m2).T
    if _rows_weight(w, dt):
        return times_transposed(_operand(m1, dt), w)
    return _gemm(_operand(m1, dt), _operand(m2, dt))


def _rows_weight(w: np.ndarray, dt) -> bool:
    return dt in _BLOCKED and w.strides[1] == w.itemsize


def _by_real_products(product, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A complex product as four real ones: (ar br - ai bi) + i (ar bi + ai br). OpenBLAS's
    complex kernels on AVX-512 fuse one product of each imaginary term and not the other, so the
    diagonal of X^H X came out a few ulp off zero; here its two halves are the same real product
    in the same order and cancel exactly, as upstream's are (MKL, every CPU profile)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    out = (product(ar, br) - product(ai, bi)).astype(a.dtype)
    out.imag = product(ar, bi) + product(ai, br)
    return out


def _gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for 2-d arrays. A single row (decode) or column is a matrix-vector product
    (support/gemv.py), several times faster than gemm there."""
    if a.dtype.kind == "c":
        return _by_real_products(_gemm, a, b)
    if a.shape[0] == 1 and a.shape[1] > 0:
        return vector_matrix(a[0], b)[None, :]
    if b.shape[1] == 1 and b.shape[0] > 0:
        return matrix_vector(a, b[:, 0])[:, None]
    blas_threads.for_product(a.shape[0], a.shape[1], b.shape[1])
    if a.shape[0] <= _FEW_ROWS and a.shape[0] * b.shape[1] <= _FEW_OUT and \
            b.strides[0] == b.itemsize:
        # a few rows times a row-major weight's transpose (a short prompt's linear): OpenBLAS
        # packs all of b for so few rows of a, and the product turned round, w @ a.T, costs
        # 0.4-0.7x that on its SkylakeX kernels and 0.6-0.95x on its Haswell ones, copy to C
        # order included (bench/few_rows.py); each element is still one dot over k
        return np.ascontiguousarray(np.matmul(b.T, a.T).T)
    return np.matmul(a, b)


_FEW_ROWS = 16      # rows of a product taken turned round (more: no gain on Haswell kernels)
_FEW_OUT = 1 << 16  # output elements at most: the transposing copy stays small


def _batched(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.matmul over stacked matrices, with the BLAS thread count set for the whole product."""
    if a.dtype.kind == "c":
        return _by_real_products(_batched, a, b)
    blas_threads.for_product(a.shape[-2] * (a.size // max(a.shape[-2] * a.shape[-1], 1)),
                             a.shape[-1], b.shape[-1])
    return np.matmul(a, b)


def _zeros(shape, dt):
    out = empty(shape, dt, CPU)
    out._np[...] = 0
    return out


def _scaled(prod: np.ndarray, alpha, self_np, beta) -> np.ndarray:
    """beta * self + alpha * prod, in prod's (opmath) dtype, in place into prod."""
    if alpha != 1:
        prod *= alpha
    if beta != 0:
        if beta != 1:
            self_np = self_np * beta
        prod += self_np
    return prod


def _alpha_beta(alpha, beta, dt):
    """alpha and beta in opmath; the defaults (int 1, what linear passes) as they are: they
    convert to 1 in every dtype, and ``_scaled`` only compares them with 0 and 1."""
    if type(alpha) is int and type(beta) is int and alpha == 1 and beta == 1:
        return 1, 1
    om = opmath_dtype(dt)
    return scalar_to(alpha, om), scalar_to(beta, om)


def _beta_only(self_t, beta, dt, shape):
    """The k == 0 (or empty batch) result: zeros if beta == 0, else self * beta."""
    if beta == 0:
        return _zeros(shape, dt)
    b = scalar_to(beta, opmath_dtype(dt))
    return wrap(np.broadcast_to(_operand(self_t, dt) * b, shape).copy(), dt)


def _broadcasts(size: tuple, shape: tuple) -> bool:
    """Whether ``expand(size -> shape)`` would succeed: numpy's broadcasting of the array then
    reads the same values as the expanded view (linear's bias, ``(p,)`` to ``(n, p)``)."""
    return len(size) <= len(shape) and all(
        s == 1 or s == t for s, t in zip(reversed(size), reversed(shape)))


# ---- mm, addmm --------------------------------------------------------------------------------

def _check_mm_shapes(m1, m2):
    (n, k), (k2, p) = m1._size, m2._size
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{p})")
    return n, k, p


@kernel("mm")
def mm(self, mat2):
    if len(self._size) != 2:
        raise RuntimeError("self must be a matrix")
    if len(mat2._size) != 2:
        raise RuntimeError("mat2 must be a matrix")
    n, k, p = _check_mm_shapes(self, mat2)
    dt = self._dtype
    if mat2._dtype is not dt:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {typemeta(dt)} "
                           f"!= {typemeta(mat2._dtype)}")
    if n == 0 or p == 0:
        return empty((n, p), dt, CPU)
    if k == 0:
        return _zeros((n, p), dt)
    if dt not in _ADDMM:
        raise not_implemented("addmm_impl_cpu_", dt)
    return wrap(_mm_product(self, mat2, dt), dt)


@kernel("addmm")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    dt = mat1._dtype
    if self._dtype is not mat2._dtype:
        raise RuntimeError("self and mat2 must have the same dtype, but got "
                           f"{self._dtype._cpp_name} and {mat2._dtype._cpp_name}")
    if dt is not mat2._dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                           f"{dt._cpp_name} and {mat2._dtype._cpp_name}")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if len(m._size) != 2:
            raise RuntimeError(f"{name} must be a matrix, got {len(m._size)}-D tensor")
    n, k, p = _check_mm_shapes(mat1, mat2)
    self_b = self if self._size == (n, p) or _broadcasts(self._size, (n, p)) else \
        _expand_view(self, [n, p])  # (expand's checks and errors; a bias reaches numpy as it is)
    if n == 0 or p == 0:
        return empty((n, p), dt, CPU)
    if k == 0:
        return _beta_only(self_b, beta, dt, (n, p))
    if dt not in _ADDMM:
        raise not_implemented("addmm_impl_cpu_", dt)
    a, b = _alpha_beta(alpha, beta, dt)
    prod = _mm_product(mat1, mat2, dt)
    return wrap(_scaled(prod, a, _operand(self_b, dt) if b != 0 else None, b), dt)


# ---- bmm, baddbmm, addbmm ---------------------------------------------------------------------

def _check_bmm(batch1, batch2):
    if len(batch1._size) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(batch2._size) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    bs, n, k = batch1._size
    b2, k2, p = batch2._size
    if b2 != bs or k2 != k:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bs}, {k}] but got: [{b2}, {k2}].")
    return bs, n, k, p


def _bmm_dispatch(batch1, batch2, name, k, n, p):
    """bmm_out_or_baddbmm_: small products run a naive kernel over the standard dtypes (the
    '{name}' refusal), larger ones a gemm per batch (the addmm refusal)."""
    dt, dt2 = batch1._dtype, batch2._dtype
    small = k * n * p < 400
    if small and dt not in _STD:
        raise not_implemented(name, dt)
    if not small and dt not in _ADDMM:
        raise not_implemented("addmm_impl_cpu_", dt)
    if dt2 is not dt:
        raise RuntimeError(f"expected scalar type {dt._cpp_name} but found {dt2._cpp_name}")


@kernel("bmm")
def bmm(self, mat2):
    bs, n, k, p = _check_bmm(self, mat2)
    dt = mat2._dtype  # upstream's meta takes batch2's options
    if bs * n * p == 0:
        return empty((bs, n, p), dt, CPU)
    if k == 0:
        return _zeros((bs, n, p), dt)
    _bmm_dispatch(self, mat2, "bmm", k, n, p)
    return wrap(_batched(_operand(self, dt), _operand(mat2, dt)), dt)


@kernel("baddbmm")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    shape = [batch1.size(0), batch1.size(1), batch2.size(2)]
    self_b = self if list(self._size) == shape else _expand_view(self, shape)
    if self._dtype is not batch1._dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {typemeta(self._dtype)}, "
                           f"batch1: {typemeta(batch1._dtype)}, batch2: "
                           f"{typemeta(batch2._dtype)}")
    bs, n, k, p = _check_bmm(batch1, batch2)
    dt = batch2._dtype
    if bs * n * p == 0:
        return empty((bs, n, p), dt, CPU)
    if k == 0:
        return _beta_only(self_b, beta, dt, (bs, n, p))
    _bmm_dispatch(batch1, batch2, "baddbmm", k, n, p)
    a, b = _alpha_beta(alpha, beta, dt)
    prod = _batched(_operand(batch1, dt), _operand(batch2, dt))
    return wrap(_scaled(prod, a, _operand(self_b, dt) if b != 0 else None, b), dt)


@kernel("addbmm")
def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    shape = [batch1.size(1), batch2.size(2)]
    self_b = self if list(self._size) == shape else _expand_view(self, shape)
    if len(batch1._size) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(batch2._size) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    bs, n, k = batch1._size
    b2, k2, p = batch2._size
    if bs != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {bs} and "
                           f"{b2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    dt = self._dtype  # the result is resized as self; each batch is an addmm_ into it
    if bs == 0:
        return _beta_only(self_b, beta, dt, (n, p))
    if dt is not batch2._dtype:
        raise RuntimeError("self and mat2 must have the same dtype, but got "
                           f"{dt._cpp_name} and {batch2._dtype._cpp_name}")
    if batch1._dtype is not batch2._dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                           f"{batch1._dtype._cpp_name} and {batch2._dtype._cpp_name}")
    if n * p == 0:
        return empty((n, p), dt, CPU)
    if k == 0:
        return _beta_only(self_b, beta, dt, (n, p))
    if dt not in _ADDMM:
        raise not_implemented("addmm_impl_cpu_", dt)
    om = opmath_dtype(dt)
    a, b = scalar_to(alpha, om), scalar_to(beta, om)
    # upstream: result.addmm_(b1[i], b2[i], beta_i, alpha) batch after batch (beta_i = 1 after
    # the first); numpy's reduction over the leading axis adds in that same order
    prods = _batched(_operand(batch1, dt), _operand(batch2, dt))
    if a != 1:
        prods *= a
    if b != 0:
        first = _operand(self_b, dt) * b if b != 1 else _operand(self_b, dt)
        prods[0] += first
    return wrap(np.add.reduce(prods, axis=0), dt)


def _addbmm_into(dest, self, batch1, batch2, beta, alpha):
    """addbmm_out: the result is resized as the broadcast self (no resize warning), then
    written."""
    result = addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    if tuple(dest._size) != tuple(result._size):
        call("resize_", dest, list(result._size))
    from .copy import copy_into

    copy_into(dest, result)
    return dest


@kernel("addbmm_")
def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _addbmm_into(self, self, batch1, batch2, beta, alpha)


@kernel("addbmm.out")
def addbmm_out(self, batch1, batch2, *, beta=1, alpha=1, out):
    return _addbmm_into(out, self, batch1, batch2, beta, alpha)


# ---- addmv, mv, dot, vdot ---------------------------------------------------------------------

def _check_addmv(self, mat, vec, self_dtype):
    if not (len(mat._size) == 2 and len(vec._size) == 1 and len(self._size) <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(self._size)}, "
                           f"{len(mat._size)}, {len(vec._size)}")
    m, k = mat._size
    numel = self.numel()
    if k != vec._size[0] or (m != numel and numel != 1):
        raise RuntimeError(f"size mismatch, got input ({self.size(0)}), mat ({m}x{k}), "
                           f"vec ({vec._size[0]})")
    if not (self_dtype is mat._dtype is vec._dtype):
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{self_dtype._cpp_name}, {mat._dtype._cpp_name}, and "
                           f"{vec._dtype._cpp_name}")
    return m, k


def _mv_product(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """mat @ vec: the product one row of ``linear`` makes (support/gemv.py) where it applies, so
    ``mv(w, x)`` and ``linear(x, w)`` agree bit for bit, as upstream's do."""
    if by_rows(m, v):
        return matrix_vector(m, v)
    blas_threads.for_product(m.shape[0], m.shape[1], 1)
    return np.matmul(m, v)


@kernel("addmv")
def addmv(self, mat, vec, *, beta=1, alpha=1):
    m, k = _check_addmv(self, mat, vec, self._dtype)
    dt = vec._dtype
    self_b = self if self._size == (m,) else _expand_view(self, [m])
    if m * k == 0:
        return _beta_only(self_b, beta, dt, (m,))
    if dt not in _STD:
        raise not_implemented("addmv_impl_cpu", dt)
    a, b = _alpha_beta(alpha, beta, dt)
    prod = _mv_product(_operand(mat, dt), _operand(vec, dt))
    return wrap(_scaled(prod, a, _operand(self_b, dt) if b != 0 else None, b), dt)


@kernel("mv")
def mv(self, vec):
    # upstream: addmv_(empty({self.size(0)}, vec.options()), self, vec, 0, 1)
    dt = vec._dtype
    n = self.size(0)
    result = empty((n,), dt, CPU)
    m, k = _check_addmv(result, self, vec, dt)
    if m * k == 0:
        return _zeros((m,), dt)
    if dt not in _STD:
        raise not_implemented("addmv_impl_cpu", dt)
    return wrap(_mv_product(_operand(self, dt), _operand(vec, dt)), dt)


def _dot_check(self, other):
    if len(self._size) != 1 or len(other._size) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(self._size)}D and "
                           f"{len(other._size)}D tensors")
    if self._dtype is not other._dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{self._dtype._cpp_name} and {other._dtype._cpp_name}")
    n, n2 = self._size[0], other._size[0]
    if n != n2:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{n2}] to "
                           f"have the same number of elements, but got {n} and {n2} elements "
                           "respectively")


@kernel("dot")
def dot(self, other):
    _dot_check(self, other)
    dt = self._dtype
    if dt not in _STD:
        raise not_implemented("dot", dt)
    return wrap(np.asarray(np.dot(_operand(self, dt), _operand(other, dt))), dt)


@kernel("vdot")
def vdot(self, other):
    if not self._dtype.is_complex:
        return dot(self, other)
    _dot_check(self, other)
    dt = self._dtype
    return wrap(np.asarray(np.vdot(arr(self), arr(other))), dt)


# ---- matmul (CompositeImplicitAutograd: LinearAlgebra.cpp _matmul_impl) -----------------------

def _should_fold(t1, t2, has_out) -> bool:
    larger = len(t1._size) >= len(t2._size)
    big = t1 if larger else call("transpose.int", t2, -2, -1)  # tensor2.mT()
    dim_small = len(t2._size) if larger else len(t1._size)
    if not (len(big._size) >= 3 and dim_small <= 2):
        return False
    small = t2 if larger else t1
    if small.requires_grad and not has_out:
        return True
    if len(t1._size) == 2:
        return False
    if big.numel() == 0:
        return True
    size, stride = big._size, big._stride
    return all(stride[i] == stride[i + 1] * size[i + 1] for i in range(len(size) - 2))


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _broadcast_batch(a, b) -> list:
    """infer_size over the batch dimensions."""
    return list(infer_size(a, b))


def _matmul_impl(out, tensor1, tensor2):
    d1, d2 = len(tensor1._size), len(tensor2._size)
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D "
                           f"and {d2}D")
    has_out = out is not None
    if has_out and (tensor1.requires_grad or tensor2.requires_grad or out.requires_grad):
        from ..core.grad_mode import is_grad_enabled

        if is_grad_enabled():
            raise RuntimeError("matmul(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")
    if d1 == 1 and d2 == 1:
        return call("dot.out", tensor1, tensor2, out=out) if has_out else \
            call("dot", tensor1, tensor2)
    if d1 == 2 and d2 == 1:
        return call("mv.out", tensor1, tensor2, out=out) if has_out else \
            call("mv", tensor1, tensor2)
    if d1 == 1 and d2 == 2:
        t1 = call("unsqueeze", tensor1, 0)
        r = call("mm.out", t1, tensor2, out=out) if has_out else call("mm", t1, tensor2)
        return call("squeeze_.dim", r, 0)
    if d1 == 2 and d2 == 2:
        return call("mm.out", tensor1, tensor2, out=out) if has_out else \
            call("mm", tensor1, tensor2)
    if _should_fold(tensor1, tensor2, has_out):
        return _matmul_folded(out, tensor1, tensor2, d1, d2)
    return _matmul_batched(out, tensor1, tensor2, d1, d2)


def _matmul_folded(out, tensor1, tensor2, d1, d2):
    # fold the batch of the larger tensor into mm's (or mv's) leading dimension
    transpose = d2 > d1
    t1 = call("transpose.int", tensor2, -2, -1) if transpose else tensor1
    t2 = (call("t", tensor1) if d1 == 2 else tensor1) if transpose else tensor2
    sizes_1 = t1._size
    output_shape = list(sizes_1[:-1])
    folded = _prod(output_shape)
    t2_is_matrix = len(t2._size) == 2
    if t2_is_matrix:
        output_shape.append(t2._size[1])
    t1_folded = call("reshape", t1, [folded, sizes_1[-1]])
    if out is None:
        if t2_is_matrix:
            output = call("_unsafe_view", call("mm", t1_folded, t2), output_shape)
            if transpose:
                return contiguous(call("transpose.int", output, -2, -1))
            return output
        return call("_unsafe_view", call("mv", t1_folded, t2), output_shape)
    from ..dispatch.structured import resize_out

    resize_out(out, output_shape)
    shape = [folded, t2._size[-1]] if t2_is_matrix else [folded]
    reshaped = call("reshape", out, shape)
    if t2_is_matrix:
        call("mm.out", t1_folded, t2, out=reshaped)
    else:
        call("mv.out", t1_folded, t2, out=reshaped)
    if reshaped._storage is not out._storage:
        call("copy_", out, reshaped)
    return out


def _matmul_batched(out, tensor1, tensor2, d1, d2):
    s1, s2 = tensor1._size, tensor2._size
    n = s1[-2] if d1 > 1 else 1
    m1 = s1[-1]
    batch1 = list(s1[:max(d1 - 2, 0)])
    m2 = s2[-2] if d2 > 1 else s2[0]
    p = s2[-1] if d2 > 1 else 1
    batch2 = list(s2[:max(d2 - 2, 0)])
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:
        # a batch of one that requires grad folds instead of broadcasting (see should_fold)
        if batch1[0] == 1 and (tensor1.requires_grad or subclass_like(tensor1)):
            return _matmul_impl(out, call("squeeze.dim", tensor1, 0), tensor2)
        if batch2[0] == 1 and (tensor2.requires_grad or subclass_like(tensor2)):
            return _matmul_impl(out, tensor1, call("squeeze.dim", tensor2, 0))
    output_shape = _broadcast_batch(batch1, batch2)
    bp = _prod(output_shape)
    t1 = call("reshape", call("expand", tensor1, output_shape + [n, m1]), [bp, n, m1])
    vector_rhs = d2 == 1
    if vector_rhs:
        t2 = call("unsqueeze", call("reshape", call("expand", tensor2, output_shape + [m2]),
                                    [bp, m2]), 2)
    else:
        t2 = call("reshape", call("expand", tensor2, output_shape + [m2, p]), [bp, m2, p])
    if d1 > 1:
        output_shape.append(n)
    if d2 > 1:
        output_shape.append(p)
    if out is None:
        r = call("bmm", t1, t2)
        if vector_rhs:
            r = call("squeeze.dim", r, -1)
        return call("_unsafe_view", r, output_shape)
    from ..dispatch.structured import resize_out

    resize_out(out, output_shape)
    reshaped = call("reshape", out, [bp, n, p])
    call("bmm.out", t1, t2, out=reshaped)
    if vector_rhs:
        reshaped = call("squeeze.dim", reshaped, -1)
    if reshaped._storage is not out._storage:
        call("copy_", out, call("view", reshaped, list(out._size)))
    return out


@kernel("matmul", composite=True)
def matmul(self, other):
    return _matmul_impl(None, self, other)


@kernel("matmul.out", composite=True)
def matmul_out(self, other, *, out):
    _matmul_impl(out, self, other)
    return out


# ---- linear (CompositeImplicitAutograd: Linear.cpp) -------------------------------------------

def _flatten_nd_linear(input, weight, bias):
    sizes = input._size
    flat = _prod(sizes[:-1])
    result = call("addmm", bias, call("reshape", input, [flat, sizes[-1]]), call("t", weight))
    return call("view", result, list(sizes[:-1]) + [result._size[1]])


@kernel("linear", composite=True)
def linear(input, weight, bias=None):
    di, dw = len(input._size), len(weight._size)
    if di == 0 or dw == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {di}D "
                           f"and {dw}D")
    if di == 2 and bias is not None:
        return call("addmm", bias, input, call("t", weight))
    if bias is not None and (len(bias._size) == 1 or len(call("squeeze", bias)._size) == 1) \
            and contiguous_of(bias):
        if contiguous_of(input):
            return _flatten_nd_linear(input, weight, bias)
        if _FLATTEN_3D:
            return _flatten_nd_linear(contiguous(input), weight, bias)
    output = call("matmul", input, call("t", weight))
    if bias is not None:
        if subclass_like(bias):
            return call("add.Tensor", output, bias)
        call("add_.Tensor", output, bias)
    return output


@kernel("linear.out")
def linear_out(input, weight, bias=None, *, out):
    if len(input._size) == 2 and bias is not None:
        return call("addmm.out", bias, input, call("t", weight), out=out)
    call("matmul.out", input, call("t", weight), out=out)
    if bias is not None:
        call("add_.Tensor", out, bias)
    return out



def linear_widened(input, weight, bias=None):
    """``linear`` of dense 16/8-bit float tensors that no autograd, mode or subclass observes
    (the door's fast lane), in one step: the one product the composite above reaches (addmm, or
    mm through matmul's fold), accumulated in float32 over the weight read a block at a time,
    the bias added in float32, rounded once. None where the composite does something else
    (a batched product, a bias added after matmul, a shape it rejects): the caller runs it."""
    if input._np is None or weight._np is None or (bias is not None and bias._np is None):
        return None
    dt, di = input._dtype, len(input._size)
    k = weight._size[-1] if len(weight._size) == 2 else -1
    if di == 0 or k < 1 or input._size[-1] != k or input.numel() == 0 or weight._size[0] == 0 \
            or weight._dtype is not dt or (bias is not None and bias._dtype is not dt):
        return None
    n = weight._size[0]
    if bias is None:
        if di > 2 and not _should_fold(input, weight, False):
            return None
    elif di == 2:  # addmm expands the bias to the result, as numpy broadcasts it
        target = (input._size[0], n)
        if bias.dim() > 2 or any(s not in (1, t) for s, t in zip(bias._size[::-1], target[::-1])):
            return None
    elif not (bias.dim() == 1 and bias._size[0] in (1, n) and bias.is_contiguous()
              and (input.is_contiguous() or _FLATTEN_3D)):
        return None
    x = widened(input, dt).reshape(-1, k)
    w = arr(weight)
    if _rows_weight(w, dt):
        prod = times_transposed(x, w)  # the product _mm_product makes of addmm/mm's w.t()
    else:
        prod = _gemm(x, widened(weight, dt).T)
    if bias is not None:
        prod += widened(bias, dt)
    return wrap(prod.reshape(input._size[:-1] + (n,)), dt)
