"""Losses (LossNLL.cpp, LossNLL2d.cpp, Loss.cpp): nll_loss_forward, nll_loss2d_forward,
mse_loss, binary_cross_entropy, binary_cross_entropy_with_logits; and the
CompositeImplicitAutograd nll_loss, nll_loss2d, nll_loss_nd, cross_entropy_loss (class indices,
class probabilities, label smoothing), l1_loss and kl_div, written with the operators upstream's
C++ dispatches.

Reductions: 0 none, 1 mean, 2 sum. nll_loss's float32/float64 sums are upstream's own cascade
in the input's dtype (nn_loss_cascade.py); the other sums accumulate in float64 and round once
to the result dtype (upstream's cascade sums are within an ulp of that); a mean over nothing is
NaN.
Reduced-precision losses round after every elementwise step, as upstream's BFloat16/Half
arithmetic does.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.cast import cast_array
from ..core.promotion import can_cast, promote_types
from .support.common import arr, as_compute, int_list, wrap
from .support.broadcast import infer_size
from ..dispatch.call import call
from .support.nn_util import not_implemented, subclass_like
from ..ops.kernel_registry import kernel
from ..core.construct import from_result
from ..platform.float_state import quiet_enter, quiet_exit
from .nn_loss_cascade import cascade_total

_B = D.BY_NAME
_LONG, _BYTE, _F64 = _B["int64"], _B["uint8"], _B["float64"]
_FLOATS = frozenset(_B[n] for n in ("float32", "float64", "float16", "bfloat16"))
_REDUCED = frozenset((_B["float16"], _B["bfloat16"]))
NONE, MEAN, SUM = 0, 1, 2


def _vals(t) -> np.ndarray:
    a = arr(t)
    return as_compute(t, t._dtype) if a.dtype.kind == "V" or a.dtype == np.float16 else a


def _rounded(x: np.ndarray, dt) -> np.ndarray:
    """x (computed in opmath) rounded to dt and back: one reduced-precision arithmetic step."""
    if dt not in _REDUCED:
        return x
    return cast_array(cast_array(x, _B["float32"], dt), dt, _B["float32"])


def _to_dtype(x: np.ndarray, dt) -> np.ndarray:
    """float64 values rounded once to dt, held in dt's compute dtype."""
    if dt is _F64:
        return x
    acc = np.float32 if dt in _REDUCED else D.numpy_dtype(dt)
    return _rounded(x.astype(acc), dt) if dt in _REDUCED else x.astype(acc)


def _scalar(value: float, dt):
    return wrap(np.asarray(value, dtype=np.float64), _F64) if dt is _F64 else \
        wrap(cast_array(np.asarray(value, np.float64), _F64, dt), dt)


# ---- nll_loss ---------------------------------------------------------------------------------

def _check_target_dtype(target):
    if target._dtype not in (_LONG, _BYTE):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{target._dtype._cpp_name}")


def _gather_losses(x2, t, weight, ignore_index, n_classes):
    """Per-item -input[i, t[i]] * w[t[i]] (0 where ignored) and the weights, as float arrays."""
    t = t.astype(np.int64, copy=False)
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(t[np.argmax(bad)])} is out of bounds.")
    safe = np.where(keep, t, 0)
    picked = np.take_along_axis(x2, safe[:, None], 1)[:, 0]
    w = _vals(weight)[safe] if weight is not None else np.ones_like(picked)
    w = np.where(keep, w, 0).astype(picked.dtype)
    return picked, w, keep


def _reduce_nll(picked, w, keep, reduction, dt, weighted):
    """The reduction branch: the loss sum (and the mean) and the total weight."""
    loss = -(picked.astype(np.float64) * w.astype(np.float64)).sum()
    total = w.astype(np.float64).sum() if weighted else float(keep.sum())
    acc = np.float32 if dt in _REDUCED else D.numpy_dtype(dt)
    loss_r = _rounded(np.asarray(loss, acc), dt)
    total_r = _rounded(np.asarray(total, acc), dt)
    if reduction == MEAN:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss_r = _rounded(np.asarray(loss_r / total_r, acc), dt)
    return wrap(np.asarray(loss_r, acc), dt), wrap(np.asarray(total_r, acc), dt)


