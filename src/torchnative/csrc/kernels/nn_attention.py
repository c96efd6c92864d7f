"""scaled_dot_product_attention (transformers/attention.cpp, sdp_utils_cpp.cpp) on CPU.

The CompositeImplicitAutograd entry validates, picks a backend as upstream's CPU selector does
(flash when its constraints hold, else the math composite), converts a boolean mask into an
additive one, and calls ``_scaled_dot_product_flash_attention_for_cpu`` or
``_scaled_dot_product_attention_math`` through the door.

The flash kernel computes ``softmax(q @ k.T * scale + mask) @ v`` in opmath (float for
float16/bfloat16, whose probabilities are rounded to the input dtype before the product with v,
as upstream's kernel does), normalizes by the reciprocal of the row sum, gives fully masked rows
zeros (and a logsumexp of 0), and handles grouped-query heads without repeating k and v:
query head h reads key/value head h // (H / H_kv).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .support import blas_threads
from ..core import dtypes as D
from ..core.construct import contiguous_strides_of, empty, from_result
from ..core.storage import new_storage
from ..core.tensor import make
from ..core.device import CPU
from .support.common import arr, as_compute, wrap
from ..dispatch.call import call
from .support.nn_util import subclass_like, typemeta
from .pointwise_math import exact, fma
from ..ops.kernel_registry import kernel
from .copy import _empty_like
from .views import transpose as _transpose
from ..core.refuse import TorchnativeNotImplementedError as _REFUSED
from ..platform import cpu_capability
from ..platform.torch_warn import torch_warn

_B = D.BY_NAME
_F32, _BOOL = _B["float32"], _B["bool"]
_FLASH_DTYPES = frozenset(_B[n] for n in ("float32", "float64", "bfloat16", "float16"))
_REDUCED = frozenset(_B[n] for n in ("float16", "bfloat16"))


def _sdp_flag(name: str) -> bool:
    """torch.backends' SDP switches. torchnative's _C does not implement them yet, and a switch
    that cannot be set holds upstream's initial value (every backend enabled; no reduced-precision
    math) -- so that is the state when the getter is missing."""
    getter = _SDP_GETTERS.get(name)
    if getter is None:
        import torch

        getter = _SDP_GETTERS[name] = getattr(torch._C, name, None)
    try:
        return bool(getter())
    except _REFUSED:
        return name != "_get_math_sdp_allow_fp16_bf16_reduction"


_SDP_GETTERS: dict = {}  # name -> torch._C's getter (looked up once: every attention call asks)


def _validate(query, key, value, attn_mask):
    if not (query._dtype is key._dtype is value._dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {typemeta(query._dtype)} key.dtype: "
                           f"{typemeta(key._dtype)} and value.dtype: {typemeta(value._dtype)} "
                           "instead.")
    # len(_size) is dim(): the C++ checks never ask a subclass (and a decode step asks often)
    if len(query._size) < 2 or len(key._size) < 2 or len(value._size) < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but "
                           f"got query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: "
                           f"{value.dim()} instead.")
    if attn_mask is not None and attn_mask._dtype not in (_BOOL, _F32, query._dtype):
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, "
                           f"but got attn_mask.dtype: {typemeta(attn_mask._dtype)} and  "
                           f"query.dtype: {typemeta(query._dtype)} instead.")


def _flash_ok(query, key, value, attn_mask, dropout_p, enable_gqa) -> bool:
    """use_flash_attention_cpp's constraints, in its order."""
    if not _sdp_flag("_get_flash_sdp_enabled") or dropout_p > 0.0:
        return False
    if not (len(query._size) == len(key._size) == len(value._size) == 4):
        return False
    (bq, hq, lq, eq), (bk, hk, sk, ek), (bv, hv, _, ev) = query._size, key._size, value._size
    if not (bq == bk == bv):
        return False
    if enable_gqa:
        if hk != hv or hq % hk != 0:
            return False
    elif not (hq == hk == hv):
        return False
    if attn_mask is not None:
        if attn_mask.requires_grad:
            return False
        ms = attn_mask._size
        if ms[-2] not in (lq, 1) or ms[-1] not in (sk, 1):
            return False
        if len(ms) == 4:
            if ms[0] not in (1, bq) or ms[1] not in (1, hq):
                return False
        elif len(ms) != 2:
            return False
    if not (eq == ek == ev):
        return False
    if lq == 0 or sk == 0:
        return False
    if not (query._stride[-1] == 1 and key._stride[-1] == 1 and value._stride[-1] == 1):
        return False
    return query._dtype in _FLASH_DTYPES


