"""Connectionist temporal classification (LossCTC.cpp): _ctc_loss and _ctc_loss_backward (both
overloads), and the CompositeImplicitAutograd ctc_loss that reduces them.

The forward is Graves et al.'s alpha recursion over the extended target (blanks between and
around the labels) in log space, each step log(e^(a1-m) + e^(a2-m) + e^(a3-m)) + m + log p in
the input's dtype as upstream writes it; the loss is minus the log-sum of the last two alphas
(the last one for an empty target). All batch items and target positions step together; items
whose input has ended keep their last row. log_alpha holds -inf where upstream leaves memory
unwritten. The backward runs the beta recursion the same way, collects alpha + beta per class
and returns exp(lp) - exp(collected + nll - lp), scaled by the incoming gradient; zero past each
input's length (and everywhere for an infinite loss under zero_infinity).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .support.common import arr, wrap
from ..dispatch.call import call
from ..ops.kernel_registry import kernel

_FLOATS = (D.BY_NAME["float32"], D.BY_NAME["float64"])
_LONG = D.BY_NAME["int64"]
NONE, MEAN, SUM = 0, 1, 2


def _lengths(v):
    """A length list from an int[] argument or (the .Tensor overloads) an integer tensor."""
    if hasattr(v, "_dtype"):
        return [int(x) for x in arr(v).reshape(-1)]
    return [int(x) for x in v]


def _setup(log_probs, targets, input_lengths, target_lengths, blank):
    if log_probs._dtype not in _FLOATS:
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{log_probs._dtype._cpp_name}'")
    lp = arr(log_probs)  # (T, B, C)
    steps, batch, labels = lp.shape
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    il, tl = list(input_lengths), list(target_lengths)
    if len(il) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    tg = arr(targets).astype(np.int64)
    longest = max(tl) if tl else 0
    rows = np.zeros((batch, max(longest, 1)), np.int64)
    if tg.ndim == 1:  # concatenated targets
        pos = 0
        for b, n in enumerate(tl):
            rows[b, :n] = tg[pos:pos + n]
            pos += n
    else:
        if tg.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                               f"but got size {tg.shape[1]} for argument #2 'targets' (while "
                               "checking arguments for ctc_loss_allocate_outputs)")
        rows[:, :longest] = tg[:batch, :longest]
    for b in range(batch):
        if il[b] < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{il[b]} (while checking arguments for ctc_loss_allocate_outputs)")
        if il[b] > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got "
                               f"value {il[b]} (while checking arguments for ctc_loss_allocate_outputs)")
        if tl[b] < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                               f"{tl[b]} (while checking arguments for ctc_loss_allocate_outputs)")
    width = 2 * longest + 1
    # the extended target: blank, l1, blank, l2, ..., blank
    ext = np.full((batch, width), blank, np.int64)
    ext[:, 1::2] = rows[:, :longest]
    # a skip from s-2 to s is allowed where the labels differ (never onto a blank)
    skip = np.zeros((batch, width), bool)
    skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
    return lp, np.asarray(il), np.asarray(tl), ext, skip


def _logadd3(a1, a2, a3):
    neg = -np.inf
    m = np.maximum(np.maximum(a1, a2), a3)
    m = np.where(m == neg, 0, m).astype(a1.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.log(np.exp(a1 - m) + np.exp(a2 - m) + np.exp(a3 - m)) + m


def _alpha(lp, il, tl, ext, skip):
    steps, batch, _ = lp.shape
    width = ext.shape[1]
    neg = lp.dtype.type(-np.inf)
    bi = np.arange(batch)[:, None]
    emit = lp.transpose(1, 0, 2)[bi, :, ext].transpose(0, 2, 1) if steps else \
        np.zeros((batch, 0, width), lp.dtype)  # (B, T, S): log p of each state's label
    valid = np.arange(width)[None, :] <= 2 * tl[:, None]
    alpha = np.full((batch, steps, width), neg, lp.dtype)
    if steps:
        alpha[:, 0, 0] = emit[:, 0, 0]
        first = tl > 0
        alpha[first, 0, 1] = emit[first, 0, 1]
    for t in range(1, steps):
        prev = alpha[:, t - 1]
        a2 = np.concatenate([np.full((batch, 1), neg, lp.dtype), prev[:, :-1]], axis=1)
        a3 = np.where(skip, np.concatenate([np.full((batch, 2), neg, lp.dtype), prev[:, :-2]],
                                           axis=1), neg)
        row = _logadd3(prev, a2, a3) + emit[:, t]
        live = (t < il)[:, None] & valid
        alpha[:, t] = np.where(live, row, neg)
    return alpha, emit, valid


def _nll(alpha, il, tl):
    batch = alpha.shape[0]
    neg = alpha.dtype.type(-np.inf)
    out = np.empty(batch, alpha.dtype)
    for b in range(batch):
        last = alpha[b, il[b] - 1] if il[b] > 0 else np.full(alpha.shape[2], neg)
        if tl[b] == 0:
            out[b] = -last[0]
            continue
        l1, l2 = last[2 * tl[b]], last[2 * tl[b] - 1]
        m = max(l1, l2)
        m = alpha.dtype.type(0) if m == neg else m
        out[b] = -(np.log(np.exp(l1 - m) + np.exp(l2 - m)) + m)
    return out


def _forward(log_probs, targets, input_lengths, target_lengths, blank):
    lp, il, tl, ext, skip = _setup(log_probs, targets, input_lengths, target_lengths, blank)
    alpha, _, _ = _alpha(lp, il, tl, ext, skip)
    dt = log_probs._dtype
    return wrap(_nll(alpha, il, tl), dt), wrap(np.ascontiguousarray(alpha), dt)


def _backward(grad, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank,
              zero_infinity):
    lp, il, tl, ext, skip = _setup(log_probs, targets, input_lengths, target_lengths, blank)
    steps, batch, labels = lp.shape
    width = ext.shape[1]
    neg = lp.dtype.type(-np.inf)
    alpha, emit, valid = _alpha(lp, il, tl, ext, skip)
    # skip into s from s+2 (beta direction): allowed where ext[s+2] != ext[s]
    bskip = np.zeros((batch, width), bool)
    bskip[:, :-2] = skip[:, 2:]
    beta = np.full((batch, steps, width), neg, lp.dtype)
    last = np.arange(width)[None, :]
    for t in range(steps - 1, -1, -1):
        start = (il - 1 == t)[:, None]
        init = np.where((last == 2 * tl[:, None]) | ((last == 2 * tl[:, None] - 1) &
                                                     (tl[:, None] > 0)), emit[:, t], neg)
        if t + 1 < steps:
            nxt = beta[:, t + 1]
            b2 = np.concatenate([nxt[:, 1:], np.full((batch, 1), neg, lp.dtype)], axis=1)
            b3 = np.where(bskip, np.concatenate([nxt[:, 2:], np.full((batch, 2), neg, lp.dtype)],
                                                axis=1), neg)
            rec = _logadd3(nxt, np.where(last < 2 * tl[:, None], b2, neg), b3) + emit[:, t]
        else:
            rec = np.full((batch, width), neg, lp.dtype)
        inside = (t < il - 1)[:, None] & valid
        beta[:, t] = np.where(start, init, np.where(inside, rec, neg))
    ab = alpha + beta  # (B, T, S)
    # log-sum over the states of each label: collected[b, t, c]
    cls = np.broadcast_to(ext[:, None, :], ab.shape)
    bi = np.broadcast_to(np.arange(batch)[:, None, None], ab.shape)
    ti = np.broadcast_to(np.arange(steps)[None, :, None], ab.shape)
    top = np.full((batch, steps, labels), neg, lp.dtype)
    np.maximum.at(top, (bi, ti, cls), ab)
    safe = np.where(top == neg, 0, top).astype(lp.dtype)
    acc = np.zeros((batch, steps, labels), lp.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.add.at(acc, (bi, ti, cls), np.exp(ab - safe[bi, ti, cls]))
        collected = np.where(top == neg, neg, np.log(acc) + safe)
    lpb = lp.transpose(1, 0, 2)
    nll_ = arr(nll).astype(lp.dtype, copy=False)
    g = arr(grad).reshape(-1).astype(lp.dtype, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        res = (np.exp(lpb) - np.exp(collected + nll_[:, None, None] - lpb)) * g[:, None, None]
    res = np.where((np.arange(steps)[None, :] < il[:, None])[:, :, None], res, 0)
    if zero_infinity:
        res = np.where(np.isposinf(nll_)[:, None, None], 0, res)
    return wrap(np.ascontiguousarray(res.transpose(1, 0, 2)), log_probs._dtype)


@kernel("_ctc_loss")
def ctc_loss_int_list(log_probs, targets, input_lengths, target_lengths, blank=0,
                      zero_infinity=False):
    return _forward(log_probs, targets, input_lengths, target_lengths, blank)


@kernel("_ctc_loss.Tensor")
def ctc_loss_tensors(log_probs, targets, input_lengths, target_lengths, blank=0,
                     zero_infinity=False):
    return _forward(log_probs, targets, _lengths(input_lengths),
                    _lengths(target_lengths), blank)


@kernel("_ctc_loss_backward")
def ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
                      log_alpha, blank, zero_infinity=False):
    return _backward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
                     log_alpha, blank, zero_infinity)


@kernel("_ctc_loss_backward.Tensor")
def ctc_loss_backward_tensors(grad, log_probs, targets, input_lengths, target_lengths,
                              neg_log_likelihood, log_alpha, blank, zero_infinity=False):
    return _backward(grad, log_probs, targets, _lengths(input_lengths),
                     _lengths(target_lengths), neg_log_likelihood, log_alpha,
                     blank, zero_infinity)


@kernel("ctc_loss.IntList", composite=True)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=MEAN,
             zero_infinity=False):
    batched = log_probs.dim() == 3
    lp = log_probs if batched else call("unsqueeze", log_probs, 1)
    res = call("_ctc_loss", lp, call("to.dtype", targets, _LONG), list(input_lengths),
               list(target_lengths), blank, zero_infinity)[0]
    if zero_infinity:
        res = call("where.self", call("eq.Scalar", res, float("inf")),
                   call("zeros", [], dtype=res._dtype, device=res.device), res)
    if reduction == MEAN:
        lengths = call("clamp_min", wrap(np.asarray(target_lengths, D.numpy_dtype(res._dtype)),
                                         res._dtype), 1)
        return call("mean", call("div.Tensor", res, lengths))
    if reduction == SUM:
        return call("sum", res)
    return res if batched else call("squeeze.dim", res, 0)


@kernel("ctc_loss.Tensor", composite=True)
def ctc_loss_tensor(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=MEAN,
                    zero_infinity=False):
    for t, what in ((input_lengths, "input_lengths"), (target_lengths, "target_lengths")):
        if t._dtype.is_floating_point or t._dtype.is_complex or t._dtype is D.BY_NAME["bool"]:
            raise RuntimeError(f"{what} must be integral")
    return ctc_loss(log_probs, targets, _lengths(input_lengths), _lengths(target_lengths), blank,
                    reduction, zero_infinity)
