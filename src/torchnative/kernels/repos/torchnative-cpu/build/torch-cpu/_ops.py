"""Fused CPU operators: each a ``torch.library`` custom operator whose kernel is numpy, so a
fused layer costs one operator call where the unfused layer dispatched many.

The rotary embedding (one float32 or float64 dtype) and float32 SiLU take the unfused layers' own
float steps: each step is one correctly rounded operation (SiLU's exp: a float64 exp rounded
once), so their bits are the unfused layers' (SiLU's wherever the unfused exp rounds correctly),
and they run same-dtype numpy loops. The other kernels, which sum (RMSNorm, attention, every
backward), and mixed or 16-bit dtypes compute in float64 and round once, to the dtype the unfused
layer returns. The unfused layers round after each of their operations (and ``LlamaRMSNorm``
narrows even float64 input to float32), so a result rounded once is never farther from the
exact value than theirs by more than half an ulp: it agrees with upstream within upstream's own
error, including where the formula cancels. The one rounding kept is RMSNorm's explicit cast of
the normalized states to a 16-bit input dtype before the weight multiplies them: that cast is
part of the layer."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch._library.custom_ops import OPDEFS

# The namespace is the variant's metadata id (the name this package is imported under), so
# two builds of the kernel never collide.
NAMESPACE = __name__.split(".")[0]
_NARROW = (torch.float16, torch.bfloat16)
_WIDE = (torch.float32, torch.float64)
_NUMPY = {torch.float32: np.float32, torch.float64: np.float64}


def _np(t: torch.Tensor, dtype: torch.dtype | None = None) -> np.ndarray:
    """A tensor's values in float64 (``dtype``: the tensor's, when the caller has read it).
    A float32/float64 tensor is read with ``numpy(force=True)``, which takes one that requires
    grad without making an alias first (a decode step reads its weights this way a hundred
    times); a 16-bit one is widened by ``to``, through ``.data`` when it requires grad, so no
    graph is recorded."""
    if (t.dtype if dtype is None else dtype) in _WIDE:
        return t.numpy(force=True).astype(np.float64, copy=False)
    if t.requires_grad:
        t = t.data
    return t.to(torch.float64).numpy()


def _values(t: torch.Tensor, dtype: torch.dtype) -> np.ndarray:
    """A tensor's values for float64 arithmetic (``dtype``: the tensor's): a float32/float64
    tensor's own array, which the forward kernels' first operation on it widens exactly
    (``dtype=np.float64``) without a separate cast; a 16-bit tensor widened by ``_np``."""
    return t.numpy(force=True) if dtype in _WIDE else _np(t, dtype)


_F64 = np.float64


def _promoted(a: torch.dtype, b: torch.dtype) -> torch.dtype:
    return a if a == b else torch.promote_types(a, b)


def _tensor(a: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """float64 values rounded once to ``dtype``."""
    if dtype == torch.float32:
        return torch.from_numpy(np.ascontiguousarray(a, np.float32))
    t = torch.from_numpy(np.ascontiguousarray(a, np.float64))
    return t if dtype == torch.float64 else t.to(dtype)


def _rounded(a: np.ndarray, dtype: torch.dtype) -> np.ndarray:
    """``a`` rounded to a 16-bit ``dtype`` and widened back to float64."""
    return _tensor(a, dtype).to(torch.float64).numpy()


def _computed(ufunc, x: np.ndarray, y: np.ndarray, shape: tuple, dtype: torch.dtype) -> torch.Tensor:
    """``ufunc(x, y)`` (float64, of ``shape``) rounded once to ``dtype``: a float32/float64
    result is written by the ufunc itself, without a float64 temporary and a cast."""
    if dtype in _WIDE:
        out = np.empty(shape, _NUMPY[dtype])
        ufunc(x, y, out=out, casting="same_kind")
        return torch.from_numpy(out)
    return _tensor(ufunc(x, y), dtype)


def _custom_op(name, schema_fn, **kw):
    qualname = f"{NAMESPACE}::{name}"
    if qualname in OPDEFS:               # this build was already loaded from another path
        return OPDEFS[qualname]
    return torch.library.custom_op(qualname, mutates_args=(), **kw)(schema_fn)


def _unbroadcast(a: np.ndarray, shape) -> np.ndarray:
    while a.ndim > len(shape):
        a = a.sum(0)
    for i, n in enumerate(shape):
        if n == 1 and a.shape[i] != 1:
            a = a.sum(i, keepdims=True)
    return a


# --- RMSNorm ---------------------------------------------------------------------------------

def _normalized(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray | float]:
    """(x / rms(x), 1 / rms(x)) over the last dimension, in float64. A zero row with eps 0
    normalizes to NaN (1 / 0 is inf), an infinite one too (1 / inf is 0), as upstream's
    layer's, and as there without a warning."""
    # np.mean's own steps (a sum, then a division by the count) without its Python wrapper
    if x.size == x.shape[-1] and x.size:
        # one row (a decode step): widened once, so each pass is a same-dtype loop, and its
        # scale from Python floats: the same IEEE operations as the rows' below
        h = x.astype(_F64)
        m = math.sqrt(np.add.reduce(h * h, axis=-1).item() / x.shape[-1] + eps)
        if 0.0 < m < math.inf:
            r = 1.0 / m
            h *= r
            return h, r
        r = 1.0 / m if m else math.inf
    else:
        r = np.add.reduce(np.multiply(x, x, dtype=_F64), axis=-1, keepdims=True)
    # (an empty last dimension: NaN scales of no element, without a warning, as upstream)
    with np.errstate(divide="ignore", invalid="ignore"):
        if not isinstance(r, float):   # the per-row steps in place (the same float64 steps)
            r /= x.shape[-1]
            r += eps
            np.sqrt(r, out=r)
            np.divide(1.0, r, out=r)
        return np.multiply(x, r, dtype=_F64), r


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    xd, wd = x.dtype, weight.dtype
    h, _ = _normalized(_values(x, xd), eps)
    if xd in _NARROW:
        h = _rounded(h, xd)
    w, dtype = _values(weight, wd), _promoted(wd, xd)
    if h.size == h.shape[-1] and w.shape == h.shape[-1:] and dtype in _WIDE:
        h *= w   # one row, h its own: scaled in place, then rounded once by the cast
        return torch.from_numpy(h.astype(_NUMPY[dtype], copy=False))
    return _computed(np.multiply, w, h, h.shape, dtype)