def check_nll_shapes(self, target) -> None:
    """nll_loss's input/target shape rules (its forward's and backward's meta functions)."""
    if not 0 < len(self._size) <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if len(target._size) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    no_batch = len(self._size) == 1 and len(target._size) == 0
    if not (no_batch or self._size[0] == target._size[0]):
        raise RuntimeError(f"size mismatch (got input: {int_list(self._size)}, target: "
                           f"{int_list(target._size)})")


def check_nll2d_inputs(self, target, weight) -> None:
    """LossNLL2d.cpp's check_inputs_nll_loss2d (forward and backward)."""
    if len(target._size) != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {len(target._size)}")
    if len(self._size) != 4:
        raise RuntimeError("only batches of spatial inputs supported (4D tensors), but got input "
                           f"of dimension: {len(self._size)}")
    n, c, h, w_ = self._size
    if weight is not None and weight.numel() != c:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (n, h, w_) != tuple(target._size):
        raise RuntimeError(f"size mismatch (got input: {int_list(self._size)} , target: "
                           f"{int_list(target._size)}")


@kernel("nll_loss_forward")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    _check_target_dtype(target)
    check_nll_shapes(self, target)
    n_classes = self._size[-1]
    if weight is not None and not (len(weight._size) == 1 and weight.numel() == n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           "or no classes but got weight tensor of shape: "
                           f"{int_list(weight._size)}")
    dt = self._dtype
    if dt not in _FLOATS:
        raise not_implemented("nll_loss_out_frame", dt)
    if weight is not None and weight._dtype is not dt:
        raise RuntimeError(f"expected scalar type {dt._cpp_name} but found "
                           f"{weight._dtype._cpp_name}")
    x2 = _vals(self).reshape(-1, n_classes)
    t = arr(target).reshape(-1)
    if reduction == NONE and len(self._size) == 2:
        picked, w, keep = _gather_losses(x2, t, weight, ignore_index, n_classes)
        out = _rounded(np.where(keep, -picked * w, 0).astype(picked.dtype), dt)
        return wrap(out, dt), _scalar(0.0, dt)
    if t.size == 0:
        return _scalar(np.nan if reduction == MEAN else 0.0, dt), _scalar(0.0, dt)
    if dt in _NATIVE:
        batch = x2.shape[0]
        if weight is None and t.size == batch and every_target_kept(t, ignore_index, n_classes):
            # every item kept, unit weights
            picked, weights, items, kept = x2[np.arange(batch), t], None, None, batch
        else:
            picked, w, keep = _gather_losses(x2, t, weight, ignore_index, n_classes)
            items = np.flatnonzero(keep)
            kept = items.size
            picked, weights = picked[items], (w[items] if weight is not None else None)
        return _cascade_reduced(picked, weights, items, kept, batch, reduction, dt)
    picked, w, keep = _gather_losses(x2, t, weight, ignore_index, n_classes)
    return _reduce_nll(picked, w, keep, reduction, dt, weight is not None)


def _cascade_reduced(picked, weights, items, kept, batch, reduction, dt):
    """The loss and total weight of the ``kept`` float32/float64 items at ``items`` (None: the
    whole batch), summed as nll_loss_out_frame sums them (nn_loss_cascade.py): each amount
    ``input * weight`` rounded in the input's dtype, the mean divided in it."""
    token = quiet_enter()
    try:
        amounts = picked if weights is None else picked * weights
        loss = cascade_total(amounts, items, batch, True)
        total = picked.dtype.type(kept) if weights is None else \
            cascade_total(weights, items, batch, False)
        if reduction == MEAN:
            loss = loss / total
    finally:
        quiet_exit(token)
    return from_result(np.array(loss), dt), from_result(np.array(total), dt)


_NATIVE = frozenset((_B["float32"], _F64))


def every_target_kept(t: np.ndarray, ignore_index: int, n_classes: int) -> bool:
    """Whether every target (a non-empty integer array) is a class and none is ignored: then no
    target is refused or masked. Otherwise the general steps decide (and name a bad target)."""
    lo, hi = int(np.minimum.reduce(t)), int(np.maximum.reduce(t))
    return 0 <= lo and hi < n_classes and not lo <= ignore_index <= hi