def _convert_bool_mask(attn_mask, dtype):
    if attn_mask is None or attn_mask._dtype is not _BOOL:
        return attn_mask
    neg_inf = call("scalar_tensor", -math.inf, dtype=dtype, layout=None, device=attn_mask.device,
                   pin_memory=None)
    return call("where.ScalarSelf", attn_mask, 0.0, neg_inf)


@kernel("scaled_dot_product_attention", composite=True)
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    _validate(query, key, value, attn_mask)
    out_shape = list(query._size[:-1]) + [value._size[-1]]  # every one at least 2-d (_validate)
    if 0 in out_shape or key._size[-2] == 0:
        # nothing to attend: zeros, still connected to every input for autograd
        out = call("zeros", out_shape, dtype=query._dtype, layout=None, device=query.device,
                   pin_memory=None)
        sv, sk, sq = call("sum", value), call("sum", key), call("sum", query)
        return call("add.Tensor", out,
                    call("mul.Scalar", call("add.Tensor", call("add.Tensor", sq, sk), sv), 0))
    flash = _flash_ok(query, key, value, attn_mask, dropout_p, enable_gqa)
    if not flash and not _sdp_flag("_get_math_sdp_enabled"):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found.")
    mask = _convert_bool_mask(attn_mask, query._dtype)
    if flash:
        return call("_scaled_dot_product_flash_attention_for_cpu", query, key, value, dropout_p,
                    is_causal, attn_mask=mask, scale=scale)[0]
    return call("_scaled_dot_product_attention_math", query, key, value, mask, dropout_p,
                is_causal, None, scale=scale, enable_gqa=enable_gqa)[0]


@kernel("_fused_sdp_choice")
def _fused_sdp_choice(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *,
                      scale=None, enable_gqa=False):
    if _flash_ok(query, key, value, attn_mask, dropout_p, enable_gqa):
        return 1  # SDPBackend::flash_attention
    return 0 if _sdp_flag("_get_math_sdp_enabled") else -1


# ---- the math composite -----------------------------------------------------------------------

def _repeat_interleave_heads(t, repeats):
    """Tensor::repeat_interleave(repeats, -3) for an int repeat count, as upstream writes it."""
    dim = t.dim() - 3
    u = call("unsqueeze", t, dim + 1)
    shape = list(u._size)
    shape[dim + 1] = repeats
    from ..core.layouts import contiguous_format

    c = call("clone", call("expand", u, shape), memory_format=contiguous_format)
    return call("flatten.using_ints", c, dim, dim + 1)


