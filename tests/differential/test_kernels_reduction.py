"""Reduction, scan and sorting kernels against upstream torch 2.13.0, in a separate process.

Both interpreters build the same named inputs from one .npz and evaluate the same expressions
(RUNNER below, executed verbatim by each). Upstream runs once per module: each expression as is,
again with floating inputs widened to float64 ("high": upstream's own error is measurable
against it), and with float64 inputs narrowed to float32 ("narrow": float64 has nothing wider,
so its tolerance is upstream's float32 error carried over in ulps).

Comparison: exception type and message, warnings, dtypes, shapes and strides exactly; integers
and booleans exactly; floats of "exact" cases (ops that select or move values) bit for bit,
zero signs included; other floats pass when within FLOOR_ULPS of upstream's value, or no farther
from the float64 answer than upstream's own value is (plus FLOOR_ULPS), or — float64 — within
twice upstream's float32 error scaled to float64 ulps. The same rules upstream's golden harness
applies (testing/golden/compare.py); nothing is hand-tuned per op.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden.tolerance import FLOOR_ULPS

# ------------------------------------------------------------------------------ shared runner

RUNNER = r'''
import math, warnings
import numpy as np

WARN_ONCE = {"Casting complex values to real discards the imaginary part"}

def make_env(T, A, mode):
    t = lambda k: T.from_numpy(np.array(A[k]))
    f = t("f")
    E = dict(
        f=f, d=t("f").double(), h=t("f").half(), bf=t("f").to(T.bfloat16), ft=f.transpose(0, 2),
        g=t("g"), big=t("big"), dbig=t("big").double(), nan=t("nan"), nanh=t("nan").half(),
        allnan=t("allnan"), zs=t("zs"), i=t("i"), i32=t("i").int(), ir=t("ir"), ic=t("ic"),
        i2=t("i2"), u=t("u"), bb=t("bb"), c=t("c"), cd=t("c").to(T.complex128), cinf=t("cinf"),
        s=T.tensor(1.5), si=T.tensor(7), e=T.zeros(2, 0, 3), ei=T.zeros(0, dtype=T.int64),
        w=t("w"), idx=t("idx"), u16=T.from_numpy(np.array([3, 1, 2], np.uint16)),
        mean_off=t("mean_off"), nan9=t("nan9"),
    )
    if mode == "high":
        E = {k: v.to(T.float64) if v.is_floating_point() and v.dtype != T.float64 else
             v.to(T.complex128) if v.dtype == T.complex64 else v for k, v in E.items()}
    elif mode == "narrow":
        E = {k: v.to(T.float32) if v.dtype == T.float64 else
             v.to(T.complex64) if v.dtype == T.complex128 else v for k, v in E.items()}
    return E

def encode(v, T, arrays):
    if isinstance(v, T.Tensor):
        dt = str(v.dtype).split(".")[-1]
        x = v.detach()
        vals = x.to(T.float32).numpy() if dt == "bfloat16" else np.array(x.numpy())
        key = "a%d" % len(arrays)
        arrays[key] = vals
        return {"T": "tensor", "dtype": dt, "shape": list(v.shape), "stride": list(v.stride()),
                "data": key}
    if isinstance(v, (tuple, list)):
        return {"T": "seq", "v": [encode(x, T, arrays) for x in v]}
    if isinstance(v, (bool, int, float, type(None))):
        return {"T": "py", "v": v}
    return {"T": "other", "v": repr(type(v))}

def run(T, A, expr, mode, arrays):
    E = make_env(T, A, mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = encode(eval(expr, {"T": T, "torch": T, "math": math, **E}), T, arrays)
        except Exception as e:  # the exception is the result
            res = {"T": "exc", "type": type(e).__name__, "msg": str(e)}
    # warn-once messages (TORCH_WARN_ONCE) depend on what ran before in the process: not compared
    res["warn"] = sorted({str(w.message).split(" (Triggered internally")[0] for w in caught
                          if issubclass(w.category, UserWarning)} - WARN_ONCE)
    return res
'''

UPSTREAM = r'''
import json, sys
import numpy as np
import torch
exec(open(sys.argv[1]).read())
A = dict(np.load(sys.argv[2]))
cases = json.load(open(sys.argv[3]))
arrays, out = {}, {}
def floats(d, kinds):
    if d["T"] == "tensor":
        return d["dtype"] in kinds
    return d["T"] == "seq" and any(floats(x, kinds) for x in d["v"])
for expr, kind in cases:
    low = run(torch, A, expr, "base", arrays)
    r = {"low": low}
    if kind != "exact" and floats(low, ("float16", "bfloat16", "float32", "complex64")):
        r["high"] = run(torch, A, expr, "high", arrays)
    if kind != "exact" and floats(low, ("float64", "complex128")):
        r["narrow"] = run(torch, A, expr, "narrow", arrays)
    out[expr] = r
np.savez(sys.argv[4], **arrays)
print(json.dumps(out))
'''


def inputs() -> dict:
    rng = np.random.RandomState(1234)
    nan = rng.randint(-3, 4, (4, 9)).astype(np.float32)
    nan[0, 2] = nan[1, 5] = nan[3, 0] = nan[3, 4] = np.nan
    nan[2, 1], nan[2, 7], nan[1, 1] = np.inf, -np.inf, -0.0
    allnan = rng.randn(3, 7).astype(np.float32)
    allnan[1] = np.nan
    allnan[2, ::2] = np.nan
    ic = np.repeat(rng.randint(0, 4, 12), rng.randint(1, 4, 12))
    i2 = rng.randint(0, 2, (3, 8))
    i2[:, 5] = i2[:, 1]
    c = (rng.randn(3, 4) + 1j * rng.randn(3, 4)).astype(np.complex64)
    cinf = np.array([1 + 1j, complex(np.inf, 0.5), complex(-np.inf, 2), 2 - 1j,
                     complex(np.inf, -1)], np.complex64)
    return dict(
        f=rng.randn(4, 5, 6).astype(np.float32),
        g=rng.randn(3, 300).astype(np.float32),
        big=(rng.randn(3, 5000) * np.exp(rng.randn(3, 5000) * 3)).astype(np.float32),
        nan=nan, allnan=allnan,
        zs=np.array([[0.0, -0.0, -1.0], [-0.0, 0.0, -2.0], [-0.0, -0.0, -0.0]], np.float32),
        i=rng.randint(-3, 4, (5, 40)).astype(np.int64),
        ir=rng.randint(0, 6, (2, 300)).astype(np.int64),
        ic=ic.astype(np.int64), i2=i2.astype(np.int64),
        u=rng.randint(0, 10, 30).astype(np.uint8),
        bb=rng.rand(3, 4) > 0.5, c=c, cinf=cinf,
        w=rng.randn(12).astype(np.float32), idx=rng.randint(0, 7, 12).astype(np.int64),
        mean_off=(1000 + rng.randn(4, 300)).astype(np.float32),
        nan9=np.full((2, 9), np.nan, np.float32),
    )


# ------------------------------------------------------------------------------ the cases
# (expression, kind): kind "num" compares floats by tolerance, "exact" bit for bit, "ties"
# accepts any index of a tied value for an unstable sort (values and permutation still checked).

CASES: list = []


def add(kind, *exprs):
    CASES.extend((e, kind) for e in exprs)


A = "torch.ops.aten."
INF = "float('inf')"
add("num",
    # sum
    "f.sum()", "f.sum(1)", "f.sum((0, 2))", "f.sum(-1, keepdim=True)", "f.sum([])", "ft.sum(1)",
    "f.sum(dtype=torch.float64)", "f.sum(1, dtype=torch.float16)", "h.sum(1)", "bf.sum(2)",
    "d.sum(0)", "big.sum(1)", "big.t().sum(0)", "dbig.sum(1)", "dbig.t().sum(0)", "c.sum(1)",
    "cd.sum()", "c.sum(dtype=torch.float32)", "s.sum()", "s.sum(0)", "s.sum(-1, keepdim=True)",
    "nan.sum(1)", A + "sum.dim_IntList(f, [0, -1], True)", A + "sum.default(h)",
    # mean
    "f.mean()", "f.mean((1, 2))", "f.mean(0, True)", "h.mean(1)", "bf.mean()", "d.mean(1)",
    "i.mean(dtype=torch.float32)", "c.mean(0)", "e.mean()", "e.mean(1)", "big.mean(1)",
    "f.mean([])", "f.mean(dtype=torch.float64)", "mean_off.mean(1)", "s.mean()",
    # nansum / nanmean
    "nan.nansum()", "nan.nansum(1)", "nanh.nansum(0)", "nan.nanmean(1)", "f.nanmean()",
    # prod
    "f.prod()", "f.prod(1)", "f.prod(2, keepdim=True)", "h.prod(2)", "e.prod(1)", "e.prod()",
    "c.prod(0)", "s.prod()", "f.prod(1, dtype=torch.float64)", "ft.prod(0)", "d.prod(2)",
    # var / std
    "f.var()", "f.var(1, correction=0)", "f.std((0, 2), keepdim=True, correction=1)",
    "f.var(1, correction=2.5)", "f.std()", "d.var(dim=0, correction=1)",
    "h.var(dim=1, correction=1)", "bf.std(dim=2, correction=0)", "c.var(dim=1, correction=1)",
    "cd.std()", "mean_off.var(dim=1, correction=1)", "mean_off.var()", "big.std(dim=1, correction=1)",
    A + "var.correction(f, [1])", A + "std.correction(f, None, correction=0, keepdim=True)",
    A + "var_mean.correction(f, [1])", A + "std_mean.correction(f, [0, 1], correction=0)",
    A + "var_mean.correction(c, [0])", A + "std_mean.correction(h, None)",
    A + "var_mean.correction(d, [2], keepdim=True)",
    "s.var()", "e.var(dim=1, correction=1)", "f.var(dim=2, correction=6)", "f.var(dim=2, correction=7)",
    # norms
    "torch.linalg.vector_norm(f)", "torch.linalg.vector_norm(f, 1)",
    f"torch.linalg.vector_norm(f, {INF}, 1)", f"torch.linalg.vector_norm(f, -{INF}, (0, 2))",
    "torch.linalg.vector_norm(f, 0, 1)", "torch.linalg.vector_norm(nan, 0, 1)",
    f"torch.linalg.vector_norm(nan, {INF}, 1)", "torch.linalg.vector_norm(f, 3.5, 2, keepdim=True)",
    "torch.linalg.vector_norm(f, -1.5, 1)", "torch.linalg.vector_norm(f, 0.5)",
    "torch.linalg.vector_norm(zs, -1, 1)", "torch.linalg.vector_norm(h, 2, 1)",
    "torch.linalg.vector_norm(bf, 1)", "torch.linalg.vector_norm(c, 2, 1)",
    "torch.linalg.vector_norm(c, 1, 1, dtype=torch.complex128)",
    "torch.linalg.vector_norm(f, 2, dtype=torch.float64)", "torch.linalg.vector_norm(d, 3, 0)",
    f"torch.linalg.vector_norm(e, {INF}, 0)", "torch.linalg.vector_norm(e, 2, 1)",
    "torch.linalg.vector_norm(s, 2)", "torch.linalg.vector_norm(f[:, :1], 2, 1)",
    "torch.linalg.vector_norm(f[:1, :, :1], 0, (0, 2))", "torch.linalg.vector_norm(big, 2, 1)",
    "f.norm()", "f.norm(1, 1)", f"f.norm(p={INF})", "f.norm(dim=(1, 2))",
    "f.norm(2, 1, dtype=torch.float64)", A + "norm.Scalar(f, 3)",
    A + "norm.ScalarOpt_dtype(f, None, dtype=torch.float64)", A + "norm.ScalarOpt_dim(h, None, [2])",
    # logsumexp
    "f.logsumexp(1)", "f.logsumexp((0, 2), True)", "nan.logsumexp(1)", "h.logsumexp(2)",
    "i.logsumexp(1)", "bb.logsumexp(0)", "c.logsumexp(1)", "e.logsumexp(1)", "e.logsumexp(2)",
    "s.logsumexp(0)", "s.logsumexp([])", "big.logsumexp(1)", "d.logsumexp(-1)",
    # scans
    "f.cumsum(1)", "f.cumsum(-1, dtype=torch.float64)", "h.cumsum(2)", "bf.cumsum(0)",
    "c.cumsum(1)", "big.cumsum(1)", "ft.cumsum(0)", "nan.cumsum(1)", "d.cumsum(2)", "s.cumsum(0)",
    "f.cumprod(1)", "h.cumprod(0)", "c.cumprod(0)", "nan.cumprod(0)", "f.cumsum(0, dtype=torch.half)",
    "f.logcumsumexp(1)", "d.logcumsumexp(0)", "h.logcumsumexp(2)", "bf.logcumsumexp(1)",
    "nan.logcumsumexp(1)", "c.logcumsumexp(1)", "cd.logcumsumexp(0)", "cinf.logcumsumexp(0)",
    "e.logcumsumexp(1)", "s.logcumsumexp(0)", "big.logcumsumexp(1)",
    # histc, bincount (weighted)
    "f.histc()", "f.histc(7)", "f.histc(5, -1, 1)", "h.histc(6)", "d.histc(9, 0, 2)",
    "torch.ones(4).histc(3)", "e.histc(3)", "bf.histc(4)",
    "idx.bincount(w)", "idx.bincount(w.double(), 10)", "idx.bincount(idx)",
    "torch.sum(f, 1, out=torch.empty(0))", "torch.var(d, 1, correction=0, out=torch.empty(0).double())",
)
add("exact",
    # integer/bool sums and dtype arguments
    "i.sum()", "i.sum(1)", "bb.sum(0)", "u.sum()", "i32.sum(dtype=torch.int8)",
    "f.sum(dtype=torch.int32)", "u16.sum()", "e.sum(1)", "e.sum()", "si.sum()", "bb.sum(dtype=torch.bool)",
    "i.nansum(1)", "i.prod(1)", "bb.prod()", "bb.prod(0)", "i.prod(dtype=torch.int8)",
    "f.prod(dtype=torch.bool)", "ir.prod(1)", "ei.prod()",
    # selecting reductions
    "f.amax()", "f.amax(1)", "f.amax((0, 2), True)", "nan.amax(1)", "nan.amin(0)", "i.amin(1)",
    "bb.amax(1)", "h.amax(0)", "bf.amin(2)", "e.amax(2)", "s.amax()", "s.amax(0)", "zs.amax(1)",
    "zs.amin(1)", "zs.amax()", "zs.max()", "zs.min()", "zs.amax(0)", "ft.amin(1)",
    "f.max()", "f.min()", "f.max(1)", "f.min(0, True)", "nan.max(1)", "nan.min(1)", "nan.max()",
    "nan.min()", "i.max(1)", "bb.max(1)", "e.max(0)", "s.max(0)", "zs.max(1)", "zs.min(0)",
    "h.max(2)", "ft.max(2)",
    "f.argmax()", "f.argmax(1)", "f.argmin(2, True)", "f.argmax(keepdim=True)", "nan.argmax(1)",
    "nan.argmin(0)", "i.argmax(1)", "i.argmin()", "e.argmax(0)", "s.argmax()", "s.argmax(0)",
    "torch.ones(3, 1).argmax(1)", "torch.ones(3, 1, dtype=torch.complex64).argmax(1)",
    "h.argmin(1)", "ft.argmax(0)",
    "torch.aminmax(f)", "torch.aminmax(f, dim=1)", "torch.aminmax(f, dim=-1, keepdim=True)",
    "torch.aminmax(nan, dim=1)", "torch.aminmax(nan)", "torch.aminmax(e, dim=0)",
    "torch.aminmax(s, dim=0)", "torch.aminmax(i)", "torch.aminmax(zs, dim=1)", "torch.aminmax(bb)",
    A + "_aminmax.default(f)", A + "_aminmax.dim(i, 1, True)",
    # any / all / count_nonzero
    "f.any()", "bb.all(1)", "bb.any((0, 1))", A + "any.dims(bb, [])", A + "all.dims(u, [])",
    A + "any.dims(bb, None, True)", "u.all()", "u.any(0)", "nan.all(1)", "c.any(1)", "e.all()",
    "e.any(1)", "e.all(0)", "s.all()", "i.all(1, keepdim=True)", "h.any(1)", "torch.all(si, 0)",
    "i.count_nonzero()", "i.count_nonzero(1)", "f.count_nonzero((0, 2))", "c.count_nonzero(0)",
    "e.count_nonzero(1)", "s.count_nonzero()", "nan.count_nonzero(0)",
    A + "count_nonzero.dim_IntList(bb, [])",
    # integer scans
    "i.cumsum(1)", "bb.cumsum(0)", "u.cumsum(0, dtype=torch.int8)", "f.cumsum(0, dtype=torch.int32)",
    "e.cumsum(1)", "si.cumsum(0)", "i.cumprod(1)", "ir.cumprod(1)",
    "f.cummax(1)", "nan.cummax(1)", "nan.cummin(0)", "i.cummax(1)", "i.cummin(1)", "bb.cummax(0)",
    "h.cummin(2)", "e.cummax(1)", "s.cummax(0)", "zs.cummax(1)", "zs.cummin(0)", "ft.cummin(1)",
    # sort (stable: indices exact) and friends
    "f.sort()", "f.sort(1, descending=True)", "nan.sort(dim=1, stable=True)",
    "nan.sort(dim=0, descending=True, stable=True)", "i.sort(dim=1, stable=True)",
    "i.sort(dim=1, descending=True, stable=True)", "h.sort(2)", "bf.sort(dim=0, stable=True)",
    "e.sort(1)", "s.sort()", "ft.sort(1)", "ft.sort(0, descending=True)", "zs.sort(dim=1, stable=True)",
    "torch.zeros(4).expand(3, 4).sort(1)", "torch.zeros(4, 1).expand(4, 3).sort(1)",
    "g.argsort(1)", "i.argsort(dim=1, stable=True)", "torch.argsort(nan, dim=0, descending=True, stable=True)",
    "torch.msort(f)", "torch.msort(ft)", A + "sort.stable(i, stable=True, dim=0)",
    # topk: both of upstream's algorithms, ties replayed
    "g.topk(3)", "g.topk(10, sorted=False)", "g.topk(10)", "g.topk(5, largest=False)",
    "g.topk(5, largest=False, sorted=False)", "f.topk(2, 1)", "f.topk(3, 0, largest=False, sorted=False)",
    "i.topk(5, 1)", "i.topk(30, 1, sorted=False)", "i.topk(3, 1, largest=False)", "i.topk(1)",
    "nan.topk(3, 1)", "nan.topk(3, 1, largest=False)", "nan.topk(9, 1, sorted=False)", "h.topk(2)",
    "f.topk(0)", "e.topk(0, 1)", "e.topk(2, 1)", "s.topk(1)", "u.topk(4)", "ir.topk(3)",
    "ir.topk(4, largest=False)", "ir.topk(100, sorted=False)", "zs.topk(2)", "ft.topk(2, 1)",
    # kthvalue, median, mode
    "f.kthvalue(2)", "f.kthvalue(3, 0, True)", "i.kthvalue(10, 1)", "nan.kthvalue(5, 1)",
    "nan.kthvalue(9, 1)", "h.kthvalue(1)", "ir.kthvalue(150, 1)", "s.kthvalue(1)", "ft.kthvalue(2, 2)",
    "i.kthvalue(40, 1)", "zs.kthvalue(2, 1)",
    "f.median()", "i.median()", "nan.median()", "nan.nanmedian()", "allnan.nanmedian()",
    "f.median(1)", "i.median(1)", "nan.median(1)", "nan.nanmedian(1)", "allnan.nanmedian(1)",
    "allnan.median(1)", "h.median(0, True)", "e.median()", "s.median(0)", "ei.median()",
    "ir.median(1)", "ft.nanmedian(0)", "nan9.nanmedian(1)", "nan9.nanmedian()",
    "i.mode(1)", "i.mode(0, True)", "f.mode(2)", "nan.mode(1)", "bb.mode(1)", "h.mode()",
    "ir.mode(1)", "s.mode()", "si.mode()",
    # unique
    "torch.unique(i)", "torch.unique(i, return_inverse=True, return_counts=True)",
    "torch.unique(nan, return_inverse=True, return_counts=True)", "torch.unique(bb, return_counts=True)",
    "torch.unique(u, sorted=False, return_inverse=True)", "torch.unique(h)",
    "torch.unique(s, return_inverse=True, return_counts=True)", "torch.unique(e)",
    "torch.unique(i2, dim=1, return_inverse=True, return_counts=True)", "torch.unique(i2, dim=0)",
    "torch.unique_consecutive(ic, return_inverse=True, return_counts=True)",
    "torch.unique_consecutive(i2.t(), dim=0, return_counts=True)", "torch.unique_consecutive(nan)",
    A + "_unique(i, True, True)", A + "_unique2(i)", A + "unique_consecutive(ic)",
    A + "unique_dim(e, 1)", A + "unique_dim_consecutive(i2, 1, True, True)", "torch.unique(u16)",
    # counting
    "idx.bincount()", "idx.bincount(minlength=10)", "ei.bincount(minlength=3)", "u.bincount()",
    "torch.argwhere(i[:, :5])", "i[:2, :6].nonzero(as_tuple=True)", "si.nonzero(as_tuple=True)",
    "torch.argwhere(s)",
    # out= and in-place spellings reach the same kernels
    "torch.cumsum(f, 1, out=torch.empty(4, 5, 6))",
    "torch.max(f, 1, out=(torch.empty(0), torch.empty(0, dtype=torch.long)))",
    "torch.sort(f, 1, out=(torch.empty(0), torch.empty(0, dtype=torch.long)))",
    "f.clone().cumsum_(1)",
)
# out=: the result dtype from out where upstream takes it from there; exact dtypes elsewhere
O = "torch.empty(0, dtype=torch.{})"
add("num", f"torch.sum(f, 1, out={O.format('float64')})", f"torch.mean(f, 0, out={O.format('float64')})",
    f"torch.var(f, 1, correction=1, out={O.format('float64')})",
    f"torch.cumsum(f, 1, out={O.format('float64')})", f"torch.prod(f, 1, out={O.format('float64')})",
    f"torch.nanmean(nan, 1, out={O.format('float32')})")
add("exact",
    f"torch.sum(f, 1, out={O.format('int64')})", f"torch.cumsum(f, 0, out={O.format('int64')})",
    f"torch.amin(f, 0, out={O.format('float64')})", f"torch.any(f, 1, out={O.format('uint8')})",
    f"torch.aminmax(f, dim=0, out=({O.format('float32')}, {O.format('float64')}))",
    f"torch.max(f, 0, out=({O.format('float32')}, {O.format('int32')}))",
    f"torch.argmax(f, 0, out={O.format('int32')})",
    f"torch.sort(f, 0, out=({O.format('float64')}, {O.format('long')}))",
    f"torch.topk(f, 2, out=({O.format('float32')}, {O.format('int32')}))",
    f"torch.cummax(f, 0, out=({O.format('float64')}, {O.format('long')}))",
    f"torch.kthvalue(f, 2, out=({O.format('float32')}, {O.format('int32')}))",
    f"torch.median(f, 0, out=({O.format('float32')}, {O.format('int32')}))",
    f"torch.nanmedian(f, 0, out=({O.format('float64')}, {O.format('long')}))",
    f"torch.mode(f, 0, out=({O.format('float32')}, {O.format('int32')}))",
    f"torch.all(f, out={O.format('float64')})", f"torch.logcumsumexp(f, 0, out={O.format('int32')})",
    f"torch.norm(f, 2, 0, out={O.format('float64')})",
    f"torch.linalg.vector_norm(f, out={O.format('float64')})", f"torch.mean(f, 0, out={O.format('int64')})",
    f"torch.mean(f, out={O.format('int64')})", f"torch.logsumexp(f, 0, out={O.format('int32')})",
    f"torch.histc(f, out={O.format('float64')})", f"torch.nansum(f, out={O.format('int64')})",
    f"torch.msort(f, out={O.format('float32')})",
)
add("ties", "i.sort(1)", "i.sort(0, descending=True)", "bb.sort(1)", "u.sort()", "nan.sort(1)",
    "nan.sort(0, descending=True)", "i.argsort(0)", "ir.sort(1)")

# errors: type and message exactly (evaluated as "exact" cases)
add("exact",
    "f.sum(3)", "f.sum((0, 0))", "f.sum((0, -3))", "i.mean()", "i.mean(dtype=torch.int64)",
    "c.nansum()", "i.nanmean()", "f.prod(3)", "e.amax(1)", "e.amax()", "c.amax()", "u16.amax()",
    "e.max()", "e.max(1)", "c.max(0)", "u16.max()", "u16.max(0)", "c.min()",
    "bb.argmax()", "c.argmax()", "e.argmax()", "e.argmax(1)", "u16.argmin()", "s.argmax(1)",
    "torch.aminmax(e)", "torch.aminmax(c)", "torch.aminmax(e, dim=1)",
    "i.var()", A + "var_mean.correction(i, [0])", A + "std.correction(bb)",
    "torch.linalg.vector_norm(i)", "torch.linalg.vector_norm(f, 2, dtype=torch.float16)",
    "torch.linalg.vector_norm(f, 2, dtype=torch.complex64)",
    "torch.linalg.vector_norm(c, 2, dtype=torch.float64)",
    "torch.linalg.vector_norm(f, 2, dtype=torch.int64)", f"torch.linalg.vector_norm(e, {INF})",
    "torch.linalg.vector_norm(e, -1, 1)", "torch.linalg.vector_norm(e, -0.5, (0, 1))",
    A + "norm.ScalarOpt_dim(i, 2, [1])", A + "norm.ScalarOpt_dim_dtype(f, 2, [1], False, dtype=torch.int64)",
    "i.count_nonzero((0, 0))", "u16.count_nonzero()", "f.logsumexp([])", "f.logsumexp(3)",
    "f.cumsum(3)", "f.cumsum(1, dtype=torch.bool)", "c.cummax(0)", "u16.cummin(0)",
    "i.logcumsumexp(1)", "f.logcumsumexp(5)",
    "c.sort()", "bb.topk(1)", "c.topk(1)", "f.topk(7)", "f.topk(-1)", "u16.topk(1)",
    "f.kthvalue(7)", "f.kthvalue(0)", "e.kthvalue(1, 1)", "bb.kthvalue(1)", "c.kthvalue(1)",
    "bb.median()", "c.median(0)", "e.median(1)", "e.nanmedian(1)", "u16.nanmedian()",
    "e.mode(1)", "c.mode()", "u16.mode()",
    "torch.unique(c)", A + "unique_dim(s, 0)", A + "unique_dim(e, 0)", A + "unique_dim(c, 0)",
    "i[0].bincount()", "f.bincount()", "idx.bincount(w[:3])", "idx.bincount(minlength=-1)",
    "i.view(-1)[:4].reshape(2, 2).bincount()",
    "i.histc()", "f.histc(0)", "f.histc(4, 2, 1)", "nan.histc()", "u16.histc()", "bb.histc()",
    "torch.tensor([1., float('inf')]).histc(3)",
)


# ------------------------------------------------------------------------------ running

@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    if not upstream.available():
        upstream.missing("upstream environment (.venv-upstream) not installed")
    d = tmp_path_factory.mktemp("reduction_golden")
    np.savez(d / "inputs.npz", **inputs())
    (d / "runner.py").write_text(RUNNER)
    (d / "cases.json").write_text(json.dumps(CASES))
    (d / "up.py").write_text(UPSTREAM)
    proc = upstream.run_script(d / "up.py", str(d / "runner.py"), str(d / "inputs.npz"),
                               str(d / "cases.json"), str(d / "out.npz"))
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    with np.load(d / "out.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return doc, arrays


_NS: dict = {}


def ours(expr):
    import torch

    if not _NS:
        exec(RUNNER, _NS)
        _NS["A"] = inputs()
    arrays: dict = {}
    return _NS["run"](torch, _NS["A"], expr, "base", arrays), arrays


def leaves(d, arrays):
    if d["T"] == "tensor":
        yield d, arrays[d["data"]]
    elif d["T"] == "seq":
        for x in d["v"]:
            yield from leaves(x, arrays)


def _finfo(dtype):
    real = {"complex64": "float32", "complex128": "float64", "bfloat16": None}.get(dtype, dtype)
    if real is None:
        return 2.0 ** -7, 2.0 ** -126
    fi = np.finfo(np.dtype(real))
    return float(fi.eps), float(fi.tiny)


def _real(a):
    a = np.asarray(a)
    return np.stack([a.real, a.imag], -1).astype(np.float64) if np.iscomplexobj(a) else \
        a.astype(np.float64)


def close_enough(dtype, u, o, high=None, narrow=None):
    """None if ``o`` (ours) agrees with ``u`` (upstream) by the module's rules, else why not."""
    eps, tiny = _finfo(dtype)
    u, o = _real(u), _real(o)
    for name, test in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
        if (test(u) != test(o)).any():
            return f"{name} positions differ"
    fin = np.isfinite(u)
    with np.errstate(invalid="ignore", over="ignore"):
        floor = FLOOR_ULPS * (eps * np.abs(u) + tiny)
        ok = np.abs(o - u) <= floor
        if high is not None:
            h = _real(high)
            ok |= np.abs(o - h) <= np.abs(u - h) + FLOOR_ULPS * (eps * np.abs(h) + tiny)
        if narrow is not None:  # float64: twice upstream's float32 error, in float64 ulps
            ratio = eps / float(np.finfo(np.float32).eps)
            ok |= np.abs(o - u) <= floor + 2 * ratio * np.abs(_real(narrow) - u)
    bad = fin & ~ok
    if bad.any():
        i = int(np.argmax(bad.ravel()))
        return f"{int(bad.sum())}/{bad.size} off, first at {i}: {o.ravel()[i]!r} vs {u.ravel()[i]!r}"
    return None


