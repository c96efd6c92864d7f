"""Batch rules for the matmul family and convolution (upstream's LinearAlgebraRules and
BatchRulesLinearAlgebra / BatchRulesConvolution): one BLAS call or one convolution computes
the batch."""

from __future__ import annotations

from ..dispatch.door import aten_dispatch
from .batching import at_front, batch_size, front, rule, unwrap, wrap


@rule("mm.default")
def mm(op, level, args, kwargs):
    import torch

    a, b = args[0], args[1]
    pa, pb = front(a, level), front(b, level)
    if pa is None and pb is None:
        return NotImplemented
    if pb is None:  # [B, n, k] @ [k, m]: one matrix product over the folded batch
        n, k = pa.shape[1], pa.shape[2]
        out = torch.mm(pa.reshape(-1, k), b).view(pa.shape[0], n, b.shape[1])
        return wrap(out, level, 0)
    if pa is None:  # [n, k] @ [B, k, m]
        return wrap(torch.matmul(a, pb), level, 0)
    return wrap(torch.bmm(pa, pb), level, 0)


@rule("bmm.default")
def bmm(op, level, args, kwargs):
    import torch

    a, b = args[0], args[1]
    n = batch_size(level)
    if unwrap(a, level)[1] is None and unwrap(b, level)[1] is None:
        return NotImplemented
    pa, pb = at_front(a, level, n), at_front(b, level, n)
    # the batch folds into bmm's own batch: one call, as upstream's rule makes
    out = torch.bmm(pa.reshape(-1, *pa.shape[2:]), pb.reshape(-1, *pb.shape[2:]))
    return wrap(out.view(n, -1, *out.shape[1:]), level, 0)


@rule("mv.default")
def mv(op, level, args, kwargs):
    import torch

    a, v = args[0], args[1]
    pa, pv = front(a, level), front(v, level)
    if pa is None and pv is None:
        return NotImplemented
    if pv is None:  # [B, n, k] @ [k]
        return wrap(torch.matmul(pa, v), level, 0)
    if pa is None:  # [n, k] @ [B, k] -> [B, n]
        return wrap(torch.mm(pv, a.t()), level, 0)
    return wrap(torch.matmul(pa, pv.unsqueeze(-1)).squeeze(-1), level, 0)


@rule("dot.default", "vdot.default")
def dot(op, level, args, kwargs):
    import torch

    a, b = args[0], args[1]
    pa, pb = front(a, level), front(b, level)
    if pa is None and pb is None:
        return NotImplemented
    if op.qualname == "aten::vdot":
        a, pa = a.conj(), (pa.conj() if pa is not None else None)
    if pb is None:
        return wrap(torch.mv(pa, b), level, 0)
    if pa is None:
        return wrap(torch.mv(pb, a), level, 0)
    return wrap(torch.matmul(pa.unsqueeze(-2), pb.unsqueeze(-1)).view(-1), level, 0)


@rule("addmm.default")
def addmm(op, level, args, kwargs):
    bias, a, b = args[0], args[1], args[2]
    beta = args[3] if len(args) > 3 else kwargs.get("beta", 1)
    alpha = args[4] if len(args) > 4 else kwargs.get("alpha", 1)
    if all(unwrap(t, level)[1] is None for t in (bias, a, b)):
        return NotImplemented
    import torch

    prod = torch.mm(a, b)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return (bias if beta == 1 else bias * beta) + prod


@rule("convolution.default")
def convolution(op, level, args, kwargs):
    """input [N, C, *], weight [O, C/g, *]: a batched input folds the batch into N; a batched
    weight (per-element weights) becomes B groups of one convolution."""
    (inp, weight, bias, stride, padding, dilation, transposed, output_padding,
     groups) = args[:9]
    pi, pw = front(inp, level), front(weight, level)
    pb = front(bias, level) if bias is not None else None
    if pi is None and pw is None and pb is None:
        return NotImplemented
    rest = (stride, padding, dilation, transposed, output_padding)
    n = batch_size(level)
    if pw is None and pb is None:
        if len(inp._size) == len(weight._size) - 1:  # unbatched-input form (C, *) per element
            out = aten_dispatch(op, (pi, weight, bias) + rest + (groups,), {})
            return wrap(out, level, 0)
        flat = pi.reshape(n * pi.shape[1], *pi.shape[2:])
        out = aten_dispatch(op, (flat, weight, bias) + rest + (groups,), {})
        return wrap(out.view(n, pi.shape[1], *out.shape[1:]), level, 0)
    if transposed or len(inp._size) != len(weight._size):
        return NotImplemented  # the per-element fallback
    pi = at_front(inp, level, n)  # [B, N, C, *]
    pw = at_front(weight, level, n)  # [B, O, C/g, *]
    batch, channels = pi.shape[1], pi.shape[2]
    x = pi.movedim(0, 1).reshape(batch, n * channels, *pi.shape[3:])
    w = pw.reshape(n * pw.shape[1], *pw.shape[2:])
    bb = None
    if bias is not None:
        bb = at_front(bias, level, n).reshape(-1)
    out = aten_dispatch(op, (x, w, bb) + rest + (groups * n,), {})
    out = out.view(batch, n, pw.shape[1], *out.shape[2:]).movedim(1, 0)
    return wrap(out, level, 0)
