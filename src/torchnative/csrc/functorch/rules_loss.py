"""Batch rules for nll_loss (what cross_entropy reaches) and its backward: the batch folds into
the loss's own N, computed once with reduction 'none' and reduced per batch element."""

from __future__ import annotations

from .batching import at_front, batch_size, rule, unwrap, wrap

_NONE, _MEAN, _SUM = 0, 1, 2


def _flat(self, target, level):
    """self as [B*N, C] and target as [B*N]; N is 1 for an unbatched-input (C,) call."""
    n = batch_size(level)
    sp = at_front(self, level, n)
    tp = at_front(target, level, n)
    classes = sp.shape[-1]
    return sp.reshape(-1, classes), tp.reshape(-1), n


def _picked_weight(weight, tp, ignore_index):
    import torch

    keep = tp != ignore_index
    safe = torch.where(keep, tp, torch.zeros_like(tp))
    w = weight.index_select(0, safe) if weight is not None else \
        torch.ones(tp.shape, dtype=torch.get_default_dtype() if weight is None else weight.dtype)
    return w * keep, safe


@rule("nll_loss_forward.default")
def nll_loss_forward(op, level, args, kwargs):
    import torch

    self, target, weight, reduction, ignore_index = args[:5]
    if weight is not None and unwrap(weight, level)[1] is not None:
        return NotImplemented
    if len(self._size) not in (1, 2):
        return NotImplemented
    s, t, n = _flat(self, target, level)
    out, _ = torch.ops.aten.nll_loss_forward.default(s, t, weight, _NONE, ignore_index)
    w, _ = _picked_weight(weight, t, ignore_index)
    w = w.to(out.dtype)
    if reduction == _NONE:
        shape = (n,) + tuple(self._size[:-1])
        return wrap(out.view(shape), level, 0), wrap(out.new_zeros((n,)), level, 0)
    total = w.view(n, -1).sum(1)
    summed = out.view(n, -1).sum(1)
    result = summed / total if reduction == _MEAN else summed
    return wrap(result, level, 0), wrap(total, level, 0)


@rule("nll_loss_backward.default")
def nll_loss_backward(op, level, args, kwargs):
    import torch

    grad, self, target, weight, reduction, ignore_index, total_weight = args[:7]
    if weight is not None and unwrap(weight, level)[1] is not None:
        return NotImplemented
    if len(self._size) not in (1, 2):
        return NotImplemented
    s, t, n = _flat(self, target, level)
    w, safe = _picked_weight(weight, t, ignore_index)
    g = at_front(grad, level, n)
    per = s.shape[0] // n
    if reduction == _NONE:
        coef = g.reshape(-1)
    else:
        if reduction == _MEAN:
            g = g / at_front(total_weight, level, n)
        coef = g.reshape(n, 1).expand(n, per).reshape(-1)
    values = (-(w.to(s.dtype)) * coef).unsqueeze(1)
    out = torch.zeros_like(s).scatter(1, safe.unsqueeze(1), values)
    return wrap(out.view((n,) + tuple(self._size)), level, 0)