def _bits_equal(u, o):
    u, o = np.asarray(u), np.asarray(o)
    if u.dtype.kind in "fc":
        same = (u == o) | (np.isnan(u) & np.isnan(o))
        if u.dtype.kind == "f":
            same &= (np.signbit(u) == np.signbit(o)) | np.isnan(u)
        return bool(same.all())
    return np.array_equal(u, o)


def _tie_reason(x, up_vals, up_idx, o_vals, o_idx, dim):
    """sort/argsort with stable=False: any permutation ordering the values as upstream's does."""
    if not _bits_equal(up_vals, o_vals):
        return "sorted values differ"
    if not np.array_equal(np.sort(o_idx, axis=dim), np.sort(up_idx, axis=dim)):
        return "indices are not a permutation"
    if not _bits_equal(np.take_along_axis(x, o_idx, dim), up_vals):
        return "indices do not gather the sorted values"
    return None


def compare(expr, kind, r, golden_arrays, mine, mine_arrays):
    up = r["low"]
    assert mine["warn"] == up["warn"], f"warnings {mine['warn']} vs upstream {up['warn']}"
    if up["T"] == "exc" or mine["T"] == "exc":
        assert (mine["T"], mine.get("type"), mine.get("msg")) == \
            (up["T"], up.get("type"), up.get("msg"))
        return
    assert mine["T"] == up["T"]
    if up["T"] == "py":
        assert mine["v"] == up["v"]
    ul, ol = list(leaves(up, golden_arrays)), list(leaves(mine, mine_arrays))
    assert len(ul) == len(ol), f"{len(ol)} outputs vs {len(ul)}"
    hl = list(leaves(r["high"], golden_arrays)) if "high" in r else [(None, None)] * len(ul)
    nl = list(leaves(r["narrow"], golden_arrays)) if "narrow" in r else [(None, None)] * len(ul)
    for k, ((ud, ua), (od, oa), (_, ha), (_, na)) in enumerate(zip(ul, ol, hl, nl)):
        where = f"output {k}"
        assert (od["dtype"], od["shape"]) == (ud["dtype"], ud["shape"]), where
        if 0 not in ud["shape"]:
            assert od["stride"] == ud["stride"], f"{where}: strides {od['stride']} vs {ud['stride']}"
        if kind == "ties":
            continue
        if ud["dtype"] in ("bool",) or ud["dtype"].startswith(("int", "uint")) or kind == "exact":
            assert _bits_equal(ua, oa), f"{where}: {oa.ravel()[:8]} vs {ua.ravel()[:8]}"
        else:
            why = close_enough(ud["dtype"], ua, oa,
                               ha if ha is not None and ha.shape == ua.shape else None,
                               na if na is not None and na.shape == ua.shape else None)
            assert why is None, f"{where}: {why}"
    if kind == "ties":
        x = ours_input(expr)
        dim = sort_dim(expr, x.ndim)
        vals_u, idx_u = (ul[0][1], ul[1][1]) if len(ul) == 2 else (None, ul[0][1])
        vals_o, idx_o = (ol[0][1], ol[1][1]) if len(ol) == 2 else (None, ol[0][1])
        if vals_u is None:
            vals_u = np.take_along_axis(x, idx_u, dim)
            vals_o = np.take_along_axis(x, idx_o, dim)
        why = _tie_reason(x, vals_u, idx_u, vals_o, idx_o, dim)
        assert why is None, why