def _rms_norm_backward(grad: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                       eps: float) -> list[torch.Tensor]:
    g, a, w = _np(grad), _np(x), _np(weight)
    h, r = _normalized(a, eps)
    if x.dtype in _NARROW:
        h = _rounded(h, x.dtype)
    gh = g * w
    dx = r * gh - a * (r ** 3) * np.mean(gh * a, axis=-1, keepdims=True)
    return [_tensor(dx, x.dtype), _tensor(_unbroadcast(g * h, w.shape), weight.dtype)]


rms_norm = _custom_op("rms_norm", _rms_norm)
rms_norm_backward = _custom_op("rms_norm_backward", _rms_norm_backward)


@rms_norm.register_fake
def _(x, weight, eps):
    return x.new_empty(x.shape, dtype=torch.promote_types(weight.dtype, x.dtype))


@rms_norm_backward.register_fake
def _(grad, x, weight, eps):
    return [torch.empty_like(x), torch.empty_like(weight)]


# --- rotary position embedding ---------------------------------------------------------------

def _rotate_half(a: np.ndarray) -> np.ndarray:
    h = a.shape[-1] // 2
    return np.concatenate((-a[..., h:], a[..., :h]), axis=-1)


def _rotate_half_t(a: np.ndarray) -> np.ndarray:
    h = a.shape[-1] // 2
    return np.concatenate((a[..., h:], -a[..., :h]), axis=-1)


