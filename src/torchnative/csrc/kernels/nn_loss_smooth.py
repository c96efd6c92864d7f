"""smooth_l1_loss, huber_loss and their backward kernels as upstream's CPU code computes them
(Loss.cpp; cpu/BinaryOpsKernel.cpp's forward loops, cpu/PointwiseOpsKernel.cpp's backward loops).
The reductions are the mean and sum kernels over the unreduced loss, as upstream's.

The backward loops' SIMD and scalar code are different formulas, not only other roundings:
smooth_l1_backward's SIMD loop computes ``norm * (x / beta) * grad``, its scalar loop
``norm * x * grad / beta`` with ``beta`` a double (the quotient rounded twice); huber_backward's
scalar loop multiplies by the double ``delta`` last (float16/bfloat16 round after each operation
in both). ``compiled_lanes`` says which code computed each element (an AVX512 build's compiler
vectorizes part of the remainder with the SIMD formula's results). The forward loops agree with
themselves; their float16/bfloat16 arithmetic is as measured (see each kernel).

Left on its decomposition: soft_margin_loss_backward. Loss.cpp's steps (exp, mul, add, div, mul)
through our kernels are exact but for the exp kernel, which rounds some float32 results correctly
where upstream's SLEEF/glibc expf are one ulp off (exp(-1.3461798) = 0x3e853d31, upstream's
0x3e853d32), and for the bfloat16 NaN patterns of those kernels.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from ..core.tensor import TensorBase
from ..ops.kernel_registry import kernel
from ..platform import cpu_capability
from .nn_activation_grads import binary, compiled_lanes
from .nn_loss import MEAN, _apply_reduction
from .nn_loss_grads import _finish_as, _operands, _promoted, _r, _same_dtype
from .nn_shrink import pick, stored_nans
from .nn_softmax_backward import to_dtype
from .pointwise_base import ALL, BF16, F16, FLOAT_H, REDUCED, broadcast_shape, check, checked, \
    quiet
from .support.common import wrap
from .support.iteration import ti_perm

_F32 = np.float32
_U8 = D.BY_NAME["uint8"]
_DEFAULT = cpu_capability.CAPABILITY == cpu_capability.DEFAULT


def _value(v, dt):
    """``scalar_t(v)`` for a double ``v`` (an unchecked cast), held in the compute dtype."""
    with quiet():
        if dt in REDUCED:
            return _r(np.asarray(_F32(v)), dt)[()]
        return np.asarray(v).astype(np.float64 if dt.itemsize == 8 else _F32)[()]


def _half(dt):
    """float16's rounding after each operation (Vectorized<Half>), the identity otherwise."""
    return (lambda v: _r(v, dt)) if dt is F16 else (lambda v: v)


def _scale(reduction, numel):
    """The loops' ``norm``: 1 / numel (a double; inf for an empty mean) or 1."""
    if reduction != MEAN:
        return 1.0
    return 1.0 / numel if numel else math.inf


def _quotient(x, b):
    """Integer ``x / b`` as C++ divides (truncating toward zero)."""
    b = x.dtype.type(b)
    if not b:
        return x
    q = x // b   # floored; one up where it rounded an inexact negative quotient down
    return np.where((x % b != 0) & ((x < 0) != (b < 0)), q + 1, q)


def _geometry(self, ins):
    """The backward loop's operands for lane questions: its output first (a new contiguous
    tensor shaped like the input: its layout takes part in the iterator's order)."""
    return (wrap(np.empty(self._size, np.uint8), _U8), *ins)


def _flipped(ops, itemsize: int, least: int):
    """Where the scalar loop's compiled code computes ``norm * grad`` as ``-(-norm * grad)``
    (a NaN grad comes out with its sign flipped), None for nowhere. Measured on every capability:
    after the vectorized part of each innermost run (none where the run is not vectorizable),
    the compiler's 16-byte chunks of the rest do (when at least ``least`` elements are left);
    the last few elements, one by one, do not."""
    ts = [t for t in ops if isinstance(t, TensorBase)]
    shape = tuple(broadcast_shape(*[t._size for t in ts]))
    nd = len(shape)
    strides = []
    for t in ts:
        off = nd - len(t._size)
        st = [0] * nd
        for i, (sz, st_) in enumerate(zip(t._size, t._stride)):
            st[off + i] = 0 if sz == 1 else st_
        strides.append(st)
    dims = [d for d in ti_perm(shape, strides) if shape[d] != 1] if nd else []
    run, inner = dims[:1], shape[dims[0]] if dims else math.prod(shape)
    for d in dims[1:]:
        if all(st[d] == st[run[-1]] * shape[run[-1]] for st in strides):
            run.append(d)
            inner *= shape[d]
        else:
            break
    pos = np.zeros(shape, np.int64)
    acc = 1
    for d in run:
        pos = pos + np.arange(shape[d]).reshape([-1 if i == d else 1 for i in range(nd)]) * acc
        acc *= shape[d]
    vec = compiled_lanes(ops, itemsize)
    cut = 0 if vec is None else int(np.count_nonzero(vec & (pos == 0)) and
                                    np.max(np.where(vec, pos, -1)) + 1)
    k = 16 // itemsize
    end = cut + (inner - cut) // k * k
    if end <= cut or inner - cut < least:
        return None
    return np.broadcast_to((pos >= cut) & (pos < end), shape)


def _result(r, shape, dt, out_dt):
    """The loop's values as a new contiguous ``out_dt`` tensor of ``shape`` (0-dim included)."""
    return _finish_as(np.asarray(r).reshape(-1), dt, out_dt).view(tuple(shape))