@kernel("nll_loss2d_forward")
def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    _check_target_dtype(target)
    check_nll2d_inputs(self, target, weight)
    n, c, h, w_ = self._size
    dt = self._dtype
    if dt not in _FLOATS:
        raise not_implemented("nll_loss2d_forward_out_frame", dt)
    if weight is not None and weight._dtype is not dt:
        raise RuntimeError(f"expected scalar type {dt._cpp_name} but found "
                           f"{weight._dtype._cpp_name}")
    x2 = np.moveaxis(_vals(self), 1, -1).reshape(-1, c)
    t = arr(target).reshape(-1)
    if reduction == NONE:
        picked, wt, keep = _gather_losses(x2, t, weight, ignore_index, c)
        out = _rounded(np.where(keep, -picked * wt, 0).astype(picked.dtype), dt)
        return wrap(out.reshape(n, h, w_), dt), _scalar(0.0, dt)
    if t.size == 0:
        return _scalar(np.nan if reduction == MEAN else 0.0, dt), _scalar(0.0, dt)
    picked, wt, keep = _gather_losses(x2, t, weight, ignore_index, c)
    return _reduce_nll(picked, wt, keep, reduction, dt, weight is not None)


@kernel("nll_loss", composite=True)
def nll_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    return call("nll_loss_forward", self, target, weight, reduction, ignore_index)[0]