def _rotary(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
            unsqueeze_dim: int) -> list[torch.Tensor]:
    cd = cos.dtype
    if cd in _WIDE and q.dtype == cd and k.dtype == cd and sin.dtype == cd:
        return _rotary_steps(q, k, cos, sin, unsqueeze_dim)
    c = _unsqueezed(_values(cos, cd), unsqueeze_dim)
    s = _unsqueezed(_values(sin, sin.dtype), unsqueeze_dim)
    h = c.shape[-1] // 2
    # rotate_half(a) * s, as halves: (a_hi * -s_lo, a_lo * s_hi); the sign goes on the sine
    # once for q and k (x * -y is exactly -(x * y))
    s = np.multiply(s.reshape(s.shape[:-1] + (2, h)), _HALF_SIGNS, dtype=_F64)
    qd, kd = q.dtype, k.dtype
    return [_rotated(_values(q, qd), c, s, _promoted(qd, cd)),
            _rotated(_values(k, kd), c, s, _promoted(kd, cd))]


_HALF_SIGNS = np.array([[-1.0], [1.0]])


def _rotary_steps(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                  unsqueeze_dim: int) -> list[torch.Tensor]:
    """One float32 or float64 dtype throughout: the unfused layer's own operations in that
    dtype, ``q * cos + cat(-q2, q1) * sin``. Each is one correctly rounded IEEE operation and no
    sum is reordered, so the bits are the unfused layer's (NaN signs included), and a decode
    step runs same-dtype numpy loops instead of widening casts."""
    c = _unsqueezed(cos.numpy(force=True), unsqueeze_dim)
    s = _unsqueezed(sin.numpy(force=True), unsqueeze_dim)
    out = []
    for t in (q, k):
        a = t.numpy(force=True)
        d = a.shape[-1]
        h = d // 2
        turned = np.empty(a.shape, a.dtype)           # rotate_half(a): cat(-a[h:], a[:h])
        np.negative(a[..., h:], out=turned[..., :d - h])
        turned[..., d - h:] = a[..., :h]
        r = np.multiply(a, c, order="C")
        turned = np.multiply(turned, s)
        same = r.shape == turned.shape
        out.append(torch.from_numpy(np.add(r, turned, out=r if same else None, order="C")))
    return out


def _unsqueezed(a: np.ndarray, dim: int) -> np.ndarray:
    """``np.expand_dims(a, dim)`` as one reshape (expand_dims' Python costs more than the
    rotation it feeds on a decode step)."""
    if dim < 0:
        dim += a.ndim + 1
    if not 0 <= dim <= a.ndim:
        return np.expand_dims(a, dim)  # out of range: numpy's own error
    return a.reshape(a.shape[:dim] + (1,) + a.shape[dim:])


