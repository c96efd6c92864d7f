"""randperm, multinomial and dropout as upstream's CPU kernels consume the stream.

* ``randperm`` (TensorFactories.cpp ``randperm_cpu``): for n < 2**32 / 20, Fisher-Yates from the
  front swapping ``i`` with ``i + random() % (n - i)`` (vectorized: ``_front_fisher_yates``);
  above that the "inside-out" variant on ``random64() % (i + 1)``, a plain Python loop (such n
  needs gigabytes anyway).
* ``multinomial`` (Distributions.cpp / MultinomialKernel.cpp): without replacement, and with
  replacement when one sample is drawn, it is argmax/topk of ``p / q`` with
  ``q = exponential_(1)`` in the probabilities' dtype (topk ties: see stdalgo). Otherwise, per
  row, a running sum in scalar_t (float for 16-bit floats), normalised, last bucket forced to
  1, then one double uniform per sample and a lower-bound search.
* ``dropout`` (Dropout.cpp ``_dropout_impl``, what ``F.dropout`` reaches on CPU):
  ``noise = bernoulli_(1 - p)`` in the input's dtype, ``noise.div_(1 - p)``, ``input * noise``.
  ``native_dropout`` (the fused op decompositions use): bool mask, ``input * mask * scale``.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as dt
from . import stdalgo
from .distributions import bernoulli_, exponential_, uniform_double

SMALL_RANDPERM = 0xFFFFFFFF // 20


def randperm(gen, n: int, dtype="int64") -> np.ndarray:
    n, name = int(n), dt.name_of(dtype)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if name in dt.INTS and name != "bool" and not dt.INTS[name][0] <= max(n - 1, 0) <= dt.INTS[name][1]:
        raise RuntimeError(f"value cannot be converted to type {name}_t without overflow")
    limits = {"float16": ("2049", "Half"), "float32": ("2^24+1", "Float"), "float64": ("2^53+1", "Double")}
    if name in limits and n > (1 << dt.FLOATS[name]) + 1:  # BFloat16 is not checked upstream
        raise RuntimeError(f"n cannot be greater than {limits[name][0]} for {limits[name][1]} type.")
    if name in ("bool", "uint16", "uint32", "uint64"):
        raise RuntimeError(f'"randperm" not implemented for \'{dt.SCALAR_NAME[name]}\'')
    if n < SMALL_RANDPERM:
        if n <= 1:
            return dt.from_int64(np.arange(n, dtype=np.int64), name)
        span = np.arange(n, 1, -1, dtype=np.uint32)  # n - i for i = 0 .. n-2 (< 2**32)
        j = np.arange(n - 1, dtype=np.int64)
        j += gen.random(n - 1) % span
        perm = _front_fisher_yates(j)
    else:  # inside-out Fisher-Yates on 64-bit draws (n this large is far beyond Python speed)
        perm = [0] * n
        for start in range(0, n, 1 << 20):
            stop = min(n, start + (1 << 20))
            bound = np.arange(start + 1, stop + 1, dtype=np.uint64)
            for i, z in zip(range(start, stop), (gen.random64(stop - start) % bound).tolist()):
                perm[i] = perm[z]
                perm[z] = i
        perm = np.array(perm, np.int64)
    return dt.from_int64(perm, name)


def _front_fisher_yates(j: np.ndarray) -> np.ndarray:
    """The permutation left by ``for t in 0..n-2: swap(a[t], a[j[t]])`` on ``a = arange(n)``,
    ``j[t] >= t``, without the sequential loop.

    Position t is final after step t, and a position p is only written by the steps that
    target it before step p. Let v[t] be the value at t just before step t: t itself, unless an
    earlier step s targeted t, in which case the last such s left v[s] there. Those links form
    chains that end at an untouched position, resolved by pointer jumping. With the steps
    grouped by target, in step order, step t (self-swap included) takes what the previous step
    of its group left at the target, v[previous step], or the target itself for the first one.
    """
    n = j.size + 1
    t = np.arange(n, dtype=np.int64)
    b = int(n).bit_length()
    key = j << b  # target, then step: distinct keys, so any sort is the stable one
    key |= t[:-1]
    key.sort()
    order = key & ((1 << b) - 1)
    js = key >> b
    first = np.empty(n - 1, bool)  # the first step of its target's group
    first[0] = True
    np.not_equal(js[1:], js[:-1], out=first[1:])
    ends = np.flatnonzero(np.append(first[1:], True))
    targets, last = js[ends], order[ends]
    link = t.copy()  # the last earlier step that targeted t (a self-swap does not count)
    link[targets] = last
    selfs = ends[last == targets]
    selfs = selfs[~first[selfs]]
    link[js[selfs]] = order[selfs - 1]
    live = np.flatnonzero(link != t)
    while live.size:  # link[t] = link[link[t]] until every chain reaches its end
        cur = link[live]
        nxt = link[cur]
        link[live] = nxt
        live = live[nxt != cur]
    taken = np.empty(n - 1, np.int64)
    taken[1:] = link[order[:-1]]
    np.copyto(taken, js, where=first)
    out = np.empty(n, np.int64)
    out[order] = taken
    out[n - 1] = link[n - 1]  # no step at the last position
    return out


def multinomial(gen, probs, num_samples: int, replacement: bool = False) -> np.ndarray:
    probs = np.asarray(probs)
    name = dt.name_of(probs.dtype)
    num_samples = int(num_samples)
    if not 1 <= probs.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if name not in dt.FLOATS:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {dt.SCALAR_NAME[name]}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = probs.shape[-1]
    if not (replacement or num_samples <= n_cat):
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_cat > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    out_shape = (num_samples,) if probs.ndim == 1 else (probs.shape[0], num_samples)
    if np.prod(out_shape) == 0:
        return np.empty(out_shape, np.int64)
    rows = probs.reshape(-1, n_cat)
    if not replacement or num_samples == 1:  # upstream's fast path covers both
        return _without_replacement(gen, probs, rows, name, num_samples).reshape(out_shape)
    return _with_replacement(gen, rows, name, num_samples).reshape(out_shape)


def _without_replacement(gen, probs, rows, name, k):
    wide = rows.astype(np.float64)
    if not (np.all(wide >= 0) and np.all(wide < np.inf)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(wide.sum(axis=1) == 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    q = exponential_(gen, probs.shape, name, 1.0).reshape(rows.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        if name in ("float32", "float64"):
            key = rows / q
        else:  # 16-bit division runs in float and rounds back
            key = (rows.astype(np.float32) / q.astype(np.float32)).astype(rows.dtype)
    key = key.astype(np.float64)  # exact widening; ordering is all that matters now
    if k == 1:
        return np.argmax(key, axis=1)[:, None]  # first maximum, as upstream's argmax
    return _topk_rows(key, k)


def _topk_rows(key: np.ndarray, k: int) -> np.ndarray:
    """upstream's topk indices of each row. Where a row's k largest are distinct and strictly
    above the rest the answer is unambiguous and numpy gives it (all rows at once); otherwise
    replay libstdc++'s unstable algorithms on that row."""
    part = np.argpartition(-key, k - 1, axis=1)[:, :k]   # the k largest, in no order
    vals = np.take_along_axis(key, part, 1)
    order = np.argsort(-vals, axis=1, kind="stable")
    top = np.take_along_axis(part, order, 1)
    vals = np.take_along_axis(vals, order, 1)
    clear = (np.count_nonzero(key >= vals[:, -1:], axis=1) == k) & \
        np.all(vals[:, :-1] > vals[:, 1:], axis=1) & ~np.isnan(key).any(axis=1)
    for i in np.flatnonzero(~clear).tolist():
        top[i] = stdalgo.topk_largest(key[i].tolist(), k)
    return top