def _gqa(query, key, value, enable_gqa):
    if not enable_gqa:
        return key, value
    hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
    equal = hq == hk == hv
    if not (equal or (hq % hk == 0 and hq % hv == 0)):
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    if equal:
        return key, value
    return _repeat_interleave_heads(key, hq // hk), _repeat_interleave_heads(value, hq // hv)


@kernel("_scaled_dot_product_attention_math", composite=True)
def _scaled_dot_product_attention_math(query, key, value, attn_mask=None, dropout_p=0.0,
                                       is_causal=False, dropout_mask=None, *, scale=None,
                                       enable_gqa=False):
    origin = query._dtype
    if origin in _REDUCED and not _sdp_flag("_get_math_sdp_allow_fp16_bf16_reduction"):
        # keep query, key and value in float for accuracy
        query = call("_to_copy", query, dtype=_F32)
        key = call("_to_copy", key, dtype=_F32) if key._dtype in _REDUCED else key
        value = call("_to_copy", value, dtype=_F32) if value._dtype in _REDUCED else value
    negative = scale is not None and scale < 0.0
    base = abs(scale) if negative else scale
    factor = math.sqrt(base if base is not None else 1.0 / math.sqrt(query.size(-1)))
    q = call("mul.Scalar", query, (0.0 - factor) if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        L, S = q.size(-2), key.size(-2)
        ones = call("ones", [L, S], dtype=_BOOL, layout=None, device=q.device, pin_memory=None)
        attn_mask = _convert_bool_mask(call("tril", ones), q._dtype)
    key, value = _gqa(q, key, value, enable_gqa)
    attn = call("matmul", q, call("mul.Scalar", call("transpose.int", key, -2, -1), factor))
    if attn_mask is not None:
        if subclass_like(attn, attn_mask):
            attn = call("add.Tensor", attn, attn_mask)
        else:
            call("add_.Tensor", attn, attn_mask)
    attn = call("_safe_softmax", attn, -1)
    if dropout_p > 0.0:
        if dropout_mask is not None:
            torch_warn("Dropout mask should only be used for testing purposes.")
            attn = call("masked_fill.Scalar", attn, call("logical_not", dropout_mask), 0.0)
            scaled_v = call("mul.Scalar", value, 1.0 / (1 - dropout_p))
            return call("matmul", attn, scaled_v), attn
        attn = call("dropout", attn, dropout_p, True)
    if origin is not attn._dtype:
        # C++ evaluates make_tuple's arguments last to first
        weights = call("_to_copy", attn, dtype=origin)
        return call("_to_copy", call("matmul", attn, value), dtype=origin), weights
    return call("matmul", attn, value), attn


# ---- the flash kernel -------------------------------------------------------------------------

@kernel("_scaled_dot_product_flash_attention_for_cpu")
def _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p=0.0,
                                                is_causal=False, *, attn_mask=None, scale=None):
    dt = query._dtype
    name = "scaled_dot_product_attention_flash_attention"
    if not dt.is_floating_point:
        raise RuntimeError(f"{name}: Expected data type in FP32, FP64, BF16, FP16, but got "
                           f"{dt._cpp_name} instead.")
    if not (len(query._size) == len(key._size) == len(value._size) == 4):
        raise RuntimeError(f"{name}: Accept only 4 dims inputs shape of {{B, H, T, K}}")
    if dropout_p != 0.0:
        raise RuntimeError(f"{name}: Currently do not support dropout > 0")
    if not (query._size[3] == value._size[3] and key._size[3] == value._size[3]):
        raise RuntimeError(f"{name}: Q/K/V should have the same head size")
    if attn_mask is not None and attn_mask._dtype not in (_BOOL, _F32, dt):
        raise RuntimeError(f"{name}: Attention mask is the same data type as query")
    if attn_mask is not None and len(attn_mask._size) not in (2, 4):
        raise RuntimeError(f"{name}: Attention mask dim in {{2, 4}}")
    b, h, lq, e = query._size
    hk, s = key._size[1], key._size[2]
    acc_dt = _F32 if dt in _REDUCED or dt.itemsize == 1 else dt
    acc = D.numpy_dtype(acc_dt)
    # the logsumexp is written (b, lq, h) and returned transposed, as upstream's kernel: not a
    # view to autograd (the operator's schema returns a fresh tensor)
    lse_arr = np.empty((b, lq, h), acc)
    lse_t = _over_buffer(lse_arr, lse_arr.transpose(0, 2, 1), acc_dt, (lq * h, 1, h))
    if 0 in query._size:
        return _empty_like(query, dt, query.device, None), lse_t
    g = h // hk
    sc = np.float64(scale if scale is not None else 1.0 / math.sqrt(e)).astype(acc)
    q = _acc(query, acc).reshape(b, hk, g, lq, e)
    k = _acc(key, acc)[:, :, None]
    v = _acc(value, acc)[:, :, None]
    blas_threads.for_product(b * h * lq, e, s)
    kt = np.swapaxes(k, -1, -2)
    if attn_mask is not None:
        scores = np.matmul(q, kt)  # (b, hk, g, lq, s)
        m = _mask_values(attn_mask, acc)
        m4 = np.broadcast_to(m.reshape((1,) * (4 - m.ndim) + m.shape), (b, h, lq, s))
        scores = fma(scores, sc, m4.reshape(b, hk, g, lq, s))  # qk * scale + mask, fused
    elif is_causal:
        scores = _causal_scores(q, kt, sc)
    else:
        scores = np.matmul(q, kt)
        scores *= sc
    if is_causal:
        _mask_causal(scores)
    # the ufuncs' own reductions: ndarray.max/sum call exactly these through Python wrappers
    row_max = np.maximum.reduce(scores, axis=-1, keepdims=True)
    _settle_maxima(scores, row_max, attn_mask is None and cpu_capability.VEC_BYTES // acc.itemsize)
    # upstream's vectorized exp is within an ulp; numpy's float32 exp is not, and its error
    # depends on which SIMD build of it this CPU runs
    if acc == _F32_NP and scores.size <= _SMALL and not is_causal:
        # exact(np.exp, scores - row_max) with the difference rounded in float32 and written
        # widened in one call (the float64 exp then runs on a fresh contiguous array, as there)
        wide = np.subtract(scores, row_max, out=np.empty(scores.shape, np.float64), dtype=acc)
        scores = np.exp(wide).astype(acc)
    else:
        np.subtract(scores, row_max, out=scores)
        if is_causal and lq > 1 and scores.flags.c_contiguous and not np.isnan(row_max).any():
            _causal_exp(scores)
        else:
            scores = exact(np.exp, scores)
    total = np.add.reduce(scores, axis=-1, keepdims=True)
    if dt in _REDUCED:  # the probabilities enter the second product in the input dtype
        scores = as_compute(wrap(scores, dt), dt)
    dst = _causal_product(scores, v) if is_causal else np.matmul(scores, v)
    _replace(total, 0, 1)
    recip = np.reciprocal(total)
    if acc_dt is dt:
        # the normalized rows straight into the result (empty_like(query)'s layout)
        out = _like_query(query, dt)
        np.multiply(dst.reshape(b, h, lq, e), recip.reshape(b, h, lq, 1), out=out._np)
    else:
        dst *= recip
        dst = _round(dst.reshape(b, h, lq, e), acc_dt, dt)
        if query._stride == contiguous_strides_of(query._size):
            out = from_result(np.ascontiguousarray(dst), dt)
        else:  # empty_like(query): its strides, whatever they are
            out = _empty_like(query, dt, query.device, None)
            np.copyto(arr(out), dst)
    np.log(total, out=total)
    np.add(total.reshape(b, h, lq), row_max.reshape(b, h, lq), out=lse_t._np)
    return out, lse_t


_KV_SPLIT = 512  # the flash kernel's block of keys (its kv_split_size at every query length)


def _settle_maxima(scores, row_max, lanes) -> None:
    """The row maxima as the softmax takes them: NaN rows first as upstream's unmasked kernel
    sees them (``lanes``: its vector width; 0 with a mask, whose maximum propagates every NaN),
    then fully masked rows' -inf made 0 (exp(-inf) = 0). A decode step's few maxima are read
    once, in Python, for both tests (numpy's reductions and compares cost more than they)."""
    vals = row_max.ravel().tolist() if row_max.size <= _FEW else None
    if lanes and (any(map(math.isnan, vals)) if vals is not None else np.isnan(row_max).any()):
        _skip_tail_nan_blocks(scores, row_max, lanes)
        vals = None  # changed: _replace reads them again
    _replace(row_max, -np.inf, 0, vals)


def _skip_tail_nan_blocks(scores, row_max, lanes):
    """Rows whose maximum is NaN, as upstream's kernel sees them without a mask: it takes each
    block's maximum over whole vectors of ``lanes`` keys with a NaN-propagating maximum and over
    the block's last ``size % lanes`` keys with std::max, which passes a NaN over, and skips a
    block whose maximum is -inf (its probabilities zero). So NaNs only among those last keys of
    a block whose other keys are all -inf never reach the row: such blocks become -inf here and
    their rows' maxima are taken again (a fully skipped row is then a fully masked one)."""
    s = scores.shape[-1]
    for idx in map(tuple, np.argwhere(np.isnan(row_max[..., 0]))):
        row = scores[idx]
        skipped = False
        for n in range(0, s, _KV_SPLIT):
            block = row[n:n + _KV_SPLIT]
            nan = np.isnan(block)
            if nan.any() and not nan[:block.size // lanes * lanes].any() and \
                    (block[~nan] == -np.inf).all():
                block[...] = -np.inf
                skipped = True
        if skipped:
            row_max[idx] = np.maximum.reduce(row)


_F32_NP = np.dtype(np.float32)
_SMALL = 4096  # scores evaluated in one widened step (exact's chunks start above this size)


def _causal_blocks(lq: int, s: int, rows: int, stop: int | None = None):
    """The blocks of ``rows`` query rows [r0, r1) of causal (top-left aligned) attention of
    ``lq`` queries over ``s`` keys (the blocks starting before ``stop``, default all), each with
    ``c = min(s, r1)``: every key at or past c lies above the diagonal of all the block's rows,
    so the causal steps below leave those keys out of a block's work."""
    for r0 in range(0, lq if stop is None else stop, rows):
        r1 = min(lq, r0 + rows)
        yield r0, r1, min(s, r1)


def _causal_scores(q: np.ndarray, kt: np.ndarray, sc) -> np.ndarray:
    """``(q @ kt) * sc`` for causal (top-left aligned) attention (..., lq, s): a block of query
    rows [r0, r1) multiplies the keys before min(s, r1) only; the scores past them are left
    unwritten, each above its row's diagonal, where ``_mask_causal`` writes -inf whatever its
    own blocks (a prefill's half of the first product is not computed). Each score is still one dot
    over the head dimension, but BLAS may round a block's differently from the whole product's
    (OpenBLAS's Haswell kernels do): test_causal_scores.py holds them to its error bound."""
    lq, s = q.shape[-2], kt.shape[-1]
    rows = _SCORE_ROWS
    if lq < 2 * rows:
        scores = np.matmul(q, kt)
        scores *= sc
        return scores
    out = np.empty(np.broadcast_shapes(q.shape[:-2], kt.shape[:-2]) + (lq, s),
                   np.result_type(q, kt))
    for r0, r1, c in _causal_blocks(lq, s, rows):
        blk = out[..., r0:r1, :c]
        np.matmul(q[..., r0:r1, :], kt[..., :c], out=blk)
        blk *= sc
    return out


_SCORE_ROWS = 64  # query rows per block of _causal_scores


def _causal_product(p: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``p @ v`` for causal probabilities p (..., lq, s): a block of query rows [r0, r1) takes
    the keys before min(s, r1) only: the others' probabilities are exactly 0 (or the row is NaN
    through its visible keys too), and with finite values each adds a zero. A value that is inf
    or NaN makes every row that multiplies it by 0 NaN, as upstream's product does, so then the
    whole product is taken. The sum over fewer keys is not always the same bits as the whole
    product's: BLAS splits a long sum into blocks of its own (here from 256 keys on)."""
    lq, s = p.shape[-2:]
    rows = _PRODUCT_ROWS
    if lq < 2 * rows or not np.isfinite(v).all():
        return np.matmul(p, v)
    dst = np.empty(np.broadcast_shapes(p.shape[:-2], v.shape[:-2]) + (lq, v.shape[-1]),
                   np.result_type(p, v))
    for r0, r1, c in _causal_blocks(lq, s, rows):
        np.matmul(p[..., r0:r1, :c], v[..., :c, :], out=dst[..., r0:r1, :])
    return dst


_PRODUCT_ROWS = 32  # query rows per block of _causal_product


_FEW = 64  # values tested in Python rather than by numpy's compare (a decode step's rows)


def _replace(a: np.ndarray, old, new, vals=None) -> None:
    """``a[a == old] = new`` in place; up to _FEW values are tested in Python (``vals``: their
    list, when the caller has read it), where numpy's compare and masked copy cost more than
    the values."""
    if a.size <= _FEW:
        if old not in (a.ravel().tolist() if vals is None else vals):
            return
    np.copyto(a, new, where=a == old)


def _like_query(query, dt):
    """empty_like(query) of a dense query (its strides; contiguous ones are a fresh result)."""
    size, stride = query._size, query._stride
    if stride == contiguous_strides_of(size):
        return from_result(np.empty(size, D.numpy_dtype(dt)), dt)
    order = _DENSE_ORDER.get((size, stride))
    if order is None:
        order = _DENSE_ORDER[(size, stride)] = _dense_order(size, stride)
    if order is False:
        return _empty_like(query, dt, query.device, None)
    buf = np.empty(order[0], D.numpy_dtype(dt))
    return _over_buffer(buf, buf.transpose(order[1]), dt, stride)


def _over_buffer(buf: np.ndarray, view: np.ndarray, dt, stride: tuple):
    """A fresh tensor of ``stride`` whose storage is ``buf`` (C-contiguous) and whose array is
    ``view`` (a transpose of it). Where the view is C-contiguous too (a decode step's single
    query row: only size-1 dims move), it is a kernel result whose storage is made from the
    view when first asked for (the same bytes); else the storage is made now."""
    if view.size and view.flags.c_contiguous:
        t = from_result(view, dt)
        t._stride = stride
        return t
    return make(new_storage(buf.nbytes, CPU, buf.reshape(-1).view(np.uint8)), dt, view.shape,
                stride, 0, np_view=view)


_DENSE_ORDER: dict = {}   # (size, stride) -> (buffer shape, its transpose to size), or False


def _dense_order(size, stride):
    """A non-overlapping dense layout's buffer (its sizes slowest first) and the transpose that
    views it as ``size``, when ``stride`` is exactly that layout's (size-1 dims anywhere: their
    strides are kept as given), else False."""
    if len(_DENSE_ORDER) > 256:
        _DENSE_ORDER.clear()
    perm = sorted(range(len(size)), key=lambda d: (-stride[d], d))
    expect, acc = [0] * len(size), 1
    for d in reversed(perm):
        expect[d] = acc
        acc *= size[d]
    if any(size[d] != 1 and expect[d] != stride[d] for d in range(len(size))):
        return False
    return tuple(size[d] for d in perm), tuple(perm.index(d) for d in range(len(size)))


def _causal_exp(scores: np.ndarray) -> None:
    """``exact(np.exp, scores)`` in place for causal scores (..., lq, s) already shifted by their
    row maxima (none NaN): a block of query rows [r0, r1) sees no key at or past r1, where every
    score is -inf and its exp exactly 0, so only the keys before r1 are evaluated (exp(-inf) is
    numpy's slow special case, and half of a causal prefill's scores are masked). Each element's
    value is unchanged: the same float64 exp of the same widened score, rounded once."""
    lq, s = scores.shape[-2:]
    S = scores.reshape(-1, lq, s)
    heads = S.shape[0]
    rows = max(1, _EXP_BLOCK // (heads * s))
    wide = np.empty(heads * rows * min(s, lq), np.float64)
    val = np.empty_like(wide)
    for r0, r1, c in _causal_blocks(lq, s, rows):
        blk = S[:, r0:r1, :c]
        w = wide[:blk.size].reshape(blk.shape)
        v = val[:blk.size].reshape(blk.shape)
        np.copyto(w, blk)
        np.exp(w, out=v)
        np.copyto(blk, v, casting="same_kind")
        if c < s:
            S[:, r0:r1, c:] = 0


_EXP_BLOCK = 32768  # scores per block of _causal_exp (its two float64 buffers stay in cache)


def _mask_causal(scores: np.ndarray) -> None:
    """``np.copyto(scores, -inf, where=_above_diagonal(lq, s))`` for (..., lq, s) scores: a block
    of rows masks every key at or past its last row's with one fill, and only its diagonal
    square through the boolean mask (a prefill's masked copy reads and tests every score)."""
    lq, s = scores.shape[-2:]
    if lq < 2 * _MASK_ROWS or not scores.flags.c_contiguous:
        np.copyto(scores, -np.inf, where=_above_diagonal(lq, s))
        return
    S = scores.reshape(-1, lq, s)
    above = _above_diagonal(lq, s)
    for r0, r1, c in _causal_blocks(lq, s, _MASK_ROWS, min(lq, s)):
        if c < s:
            S[:, r0:r1, c:] = -np.inf
        np.copyto(S[:, r0:r1, r0:c], -np.inf, where=above[r0:r1, r0:c])


_MASK_ROWS = 32  # query rows per block of _mask_causal


@functools.lru_cache(maxsize=64)
def _above_diagonal(lq: int, s: int) -> np.ndarray:
    """The keys a causal (top-left aligned) query row may not see: column > row."""
    return np.triu(np.ones((lq, s), bool), 1)


def _acc(t, acc) -> np.ndarray:
    a = arr(t)
    return a if a.dtype == acc else as_compute(t, t._dtype).astype(acc, copy=False)


def _mask_values(mask, acc) -> np.ndarray:
    if mask._dtype is _BOOL:
        return np.where(arr(mask), acc.type(0), acc.type(-np.inf))
    return _acc(mask, acc)


def _round(x: np.ndarray, acc_dt, dt) -> np.ndarray:
    if acc_dt is dt:
        return x
    from ..core.cast import cast_array

    return cast_array(x, acc_dt, dt)