def ours_input(expr):
    name = expr.split(".")[0]
    if not _NS:
        ours("s.sum()")
    return _NS["A"][name]


def sort_dim(expr, ndim):
    m = re.search(r"\((?:dim=)?(-?\d)", expr)
    return int(m.group(1)) % ndim if m else ndim - 1


@pytest.mark.parametrize("expr,kind", CASES, ids=[e for e, _ in CASES])
def test_agrees_with_upstream(golden, expr, kind):
    doc, arrays = golden
    mine, mine_arrays = ours(expr)
    compare(expr, kind, doc[expr], arrays, mine, mine_arrays)


# ------------------------------------------------------------------------------ the rules can fail

def test_comparison_rejects_faults():
    u = np.array([1.0, -2.5, 3.25, 0.0], np.float32)
    high = u.astype(np.float64) + np.array([1e-8, 0, 0, 0])
    assert close_enough("float32", u, u.copy(), high) is None
    eps = np.finfo(np.float32).eps
    for bad in (u * (1 + 8 * eps), np.where(np.arange(4) == 3, 1e-30, u),
                np.where(np.arange(4) == 1, np.nan, u), u[::-1].copy()):
        assert close_enough("float32", u, bad.astype(np.float32), high) is not None
    assert not _bits_equal(np.array([0.0]), np.array([-0.0]))
    assert not _bits_equal(np.array([1, 2]), np.array([1, 3]))
    x = np.array([[3, 1, 3, 2]])
    vals, idx = np.array([[1, 2, 3, 3]]), np.array([[1, 3, 0, 2]])
    assert _tie_reason(x, vals, idx, vals, np.array([[1, 3, 2, 0]]), 1) is None
    assert _tie_reason(x, vals, idx, vals, np.array([[1, 3, 0, 0]]), 1) is not None
    assert _tie_reason(x, vals, idx, vals, np.array([[1, 0, 3, 2]]), 1) is not None