def _flip_nans(r, where, ops, itemsize, least=0):
    """``r`` with the NaNs at ``where`` (the loop's ``norm * grad`` branch) sign-flipped where
    ``_flipped`` says the compiled code negates them."""
    bad = where & (r != r)
    if not bad.any():
        return r
    flip = _flipped(ops, itemsize, least)
    if flip is None:
        return r
    return np.where(bad & flip, -r, r)


# ---- forward -------------------------------------------------------------------------------------

@kernel("smooth_l1_loss")
def smooth_l1_loss(self, target, reduction=MEAN, beta=1.0):
    if not beta >= 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")

    def fn(dt, a, b):
        # float16: each operation rounded (measured in both loops); bfloat16: float, with a
        # float beta, rounded once
        rd = _half(dt)
        z = np.abs(rd(a - b))
        bv = _F32(beta) if dt is BF16 else _value(beta, dt)
        half = z.dtype.type(0.5)
        return pick(z >= bv, rd(z - rd(half * bv)), rd(rd(rd(half * z) * z) / bv))

    loss = binary("smooth_l1_cpu", FLOAT_H, (self, target), fn)
    return _apply_reduction(loss, reduction)


@kernel("huber_loss")
def huber_loss(self, target, reduction=MEAN, delta=1.0):
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    ops = (self, target)
    out_dt = self._dtype

    def fn(dt, a, b):
        # measured: bfloat16 rounds after each operation (a bfloat16 delta), float16 computes
        # in float with a float delta and rounds once
        rd = (lambda v: _r(v, dt)) if dt is BF16 else (lambda v: v)
        z = np.abs(rd(a - b))
        dv = _F32(delta) if dt is F16 else _value(delta, dt)
        half = z.dtype.type(0.5)
        return pick(z < dv, rd(rd(half * z) * z), rd(dv * rd(z - rd(half * dv))))

    # into empty_like(input): the common dtype must cast to the input's
    _promoted(out_dt, ops)
    loss = binary("huber_cpu", FLOAT_H, ops, fn)
    if loss._dtype is not out_dt:
        loss = to_dtype(loss, out_dt)
    return _apply_reduction(loss, reduction)


# ---- backward ------------------------------------------------------------------------------------

def _split(mask, simd, scalar, *arrays):
    """The SIMD loop's values where ``mask`` (None: nowhere), the scalar loop's elsewhere; each
    formula a function of ``arrays`` (broadcast to one shape), the scalar one computed only on
    the elements it owns (usually a short tail)."""
    if mask is None:
        return scalar(*arrays)
    r = np.array(simd(*arrays), copy=True)
    rest = ~mask
    if rest.any():
        r[rest] = scalar(*[np.broadcast_to(v, r.shape)[rest] for v in arrays])
    return r


@kernel("smooth_l1_loss_backward")
def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    out_dt = self._dtype
    ins = (self, target, grad_output)
    dt = _promoted(out_dt, ins)
    check("smooth_l1_backward_cpu_out", dt, REDUCED if dt in REDUCED else ALL)
    shape, (x_, t_, g) = _operands(self._size, dt, ins)
    norm = _scale(reduction, self.numel())
    with quiet():
        if dt in REDUCED:   # the loops' math in float, norm and beta floats
            nv, bv = _F32(norm), _F32(beta)
        else:
            nv, bv = checked(norm, dt), _value(beta, dt)
        x = x_ - t_
        one = x.dtype.type(1)

        def simd(x, g):   # norm * (x / beta or +-1) * grad
            q = _quotient(x, bv) if x.dtype.kind == "i" else x / bv
            out = pick(np.abs(x) >= bv, pick(x > 0, one, -one), q)
            return nv * out * g

        def scalar(x, g):   # beta is a double here: the last quotient is a double one
            xd = x.astype(np.float64)
            mid = ((nv * x * g).astype(np.float64) / np.float64(beta)).astype(x.dtype)
            return pick(xd <= -beta, -nv * g, pick(xd >= beta, nv * g, mid))

        ops = _geometry(self, ins)
        r = _split(compiled_lanes(ops, dt.itemsize), simd, scalar, x, g)
        if dt not in REDUCED:
            r = _flip_nans(r, x >= beta, ops, dt.itemsize)
    return stored_nans(_result(r, shape, dt, out_dt), ops)


@kernel("huber_loss_backward")
def huber_loss_backward(grad_output, self, target, reduction, delta):
    ins = (self, target, grad_output)
    dt = _same_dtype((self, *ins))
    check("huber_backward_cpu_out", dt, FLOAT_H)
    shape, (x_, t_, g) = _operands(self._size, dt, ins)
    norm = _scale(reduction, self.numel())
    nv, dv = checked(norm, dt), _value(delta, dt)
    rd = (lambda v: _r(v, dt))
    with quiet():
        x = rd(x_ - t_)
        one = x.dtype.type(1)

        def simd(x, g):   # Vectorized<scalar_t>: float16/bfloat16 round after each operation
            out = pick(np.abs(x) >= dv, rd(pick(x > 0, one, -one) * dv), x)
            return rd(rd(nv * out) * g)

        def scalar(x, g):  # times the double delta last
            xd = x.astype(np.float64)
            far = pick(xd <= -delta, rd(-nv * g), rd(nv * g)).astype(np.float64) * delta
            far = rd(far.astype(_F32)) if dt in REDUCED else far.astype(x.dtype)
            return pick((xd <= -delta) | (xd >= delta), far, rd(rd(nv * x) * g))

        ops = _geometry(self, ins)
        r = _split(compiled_lanes(ops, dt.itemsize), simd, scalar, x, g)
        if dt not in REDUCED:   # (measured: DEFAULT's float64 loop leaves two elements alone)
            least = 3 if dt.itemsize == 8 and _DEFAULT else 0
            r = _flip_nans(r, x >= delta, ops, dt.itemsize, least)
    return stored_nans(_result(r, shape, dt, dt), ops)