def _with_replacement(gen, rows, name, k):
    acc = np.float64 if name == "float64" else np.float32
    vals = rows.astype(acc)
    if np.any(vals < 0):
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    if not np.all(np.isfinite(vals)):
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    cum = np.add.accumulate(vals, axis=1, dtype=acc)  # sequential, in scalar_t (float for bf16)
    total = cum[:, -1:].copy()
    if np.any(total <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cum = (cum / total).astype(np.float64)
    cum[:, -1] = 1.0
    u = uniform_double(gen, rows.shape[0] * k).reshape(rows.shape[0], k)
    return np.stack([np.searchsorted(c, s, side="left") for c, s in zip(cum, u)]).astype(np.int64)


def dropout(gen, x: np.ndarray, p: float, train: bool = True) -> np.ndarray:
    """``torch.dropout`` / ``F.dropout`` on CPU (``_dropout_impl``)."""
    x = np.asarray(x)
    p = float(p)
    if p == 0 or not train or x.size == 0:
        return x
    if p == 1:
        return x * np.zeros((), x.dtype)
    name = dt.name_of(x.dtype)
    noise = bernoulli_(gen, x.shape, name, 1 - p)
    if name in ("float16", "bfloat16"):  # reduced floats: a * (1 / b) in float, rounded back
        noise = (noise.astype(np.float32) * (np.float32(1) / np.float32(1 - p))).astype(x.dtype)
    else:
        noise = noise / np.array(1 - p, x.dtype)
    return x * noise


def native_dropout(gen, x: np.ndarray, p: float, train: bool = True):
    """``native_dropout`` on CPU: ``(input * mask * scale, mask)`` with a bool mask."""
    x = np.asarray(x)
    if x.size == 0:
        return x, np.empty_like(x)
    if not train:
        return x.copy(), np.ones(x.shape, bool)
    p1m = 1.0 - float(p)
    scale = 0.0 if p1m == 0 else 1.0 / p1m
    mask = bernoulli_(gen, x.shape, "bool", p1m)
    name = dt.name_of(x.dtype)
    # mul_(scale) casts the double to the tensor's dtype first (unlike div_ above: measured);
    # products of 16-bit floats are exact in float, so numpy's 16-bit multiply rounds the same
    scale = np.array(dt.scalar_to(scale, name), x.dtype)
    return (x * mask.astype(x.dtype)) * scale, mask