@kernel("nll_loss2d", composite=True)
def nll_loss2d(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    return call("nll_loss2d_forward", self, target, weight, reduction, ignore_index)[0]


@kernel("nll_loss_nd", composite=True)
def nll_loss_nd(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    if len(self._size) < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {len(self._size)})")
    if len(self._size) != 1 and self._size[0] != target.size(0):
        raise ValueError(f"Expected input batch_size ({self._size[0]}) to match target "
                         f"batch_size ({target.size(0)}).")
    if len(self._size) in (1, 2):
        return call("nll_loss", self, target, weight, reduction, ignore_index)
    if len(self._size) == 4:
        return call("nll_loss2d", self, target, weight, reduction, ignore_index)
    n, c = self._size[0], self._size[1]
    out_size = [n] + list(self._size[2:])
    if list(target._size[1:]) != list(self._size[2:]):
        raise RuntimeError(f"Expected target size {int_list(out_size)}, got "
                           f"{int_list(target._size)}")
    from .support.nn_util import contiguous

    x, t = contiguous(self), contiguous(target)
    x = call("view", x, [n, c, 1, -1] if x.numel() > 0 else [n, c, 0, 0])
    t = call("view", t, [n, 1, -1] if t.numel() > 0 else [n, 0, 0])
    out = call("nll_loss2d", x, t, weight, reduction, ignore_index)
    return out if reduction != NONE else call("view", out, out_size)


# ---- cross_entropy ----------------------------------------------------------------------------

def _log_softmax(self, dim):
    return call("log_softmax.int", self, dim, self._dtype)


def _weight_view(weight, input, class_dim):
    shape = [1] * len(input._size)
    shape[class_dim] = weight._size[0]
    return call("view", weight, shape)


def _prob_target(self, target, weight, reduction, label_smoothing):
    class_dim = 0 if len(self._size) == 1 else 1
    n_classes = self.size(class_dim)
    if weight is not None and not (len(weight._size) == 1 and weight.numel() == n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{int_list(weight._size)}")
    input = _log_softmax(self, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{label_smoothing:g}")
        target = call("add.Scalar", call("mul.Scalar", target, 1 - label_smoothing),
                      label_smoothing / n_classes)
    w = None
    if weight is not None:
        w = _weight_view(weight, input, 1) if len(input._size) > 1 else weight
    prod = call("mul.Tensor", input, target)
    if w is not None:
        prod = call("mul.Tensor", prod, w)
    if reduction == MEAN:
        if input.numel() == 0:
            return call("neg", call("fill_.Scalar", call("sum", prod), float("nan")))
        return call("div.Scalar", call("neg", call("sum", prod)), input.numel() // n_classes)
    if reduction == SUM:
        return call("neg", call("sum", prod))
    if reduction == NONE:
        return call("neg", call("sum.dim_IntList", prod, [class_dim]))
    raise RuntimeError(f"Invalid reduction type encountered in cross_entropy: {reduction}")


def _label_smoothing(self, target, weight, reduction, ignore_index, label_smoothing):
    class_dim = 0 if len(self._size) == 1 else 1
    input = _log_softmax(self, class_dim)
    nll = call("nll_loss_nd", input, target, weight, reduction, ignore_index)
    n_classes = input.size(class_dim)
    if weight is not None:
        smooth = call("neg", call("sum.dim_IntList", call(
            "mul.Tensor", input, _weight_view(weight, input, class_dim)), [class_dim]))
    else:
        smooth = call("neg", call("sum.dim_IntList", input, [class_dim]))
    ignore_mask = call("eq.Scalar", target, ignore_index)
    call("masked_fill_.Scalar", smooth, ignore_mask, 0.0)
    if reduction == MEAN:
        if weight is not None:
            if subclass_like(weight):
                # gather the weights at index 0 for ignored targets, then mask them out
                filtered = call("masked_fill.Scalar", target, ignore_mask, 0)
                tw = call("gather", weight, 0, call("flatten.using_ints", filtered))
                wsum = call("sum", call("masked_fill_.Scalar", tw, call(
                    "flatten.using_ints", ignore_mask), 0))
                ret = call("div.Tensor", call("sum", smooth), wsum)
            else:
                kept = call("masked_select", target, call("bitwise_not", ignore_mask))
                denom = call("sum", call("gather", weight, 0, call("flatten.using_ints", kept)))
                ret = call("div.Tensor", call("sum", smooth), denom)  # C++: right operand first
        else:
            true_mask = call("bitwise_not", ignore_mask)
            denom = call("sum", true_mask)
            ret = call("div.Tensor", call("sum", smooth), denom)
    elif reduction == SUM:
        ret = call("sum", smooth)
    elif reduction == NONE:
        ret = smooth
    else:
        raise RuntimeError(f"Invalid reduction type encountered in cross_entropy: {reduction}")
    # (1 - ls) * nll + ret * (ls / n): C++ evaluates the right operand first
    right = call("mul.Scalar", ret, label_smoothing / n_classes)
    return call("add.Tensor", call("mul.Scalar", nll, 1 - label_smoothing), right)


@kernel("cross_entropy_loss", composite=True)
def cross_entropy_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100,
                       label_smoothing=0.0):
    if tuple(self._size) == tuple(target._size):
        if not target._dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {target._dtype._cpp_name}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _prob_target(self, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{label_smoothing:g}")
        return _label_smoothing(self, target, weight, reduction, ignore_index, label_smoothing)
    class_dim = 0 if len(self._size) == 1 else 1
    return call("nll_loss_nd", _log_softmax(self, class_dim), target, weight, reduction,
                ignore_index)


# ---- pointwise losses -------------------------------------------------------------------------

def _apply_reduction(loss, reduction):
    """apply_loss_reduction, inside a kernel: mean/sum of the unreduced loss."""
    if reduction == MEAN:
        return call("mean", loss, dtype=None)
    if reduction == SUM:
        return call("sum", loss, dtype=None)
    return loss


def _broadcast(a: np.ndarray, b: np.ndarray):
    try:
        return np.broadcast_arrays(a, b)
    except ValueError:
        infer_size(a.shape, b.shape)
        raise


@kernel("mse_loss")
def mse_loss(self, target, reduction=MEAN):
    dt = promote_types(self._dtype, target._dtype)
    if dt not in _FLOATS:
        raise not_implemented("mse_cpu", dt)
    a, b = _broadcast(as_compute(self, dt), as_compute(target, dt))
    diff = _rounded(a - b, dt)
    loss = wrap(_rounded(diff * diff, dt), dt)
    return _apply_reduction(loss, reduction)


@kernel("soft_margin_loss")
def soft_margin_loss(self, target, reduction=MEAN):
    """Loss.cpp's neg_out(input).mul_(target).exp_().log1p_(): each step rounded to the input's
    dtype (upstream's Python decomposition computes in float32 for float16, where exp overflows
    to inf only at the end), then the reduction."""
    loss = call("neg", self)
    call("mul_.Tensor", loss, target)
    call("exp_", loss)
    call("log1p_", loss)
    return _apply_reduction(loss, reduction)


@kernel("binary_cross_entropy")
def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    dt = self._dtype
    if dt not in _FLOATS:
        raise not_implemented("binary_cross_entropy", dt)
    if target._dtype is not dt:
        raise RuntimeError(f"Found dtype {target._dtype._cpp_name} but expected {dt._cpp_name}")
    x = _vals(self)
    y = _vals(target).reshape(x.shape) if target.numel() == self.numel() else _vals(target)
    if not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not ((y >= 0) & (y <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        xd = x.astype(np.float64)
        log1m = np.maximum(_to_dtype(np.log1p(-xd), dt), -100)
        logx = np.maximum(_to_dtype(np.log(xd), dt), -100)
    loss = _rounded(_rounded(_rounded(y - 1, dt) * log1m, dt) - _rounded(y * logx, dt), dt)
    if weight is not None:
        loss = _rounded(loss * as_compute(weight, dt), dt)
    out = wrap(np.ascontiguousarray(loss.astype(loss.dtype)), dt)
    return _apply_reduction(out, reduction)


def _inplace_dtype(dest, other):
    """An in-place op into ``dest``'s dtype: the promoted type must cast back."""
    res = promote_types(dest, other)
    if not can_cast(res, dest):
        raise RuntimeError(f"result type {res._cpp_name} can't be cast to the desired output "
                           f"type {dest._cpp_name}")
    return dest


@kernel("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None,
                                     reduction=MEAN):
    xdt, tdt = self._dtype, target._dtype
    if xdt not in _FLOATS:
        raise not_implemented("log_sigmoid_cpu", xdt)
    x = _vals(self)
    # log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), evaluated in double and rounded once to the
    # input's dtype (upstream's SLEEF kernels are within an ulp; numpy's float32 ones are not
    # always as close)
    xd = x.astype(np.float64)
    log_sig = _to_dtype(np.minimum(xd, 0) - np.log1p(np.exp(-np.abs(xd))), xdt)
    ls_dt = xdt
    if pos_weight is not None:
        pdt = promote_types(pos_weight._dtype, tdt)
        lw = _rounded(as_compute(pos_weight, pdt) - 1, pdt)
        lw = _rounded(_rounded(lw * as_compute(target, pdt), pdt) + 1, pdt)
        ls_dt = _inplace_dtype(xdt, pdt)
        log_sig = _rounded(log_sig * lw.astype(log_sig.dtype, copy=False), ls_dt)
    if tdt is _B["bool"]:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    odt = tdt
    one_minus = _rounded(1 - as_compute(target, odt), odt)
    _inplace_dtype(odt, xdt)
    loss = _rounded(one_minus * x.astype(one_minus.dtype, copy=False), odt)
    _inplace_dtype(odt, ls_dt)
    loss = _rounded(loss - np.asarray(log_sig).astype(loss.dtype, copy=False), odt)
    if weight is not None:
        _inplace_dtype(odt, weight._dtype)
        loss = _rounded(loss * as_compute(weight, odt), odt)
    out = wrap(np.ascontiguousarray(loss), odt)
    return _apply_reduction(out, reduction)


@kernel("l1_loss", composite=True)
def l1_loss(self, target, reduction=MEAN):
    loss = call("abs", call("sub.Tensor", self, target))
    if reduction == MEAN:
        return call("mean", loss)
    if reduction == SUM:
        return call("sum", loss)
    return loss


@kernel("kl_div", composite=True)
def kl_div(self, target, reduction=MEAN, *, log_target=False):
    if self._dtype.is_complex or target._dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not self._dtype.is_floating_point or not target._dtype.is_floating_point:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    # C++ evaluates a binary operator's right operand first
    if log_target:
        diff = call("sub.Tensor", target, self)
        out = call("mul.Tensor", call("exp", target), diff)
    else:
        prod = call("mul.Tensor", target, self)
        out = call("sub.Tensor", call("xlogy.Tensor", target, target), prod)
    if reduction == MEAN:
        return call("mean", out)
    if reduction == SUM:
        return call("sum", out)
    return out


# ---- margin and embedding losses (Loss.cpp, CompositeImplicitAutograd) ----------------------

def _scalar_minus(value, t):
    """ATen's ``Scalar - Tensor``: empty_like(t).fill_(value).sub_(t)."""
    out = call("empty_like", t, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None)
    return call("sub_.Tensor", call("fill_.Scalar", out, value), t)


def _reduce(loss, reduction):
    if reduction == MEAN:
        return call("mean", loss)
    if reduction == SUM:
        return call("sum", loss)
    return loss


@kernel("hinge_embedding_loss", composite=True)
def hinge_embedding_loss(self, target, margin=1.0, reduction=MEAN):
    zeros = call("zeros_like", self, dtype=None, layout=None, device=None, pin_memory=None,
                 memory_format=None)
    margin_clamp = call("clamp_min_", _scalar_minus(margin, self), 0)
    output_margin = call("where.self", call("ne.Scalar", target, 1), margin_clamp, zeros)
    output_self = call("where.self", call("ne.Scalar", target, -1), self, zeros)
    return _reduce(call("add.Tensor", output_margin, output_self), reduction)


@kernel("cosine_embedding_loss", composite=True)
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    td = len(target._size)
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and input1.dim() != 2:
        raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{int_list(input1._size)} and {int_list(input2._size)}.")
    if td == 0 and input1.dim() != 1:
        raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{int_list(input1._size)} and {int_list(input2._size)}.")
    eps = 1e-12
    prod_sum = call("sum.dim_IntList", call("mul.Tensor", input1, input2), [td])
    mag1 = call("add.Scalar", call("sum.dim_IntList", call("mul.Tensor", input1, input1), [td]),
                eps)
    mag2 = call("add.Scalar", call("sum.dim_IntList", call("mul.Tensor", input2, input2), [td]),
                eps)
    denom = call("sqrt_", call("mul.Tensor", mag1, mag2))
    cos = call("div.Tensor", prod_sum, denom)
    from ..core.layouts import contiguous_format

    zeros = call("zeros_like", cos, dtype=None, layout=None, device=None, pin_memory=None,
                 memory_format=contiguous_format)
    pos = _scalar_minus(1, cos)
    neg = call("clamp_min_", call("sub.Scalar", cos, margin), 0)
    out_pos = call("where.self", call("eq.Scalar", target, 1), pos, zeros)
    out_neg = call("where.self", call("eq.Scalar", target, -1), neg, zeros)
    return _reduce(call("add.Tensor", out_pos, out_neg), reduction)


@kernel("margin_ranking_loss", composite=True)
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    if input1._dtype.is_complex or input2._dtype.is_complex or target._dtype.is_complex:
        raise RuntimeError("margin_ranking_loss expects inputs to be non-complex")
    if not (input1._size == input2._size == target._size):
        raise RuntimeError("margin_ranking_loss: all input tensors should have same size but got "
                           f"sizes: input1: {int_list(input1._size)}, input2: "
                           f"{int_list(input2._size)}, target: {int_list(target._size)}")
    # (-target * (input1 - input2) + margin).clamp_min_(0): C++ evaluates the right operand first
    diff = call("sub.Tensor", input1, input2)
    out = call("clamp_min_", call("add.Scalar", call("mul.Tensor", call("neg", target), diff),
                                  margin), 0)
    return _reduce(out, reduction)


@kernel("poisson_nll_loss", composite=True)
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    import math

    if log_input:
        right = call("mul.Tensor", target, input)
        loss = call("sub.Tensor", call("exp", input), right)
    else:
        right = call("mul.Tensor", target, call("log", call("add.Scalar", input, eps)))
        loss = call("sub.Tensor", input, right)
    if full:
        last = call("mul.Scalar", call("log", call("mul.Scalar", target, 2 * math.pi)), 0.5)
        stirling = call("add.Tensor", call("sub.Tensor", call("mul.Tensor", target,
                                                                call("log", target)), target),
                        last)
        call("add_.Tensor", loss, call("masked_fill.Scalar", stirling,
                                       call("le.Scalar", target, 1), 0))
    return _reduce(loss, reduction)


@kernel("triplet_margin_loss", composite=True)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=MEAN):
    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd == nd):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same "
                           f"number of dimensions, but got: anchor {a}D, positive {pd}D, and negative "
                           f"{nd}D inputs")
    dist_pos = call("pairwise_distance", anchor, positive, p, eps, False)
    dist_neg = call("pairwise_distance", anchor, negative, p, eps, False)
    if swap:
        dist_swap = call("pairwise_distance", positive, negative, p, eps, False)
        dist_neg = call("min.other", dist_neg, dist_swap)
    out = call("clamp_min", call("sub.Tensor", call("add.Scalar", dist_pos, margin), dist_neg), 0)
    return _reduce(out, reduction)