def _rotated(a: np.ndarray, c: np.ndarray, s_halves: np.ndarray,
             dtype: torch.dtype) -> torch.Tensor:
    """``a * c + rotate_half(a) * s`` rounded once to ``dtype`` (``s_halves``: the sine as
    (..., 2, d/2) with its first half negated): the halves of ``a`` swapped by a view."""
    d = a.shape[-1]
    turned = np.multiply(a.reshape(a.shape[:-1] + (2, d // 2))[..., ::-1, :], s_halves, dtype=_F64)
    turned = turned.reshape(turned.shape[:-2] + (d,))
    return _computed(np.add, np.multiply(a, c, dtype=_F64), turned, turned.shape, dtype)


def _rotary_backward(gq: torch.Tensor, gk: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                     cos: torch.Tensor, sin: torch.Tensor, unsqueeze_dim: int) -> list[torch.Tensor]:
    c, s = _unsqueezed(_np(cos), unsqueeze_dim), _unsqueezed(_np(sin), unsqueeze_dim)
    a_q, a_k, g_q, g_k = _np(q), _np(k), _np(gq), _np(gk)
    dq = g_q * c + _rotate_half_t(g_q * s)
    dk = g_k * c + _rotate_half_t(g_k * s)
    dc = _unbroadcast(g_q * a_q, c.shape) + _unbroadcast(g_k * a_k, c.shape)
    ds = _unbroadcast(g_q * _rotate_half(a_q), s.shape) + _unbroadcast(g_k * _rotate_half(a_k), s.shape)
    return [_tensor(dq, q.dtype), _tensor(dk, k.dtype),
            _tensor(np.squeeze(dc, unsqueeze_dim), cos.dtype),
            _tensor(np.squeeze(ds, unsqueeze_dim), sin.dtype)]


rotary = _custom_op("rotary", _rotary)
rotary_backward = _custom_op("rotary_backward", _rotary_backward)


@rotary.register_fake
def _(q, k, cos, sin, unsqueeze_dim):
    return [q.new_empty(q.shape, dtype=torch.promote_types(q.dtype, cos.dtype)),
            k.new_empty(k.shape, dtype=torch.promote_types(k.dtype, cos.dtype))]


@rotary_backward.register_fake
def _(gq, gk, q, k, cos, sin, unsqueeze_dim):
    return [torch.empty_like(q), torch.empty_like(k), torch.empty_like(cos), torch.empty_like(sin)]


# --- SiLU and SiLU-and-multiply --------------------------------------------------------------

def _silu_np(a: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):      # exp(-a) overflows to inf for a < -709: silu -> -0
        return a / (1 + np.exp(-a))


# float32 elements whose float64 temporaries are made at once (a prefill's activation takes
# several such blocks: fresh temporaries of its whole size page-fault on every call)
_BLOCK = 16384


def _silu32(a: np.ndarray) -> np.ndarray:
    """float32 silu as the unfused layer's steps, ``x / (1 + exp(-x))`` in float32, with the
    exponential rounded once from float64: the bits are the unfused layer's wherever its
    vectorized exp rounds correctly. A C-contiguous result, a block at a time."""
    out = np.empty(a.shape, np.float32)
    # exp(-x) past float32's range is inf (silu -> -0; -inf / inf -> NaN): values, no warning
    with np.errstate(over="ignore", invalid="ignore"):
        if a.size <= _BLOCK:
            _silu32_into(a, out)
            return out
        flat, dst = a.reshape(-1), out.reshape(-1)
        for i in range(0, flat.size, _BLOCK):
            _silu32_into(flat[i:i + _BLOCK], dst[i:i + _BLOCK])
    return out


def _silu32_into(x: np.ndarray, d: np.ndarray) -> None:
    w = np.negative(x, dtype=_F64)
    np.copyto(d, np.exp(w, out=w), casting="same_kind")
    d += 1
    np.divide(x, d, out=d)


def _silu(x: torch.Tensor) -> torch.Tensor:
    xd = x.dtype
    a = _values(x, xd)
    if xd == torch.float32:
        return torch.from_numpy(_silu32(a))
    den = np.negative(a, dtype=_F64)
    with np.errstate(over="ignore"):      # exp(-a) overflows to inf for a < -709: silu -> -0
        np.exp(den, out=den)
    den += 1
    return _computed(np.divide, a, den, a.shape, xd)


def _silu_grad_np(a: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        sig = 1 / (1 + np.exp(-a))
    return sig * (1 + a * (1 - sig))


def _silu_backward(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return _tensor(_np(grad) * _silu_grad_np(_np(x)), x.dtype)


def _silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    xd = x.dtype
    a = _values(x, xd)
    d = a.shape[-1] // 2
    if xd == torch.float32:                # the unfused silu(x1) * x2, in float32
        return torch.from_numpy(np.multiply(_silu32(a[..., :d]), a[..., d:]))
    return _computed(np.multiply, _silu_np(a[..., :d].astype(_F64, copy=False)), a[..., d:], a.shape[:-1] + (d,), xd)


def _silu_and_mul_backward(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    a, g = _np(x), _np(grad)
    d = a.shape[-1] // 2
    a1, a2 = a[..., :d], a[..., d:]
    return _tensor(np.concatenate((g * a2 * _silu_grad_np(a1), g * _silu_np(a1)), -1), x.dtype)


silu = _custom_op("silu", _silu)
silu_backward = _custom_op("silu_backward", _silu_backward)
silu_and_mul = _custom_op("silu_and_mul", _silu_and_mul)
silu_and_mul_backward = _custom_op("silu_and_mul_backward", _silu_and_mul_backward)


@silu.register_fake
def _(x):
    return torch.empty_like(x)


@silu_backward.register_fake
def _(grad, x):
    return torch.empty_like(x)


@silu_and_mul.register_fake
def _(x):
    return x.new_empty((*x.shape[:-1], x.shape[-1] // 2))


@silu_and_mul_backward.register_fake
def _(grad, x):
    return torch.empty_like(x)


# --- attention (scaled dot product, grouped heads, causal; a decode step is one call) -------

def _groups(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    b, h, lq, d = q.shape
    return q.reshape(b, k.shape[1], h // k.shape[1], lq, d)


def _probs(q, k, scaling, causal, mask):
    """Softmax probabilities, grouped as (batch, kv heads, rep, queries, keys); ``mask`` is
    boolean, broadcastable to (batch, heads, queries, keys), True where a query may attend.
    A group's queries of all its heads are one matrix, so a decode step's scores are one
    product per kv head."""
    qg = _groups(q, k)                                       # b, hkv, rep, lq, d
    b, hkv, rep, lq, d = qg.shape
    scores = np.matmul(qg.reshape(b, hkv, rep * lq, d), k.swapaxes(-1, -2))
    scores *= scaling
    lk = scores.shape[-1]
    scores = scores.reshape(b, hkv, rep, lq, lk)
    allowed = None  # every key (a decode step without a mask): nothing to hide
    if causal and lq > 1:
        # aligned to the last key, as with a cache
        allowed = np.tril(np.ones((lq, lk), bool), lk - lq)
    if mask is not None:
        mb, heads = mask.shape[:2]
        grouped = mask[:, None] if heads == 1 else mask.reshape(mb, hkv, rep, *mask.shape[2:])
        allowed = grouped if allowed is None else allowed & grouped
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    # the reductions are ndarray.max/sum's own ufunc reductions without their Python wrappers;
    # each step after the product writes into the scores array. A query that may see no key
    # (a left-padded position) keeps its -inf scores unshifted and its zero sum undivided: all-
    # zero probabilities, as flash attention gives it, rather than NaN reaching the real
    # positions via v (the same holds for a row whose maximum is +inf or NaN: left as it is)
    top = np.maximum.reduce(scores, axis=-1, keepdims=True)
    np.subtract(scores, top, out=scores, where=np.isfinite(top))
    p = np.exp(scores, out=scores)
    total = np.add.reduce(p, axis=-1, keepdims=True)
    np.divide(p, total, out=p, where=total > 0)
    return qg, p


def _mask(mask: torch.Tensor | None) -> np.ndarray | None:
    return None if mask is None else mask.numpy(force=True).astype(bool, copy=False)


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
               scaling: float, causal: bool) -> torch.Tensor:
    a_q, a_v = _np(q), _np(v)
    with np.errstate(invalid="ignore"):   # NaN/inf scores are values, as upstream's (no warning)
        _, p = _probs(a_q, _np(k), scaling, causal, _mask(mask))
        b, h, lq, d = a_q.shape
        hkv = a_v.shape[1]
        out = np.matmul(p.reshape(b, hkv, h // hkv * lq, p.shape[-1]), a_v)
    return _tensor(out.reshape(b, h, lq, d).transpose(0, 2, 1, 3), q.dtype)


def _attention_backward(grad: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                        mask: torch.Tensor | None, scaling: float,
                        causal: bool) -> list[torch.Tensor]:
    a_q, a_k, a_v = _np(q), _np(k), _np(v)
    with np.errstate(all="ignore"):   # NaN/inf/past-the-range gradients are values (no warning)
        qg, p = _probs(a_q, a_k, scaling, causal, _mask(mask))
        b, h, lq, d = q.shape
        g = _groups(_np(grad).transpose(0, 2, 1, 3), a_k)        # b, hkv, rep, lq, d
        dp = np.matmul(g, np.expand_dims(a_v.swapaxes(-1, -2), 2))
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scaling
        dq = np.matmul(ds, np.expand_dims(a_k, 2)).reshape(b, h, lq, d)
        dk = np.matmul(ds.swapaxes(-1, -2), qg).sum(2)
        dv = np.matmul(p.swapaxes(-1, -2), g).sum(2)
        return [_tensor(dq, q.dtype), _tensor(dk, k.dtype), _tensor(dv, v.dtype)]


attention = _custom_op("attention", _attention)
attention_backward = _custom_op("attention_backward", _attention_backward)


@attention.register_fake
def _(q, k, v, mask, scaling, causal):
    return q.new_empty((q.shape[0], q.shape[2], q.shape[1], q.shape[3]))


@attention_backward.register_fake
def _(grad, q, k, v, mask, scaling, causal):
    return [torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)]
